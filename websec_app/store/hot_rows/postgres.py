"""Prebuilt single-row reads on PostgreSQL, awaited on the event loop with psycopg's async connections.

The API's key lookups (`GET /api/verify-key`, `GET /api/usage`, and the key check of every Pro
request) went through a pooled SQLAlchemy connection in a worker thread: the thread hop, the pool's
pre-ping (`SELECT 1`) on checkout and its rollback on return made one indexed SELECT cost three round
trips and ~1 ms, and 50 polling clients got ~800 answers/s with a p99 of ~240 ms
(bench/api_bench.py --database-url). Here each statement is compiled once to psycopg's SQL text,
prepared on the server, and run in autocommit on a connection kept for these reads, so a read is one
round trip awaited on the event loop.

Connections belong to the event loop that opened them (an asyncio socket cannot move between loops):
each loop gets its own small set, at most `per_loop` connections, created on demand. A connection
that fails or is interrupted mid-query is closed, never reused. `close()` is synchronous so that
`Database.dispose()` can release everything, whichever loops are still alive. Rows come back as
psycopg returns them (bool, int, str), without SQLAlchemy's result processing.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from sqlalchemy import Engine

from .sqlite import AnySelect

#: Connections per event loop: enough to keep PostgreSQL busy on a small machine without taking a
#: large share of its `max_connections` (each API process has one loop).
DEFAULT_PER_LOOP = 8


class _LoopConnections:
    """The idle connections of one event loop and the slots bounding how many exist."""

    def __init__(self, per_loop: int) -> None:
        self.idle: list[AsyncConnection[Any]] = []
        self.slots = asyncio.Semaphore(per_loop)


class PgRows:
    """`await first(statement, params)`: the first row of a prebuilt SELECT as a tuple, or None."""

    def __init__(self, engine: Engine, per_loop: int = DEFAULT_PER_LOOP) -> None:
        if engine.dialect.name != "postgresql" or engine.dialect.driver != "psycopg":
            raise ValueError("PgRows needs a PostgreSQL engine with the psycopg driver")
        self._dialect = engine.dialect
        self._conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._per_loop = per_loop
        self._compiled: dict[AnySelect, str] = {}
        self._loops: dict[asyncio.AbstractEventLoop, _LoopConnections] = {}
        self._open: set[AsyncConnection[Any]] = set()
        self._lock = threading.Lock()

    async def first(self, statement: AnySelect, params: Mapping[str, Any]) -> Sequence[Any] | None:
        sql = self._compiled.get(statement) or self._compile(statement)
        async with self._connection() as connection:
            cursor = await connection.execute(sql, params, prepare=True)
            row: Sequence[Any] | None = await cursor.fetchone()
            return row

    def close(self) -> None:
        """Close every connection of every loop (synchronous: the loops may be gone)."""
        with self._lock:
            connections, self._open, self._loops = list(self._open), set(), {}
        for connection in connections:
            # What AsyncConnection.close() does, without needing the connection's event loop.
            connection.pgconn.finish()

    def _compile(self, statement: AnySelect) -> str:
        compiled = statement.compile(dialect=self._dialect)
        if compiled.positiontup:
            raise ValueError("expected named (pyformat) parameters from the psycopg dialect")
        self._compiled[statement] = sql = str(compiled)
        return sql

    def _for_this_loop(self) -> _LoopConnections:
        loop = asyncio.get_running_loop()
        connections = self._loops.get(loop)
        if connections is None:
            with self._lock:
                connections = self._loops.setdefault(loop, _LoopConnections(self._per_loop))
        return connections

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        pool = self._for_this_loop()
        async with pool.slots:
            connection = pool.idle.pop() if pool.idle else await self._connect()
            try:
                yield connection
            except BaseException:
                self._discard(connection)
                raise
            if connection.closed or connection.info.transaction_status != TransactionStatus.IDLE:
                self._discard(connection)
            else:
                pool.idle.append(connection)

    async def _connect(self) -> AsyncConnection[Any]:
        connection = await AsyncConnection.connect(self._conninfo, autocommit=True)
        with self._lock:
            self._open.add(connection)
        return connection

    def _discard(self, connection: AsyncConnection[Any]) -> None:
        with self._lock:
            self._open.discard(connection)
        connection.pgconn.finish()


__all__ = ["PgRows"]
