"""The API's hot reader (`Database.hot_rows()`): prebuilt key lookups on SQLite and on PostgreSQL.

SQLite: `store.hot_rows.SqliteRows`, run in-process on a per-thread driver connection.
PostgreSQL: `store.hot_rows.PgRows`, awaited on psycopg async connections kept per event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import bindparam, create_engine, select

from websec_app.store import (
    Database,
    check_api_key,
    create_subscription,
    issue_api_key,
    look_up_api_key,
    reserve_monthly_scan,
    revoke_api_key,
)
from websec_app.store.hot_rows import PgRows, SqliteRows
from websec_app.store.models import ApiKey

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
_PREFIX_OF = select(ApiKey.prefix).where(ApiKey.id == bindparam("key_id"))


def _key(database: Database, email: str = "rows@example.com") -> tuple[str, int]:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=NOW)
        assert subscription.id is not None
        issued = issue_api_key(session, subscription.id, NOW)
    return issued.key, issued.subscription_id


async def test_the_hot_reader_gives_the_same_answers_as_a_session(any_database: Database) -> None:
    key, subscription_id = _key(any_database)
    with any_database.session() as session:
        reserve_monthly_scan(session, subscription_id, NOW, 50)
        expected = check_api_key(session, key)
    rows = any_database.hot_rows()

    assert isinstance(rows, SqliteRows if any_database.engine.dialect.name == "sqlite" else PgRows)
    assert await look_up_api_key(rows, key, NOW) == (expected, 1)
    assert await look_up_api_key(rows, key) == (expected, 0)
    assert expected.valid
    unknown = await look_up_api_key(rows, "wsk_unknown", NOW)
    assert unknown[0].status == "unknown" and unknown[1] == 0


async def test_a_commit_from_another_connection_is_seen_by_the_next_read(any_database: Database) -> None:
    # Given a key just read through the hot reader (which keeps its connection between reads)
    key, subscription_id = _key(any_database)
    rows = any_database.hot_rows()
    assert (await look_up_api_key(rows, key, NOW))[0].valid

    # When another connection counts a scan and revokes the key
    with any_database.session() as session:
        reserve_monthly_scan(session, subscription_id, NOW, 50)
        revoke_api_key(session, key, NOW)

    # Then the very next read sees both
    check, used = await look_up_api_key(rows, key, NOW)
    assert check.status == "revoked" and used == 1


def test_sqlite_each_live_thread_reads_on_its_own_connection(database: Database) -> None:
    key, _ = _key(database)
    rows = SqliteRows(database.engine)
    seen: list[int] = []
    all_reading = threading.Barrier(4)  # alive together: a dead thread's ident (and connection) is reused

    def read() -> None:
        assert asyncio.run(rows.first(_PREFIX_OF, {"key_id": 1})) == (key[:8],)
        seen.append(id(rows._connections[threading.get_ident()]))
        all_reading.wait(timeout=10)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    read()
    for thread in threads:
        thread.join()

    assert len(set(seen)) == 4
    rows.close()
    assert rows._connections == {}


def test_sqlite_a_failed_read_drops_its_connection_and_the_next_one_starts_fresh(database: Database) -> None:
    key, _ = _key(database)
    rows = SqliteRows(database.engine)
    assert asyncio.run(rows.first(_PREFIX_OF, {"key_id": 1})) == (key[:8],)
    held = rows._connections[threading.get_ident()]

    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys RENAME TO api_keys_moved")
    with pytest.raises(sqlite3.OperationalError):
        asyncio.run(rows.first(_PREFIX_OF, {"key_id": 1}))
    assert threading.get_ident() not in rows._connections

    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys_moved RENAME TO api_keys")
    assert asyncio.run(rows.first(_PREFIX_OF, {"key_id": 1})) == (key[:8],)
    assert rows._connections[threading.get_ident()] is not held
    rows.close()


@pytest.mark.postgres
async def test_postgres_concurrent_reads_share_a_bounded_set_of_connections(postgres_database: Database) -> None:
    key, _ = _key(postgres_database)
    rows = PgRows(postgres_database.engine, per_loop=3)

    answers = await asyncio.gather(*(rows.first(_PREFIX_OF, {"key_id": 1}) for _ in range(40)))

    assert answers == [(key[:8],)] * 40
    assert 1 <= len(rows._open) <= 3
    rows.close()
    assert rows._open == set()


@pytest.mark.postgres
async def test_postgres_a_failed_read_closes_its_connection_and_the_next_one_starts_fresh(
    postgres_database: Database,
) -> None:
    key, _ = _key(postgres_database)
    rows = PgRows(postgres_database.engine, per_loop=1)
    assert await rows.first(_PREFIX_OF, {"key_id": 1}) == (key[:8],)
    (held,) = rows._open

    with postgres_database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys RENAME TO api_keys_moved")
    with pytest.raises(psycopg.errors.UndefinedTable):
        await rows.first(_PREFIX_OF, {"key_id": 1})
    assert held.closed and rows._open == set()

    with postgres_database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys_moved RENAME TO api_keys")
    assert await rows.first(_PREFIX_OF, {"key_id": 1}) == (key[:8],)
    rows.close()


@pytest.mark.postgres
def test_postgres_each_event_loop_gets_its_own_connections_and_close_ends_them_all(
    postgres_database: Database,
) -> None:
    key, _ = _key(postgres_database)
    rows = PgRows(postgres_database.engine)

    for _ in range(2):  # two loops, one after the other (as the tests' loops come and go)
        assert asyncio.run(rows.first(_PREFIX_OF, {"key_id": 1})) == (key[:8],)

    opened = set(rows._open)
    assert len(opened) == 2 and len(rows._loops) == 2
    rows.close()
    assert all(connection.closed for connection in opened)


def test_the_readers_refuse_the_other_kind_of_database(database: Database) -> None:
    with pytest.raises(ValueError, match="SQLite"):
        SqliteRows(create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none"))
    with pytest.raises(ValueError, match="PostgreSQL"):
        PgRows(database.engine)
