"""SqliteRows: prebuilt reads on SQLite's driver connection (websec_app/store/sqlite_rows.py)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import bindparam, select

from websec_app.store import (
    Database,
    check_api_key,
    check_api_key_with_usage,
    create_subscription,
    issue_api_key,
    reserve_monthly_scan,
    revoke_api_key,
)
from websec_app.store.models import ApiKey
from websec_app.store.sqlite_rows import SqliteRows

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
_PREFIX_OF = select(ApiKey.prefix).where(ApiKey.id == bindparam("key_id"))


def _key(database: Database, email: str = "rows@example.com") -> tuple[str, int]:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=NOW)
        assert subscription.id is not None
        issued = issue_api_key(session, subscription.id, NOW)
    return issued.key, issued.subscription_id


def test_the_sqlite_reader_is_the_prebuilt_one_and_gives_the_same_answers_as_a_session(database: Database) -> None:
    key, subscription_id = _key(database)
    with database.session() as session:
        reserve_monthly_scan(session, subscription_id, NOW, 50)
        expected = check_api_key_with_usage(session, key, NOW)

    with database.reader() as reader:
        assert isinstance(reader, SqliteRows)
        assert check_api_key_with_usage(reader, key, NOW) == expected
        assert check_api_key(reader, key) == expected[0]
    assert expected[0].valid and expected[1] == 1


def test_a_commit_from_another_connection_is_seen_by_the_next_read(database: Database) -> None:
    key, subscription_id = _key(database)
    with database.reader() as reader:
        assert check_api_key_with_usage(reader, key, NOW) == (check_api_key(reader, key), 0)
        assert check_api_key(reader, key).valid

    with database.session() as session:
        reserve_monthly_scan(session, subscription_id, NOW, 50)
        revoke_api_key(session, key, NOW)

    with database.reader() as reader:
        check, used = check_api_key_with_usage(reader, key, NOW)
    assert not check.valid and check.status == "revoked" and used == 1


def test_each_thread_reads_on_its_own_connection(database: Database) -> None:
    key, _ = _key(database)
    rows = SqliteRows(database.engine)
    seen: list[int] = []
    all_reading = threading.Barrier(4)  # alive together: a dead thread's ident (and connection) is reused

    def read() -> None:
        assert check_api_key(rows, key).valid
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


def test_a_failed_read_drops_its_connection_and_the_next_one_starts_fresh(database: Database) -> None:
    key, _ = _key(database)
    rows = SqliteRows(database.engine)
    assert rows.first(_PREFIX_OF, {"key_id": 1}) == (key[:8],)
    held = rows._connections[threading.get_ident()]

    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys RENAME TO api_keys_moved")
    with pytest.raises(sqlite3.OperationalError):
        rows.first(_PREFIX_OF, {"key_id": 1})
    assert threading.get_ident() not in rows._connections

    with database.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE api_keys_moved RENAME TO api_keys")
    assert rows.first(_PREFIX_OF, {"key_id": 1}) == (key[:8],)
    assert rows._connections[threading.get_ident()] is not held
    rows.close()


def test_only_sqlite_engines_are_accepted(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    engine = create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(ValueError, match="SQLite"):
        SqliteRows(engine)
