"""The suite's own hygiene (tests/conftest.py `pytest_runtest_call`): a job engine that a test leaves running
is stopped when the test's body ends, on its loop, before any fixture is torn down, so its workers
unregister while the test's database is still open, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests import db_fixtures
from tests.job_rows import registered_workers
from websec_app.jobs.engine import JobEngine
from websec_app.store import Database

any_database = db_fixtures.any_database


@pytest.fixture
def left_running(any_database: Database) -> Iterator[JobEngine]:
    engine = JobEngine(any_database, in_process_workers=1)
    yield engine
    # Then, by the time this fixture (and the database's) is torn down, the engine has stopped: its worker
    # is unregistered, through the database that is still open
    assert engine._parts is None  # noqa: SLF001 - whether it is open is the point
    assert registered_workers(any_database) == 0


async def test_an_engine_a_test_leaves_running_is_stopped_before_its_fixtures_end(
    left_running: JobEngine, any_database: Database
) -> None:
    # Given an engine whose worker is running and registered, left so by the test
    await left_running.start()
    for _ in range(100):
        if registered_workers(any_database):
            break
        await asyncio.sleep(0.05)
    assert registered_workers(any_database) == 1
