"""Prebuilt single-row reads on SQLite, run on the driver connection directly.

`GET /api/verify-key` and `GET /api/usage` are polled by clients, and each is one indexed SELECT.
Through SQLAlchemy that SELECT cost ~54 µs, of which SQLite itself took ~6: the rest was the pool
checkout and return (with its rollback), the execution context and the result wrapper, paid
again on every call. Here each statement is compiled once to SQL text, and each thread keeps one
pooled connection checked out for these reads, so a read is one `sqlite3` execute and fetch
(bench/api_bench.py). Outside a transaction every SELECT sees the latest commit (WAL), so a key
revoked by another process is refused on its next use, as before.

Rows come back as the driver returns them, without SQLAlchemy's result processing: only statements
whose columns SQLite returns as they are stored (integers, text; booleans as 0/1) belong here.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping
from typing import Any, TypeAlias

from sqlalchemy import Engine, Select
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import PoolProxiedConnection

#: Any prebuilt SELECT, whatever its column types.
AnySelect: TypeAlias = "Select[*tuple[Any, ...]]"


class SqliteRows:
    """`await first(statement, params)`: the first row of a prebuilt SELECT as a tuple, or None.

    Awaitable like `hot_rows.postgres.PgRows.first`, but it runs right away on the caller's thread (the event loop):
    ~6 µs in-process is less than any hand-off to a worker thread, and WAL readers never wait for writers
    (https://sqlite.org/wal.html).
    """

    def __init__(self, engine: Engine) -> None:
        if engine.dialect.name != "sqlite" or engine.dialect.paramstyle != "qmark":
            raise ValueError("SqliteRows needs a SQLite engine with qmark parameters")
        self._engine = engine
        self._compiled: dict[AnySelect, tuple[str, tuple[str, ...]]] = {}
        self._connections: dict[int, PoolProxiedConnection] = {}
        self._lock = threading.Lock()

    async def first(self, statement: AnySelect, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        sql, names = self._compiled.get(statement) or self._compile(statement)
        thread = threading.get_ident()
        pooled = self._connections.get(thread) or self._check_out(thread)
        try:
            row: tuple[Any, ...] | None = self._driver(pooled).execute(sql, [params[n] for n in names]).fetchone()
        except sqlite3.Error:
            self._discard(thread)  # a broken connection is not reused
            raise
        return row

    def close(self) -> None:
        """Give every held connection back to the pool (before the engine is disposed)."""
        with self._lock:
            held, self._connections = list(self._connections.values()), {}
        for pooled in held:
            pooled.close()

    def _compile(self, statement: AnySelect) -> tuple[str, tuple[str, ...]]:
        compiled = statement.compile(dialect=self._engine.dialect)
        entry = (str(compiled), tuple(compiled.positiontup or ()))
        self._compiled[statement] = entry
        return entry

    def _check_out(self, thread: int) -> PoolProxiedConnection:
        pooled = self._engine.raw_connection()
        with self._lock:
            self._connections[thread] = pooled
        return pooled

    def _discard(self, thread: int) -> None:
        with self._lock:
            pooled = self._connections.pop(thread, None)
        if pooled is not None:
            pooled.invalidate()

    @staticmethod
    def _driver(pooled: PoolProxiedConnection) -> DBAPIConnection:
        driver = pooled.driver_connection
        if driver is None:  # pragma: no cover - a checked-out connection has one
            raise sqlite3.InterfaceError("the pooled SQLite connection is closed")
        return driver  # type: ignore[no-any-return]


__all__ = ["SqliteRows"]
