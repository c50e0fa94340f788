"""Database fixtures shared by tests/api and tests/store (each conftest imports them).

`database` is SQLite in a temporary directory; `any_database` runs a test once on SQLite
and once on the throwaway PostgreSQL of `tests/pg_server.py` (marked `postgres`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_server import get_server
from websec_app.store import Database


def _open(url: str) -> Iterator[Database]:
    database = Database(url)
    database.ensure_schema()
    try:
        yield database
    finally:
        database.dispose()


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    yield from _open(f"sqlite:///{tmp_path / 'websec.db'}")


@pytest.fixture
def postgres_database() -> Iterator[Database]:
    yield from _open(get_server().migrated_database())


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        yield from _open(f"sqlite:///{tmp_path / 'websec.db'}")
    else:
        yield from _open(get_server().migrated_database())
