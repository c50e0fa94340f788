"""The store's one fast path: prebuilt single-row reads that bypass SQLAlchemy's ORM and pool.

Why: `GET /api/verify-key` and `GET /api/usage` are polled by clients, and the key check runs on every Pro
request. Through SQLAlchemy one indexed SELECT cost ~54 µs on SQLite (the engine's own work ~6 µs) and three
round trips on PostgreSQL (pre-ping, query, rollback); these readers make it one driver call, and bought the
API benchmark's target, p99 under 20 ms with 50 polling clients on two cores (`python -m bench.api_bench`,
figures in docs/performance.md). `tests/store/test_hot_rows.py` holds them to the same answers as a session.

`Database.hot_rows()` gives the reader of its kind: `await rows.first(statement, params)`.
"""

from .postgres import PgRows
from .sqlite import AnySelect, SqliteRows

#: The API's hot reader for prebuilt statements, one per kind of database.
HotRows = SqliteRows | PgRows

__all__ = ["AnySelect", "HotRows", "PgRows", "SqliteRows"]
