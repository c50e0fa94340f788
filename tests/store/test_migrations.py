"""Alembic owns the schema: the models match the migrations, and start-up upgrades keep the data."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from tests.pg_server import get_server
from websec_app.store import (
    Database,
    check_api_key,
    create_subscription,
    current_revision,
    issue_api_key,
    upgrade_schema,
)
from websec_app.store.database import alembic_config, normalise_url
from websec_app.store.models import metadata
from websec_app.store.scan_jobs import store_owns

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_the_models_match_the_migrations(any_database: Database) -> None:
    with any_database.engine.connect() as connection:
        # (procrastinate's tables, created by migration 0006 on PostgreSQL, are the task engine's, not models)
        context = MigrationContext.configure(connection, opts={"include_name": store_owns})
        differences = compare_metadata(context, metadata)

    assert differences == []


def test_a_restart_keeps_the_data(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'websec.db'}"
    first = Database(url)
    with first.session() as session:
        subscription_id = create_subscription(session, email="keep@example.com", now=NOW).id
        assert subscription_id is not None
        key = issue_api_key(session, subscription_id, NOW).key
    first.dispose()

    second = Database(url)  # a new process after an upgrade: migrations run again at start-up
    with second.session() as session:
        assert check_api_key(session, key).valid
    assert current_revision(second.engine) == HEAD
    second.dispose()


def test_the_migrations_go_down_and_up_again(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'cycle.db'}")
    upgrade_schema(engine)
    config = alembic_config()
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
        connection.commit()
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}

    upgrade_schema(engine)

    assert set(metadata.tables) <= set(inspect(engine).get_table_names())
    engine.dispose()


def _start_together(databases: list[Database]) -> list[Exception]:
    barrier = threading.Barrier(len(databases))
    errors: list[Exception] = []

    def start(database: Database) -> None:
        barrier.wait()
        try:
            database.ensure_schema()
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(db,)) for db in databases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for database in databases:
        database.dispose()
    return errors


def test_workers_starting_together_on_sqlite_migrate_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"

    assert _start_together([Database(url) for _ in range(4)]) == []


@pytest.mark.postgres
def test_workers_starting_together_on_postgresql_migrate_once() -> None:
    url = get_server().create_database()  # empty: no template

    assert _start_together([Database(url) for _ in range(4)]) == []


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("postgres://u:p@db/websec", "postgresql+psycopg://u:p@db/websec"),
        ("postgresql://u@db/websec", "postgresql+psycopg://u@db/websec"),
        ("postgresql+psycopg://u@db/websec", "postgresql+psycopg://u@db/websec"),
        ("sqlite:///var/websec.db", "sqlite:///var/websec.db"),
    ],
)
def test_libpq_style_urls_use_psycopg(given: str, used: str) -> None:
    assert normalise_url(given) == used
