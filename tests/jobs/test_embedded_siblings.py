"""Several processes on one SQLite file (`serve-api --workers 2`, or two `make run`): each keeps its own
queue in memory, and each one's ticker sweeps the jobs a stopped process left open (`end_abandoned_jobs`).

A process is a Runtime here, as in test_local_queue.py: its own engine, queue, ticker and connections, on
the one database file, all on one service clock that the test moves. A sweep must leave alone the jobs a
live sibling holds, however long they wait there, and end those of a sibling that went silent, once it
has been silent long enough to be taken for gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from tests.api.fakes import FakeScanner, FrozenClock
from tests.clock import TEST_NOW
from websec_app.jobs.engine import SERVER_STOPPED, SERVER_STOPPED_STATUS
from websec_app.runtime import build_runtime
from websec_app.settings import Settings
from websec_app.store import Database, create_subscription, issue_api_key, models
from websec_app.store.hot_rows import scan_jobs as hot
from websec_app.store.models import (
    JOB_DONE,
    JOB_FAILED,
    JOB_QUEUED,
    JOB_RUNNING,
    FreeScanCounter,
    ScanJob,
)
from websec_app.store.quotas import monthly_scans_used
from websec_app.store.scan_jobs import new_job
from websec_app.usecases import authenticate
from websec_app.usecases.job_worker import end_abandoned_jobs
from websec_app.usecases.jobs import submit_scans, wait_budget

#: Generous: the steps below take milliseconds (a tick, a second); the bound only stops a hang.
STEP_TIMEOUT = 30.0
BATCH = ["a.example", "b.example", "c.example"]


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'websec.db'}"
    database = Database(url)
    database.ensure_schema()
    database.dispose()
    yield url


class Process:
    """One serve-api process on the shared file: its runtime, its scanner (whose scans wait for `gate`), and
    how many ticks its ticker has run."""

    def __init__(self, url: str, tmp_path: Path, clock: FrozenClock) -> None:
        self.database = Database(url)
        self.gate = asyncio.Event()
        self.scanner = FakeScanner(gate=self.gate)
        # A tick a second, so that the test sees a tick of the process after it moved the clock.
        settings = Settings(data_dir=tmp_path, scan_workers=1, monitor_tick_seconds=1)
        self.runtime = build_runtime(settings, database=self.database, scanner=self.scanner, clock=clock, bounded=False)
        self.ticks = 0

        async def tick() -> None:
            self.ticks += 1

        async def run(run_id: int) -> None:
            pass

        self.runtime.jobs.set_monitor_handlers(tick, run)

    async def next_whole_tick(self) -> None:
        """Until a tick has run from its start after now (its every step saw the clock as it is now)."""
        seen = self.ticks
        await _until(lambda: self.ticks >= seen + 2)

    async def close(self) -> None:
        await self.runtime.jobs.stop()
        self.database.dispose()


async def _until(done: Any) -> None:
    async with asyncio.timeout(STEP_TIMEOUT):
        while not done():
            await asyncio.sleep(0.01)


def _rows(url: str) -> dict[str, ScanJob]:
    database = Database(url)
    try:
        with database.session() as session:
            return {row.id: row for row in session.exec(select(ScanJob))}
    finally:
        database.dispose()


async def _batch(process: Process) -> tuple[int, list[str]]:
    """An async batch of three Pro scans queued in `process`: its subscription and the jobs' ids."""
    with process.database.session() as session:
        subscription = create_subscription(session, email="agency@example.com", now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW)
    owner = await authenticate(process.runtime, key.key)
    return subscription.id, (await submit_scans(process.runtime, owner, BATCH)).ids


def _left_by_a_dead_process(url: str) -> str:
    """A free scan's job whose process was killed outright before running it: nothing holds it anywhere."""
    database = Database(url)
    try:
        job = new_job(kind="free", url="https://a.test/", now=TEST_NOW, client="192.0.2.48")
        assert hot.reserve_free_job(database.engine, job, "192.0.2.48", TEST_NOW, 10) is not None
        return job.id
    finally:
        database.dispose()


async def test_a_sweep_leaves_the_jobs_a_live_sibling_process_holds(database_url: str, tmp_path: Path) -> None:
    # Given two processes on one SQLite file: the holding one has an async batch of three in its queue (its one
    # worker scanning the first, the others waiting their turn), and a job a killed process left open
    clock = FrozenClock(TEST_NOW)
    holding = Process(database_url, tmp_path, clock)
    # The sweeping process's ticker is not started: its sweep runs once, below. The test moves the clock a wait
    # budget at once, as real time never does; a tick of it between that jump and the sibling's next tick would
    # rightly find the sibling's lease run out.
    sweeping = Process(database_url, tmp_path, clock)
    stale = _left_by_a_dead_process(database_url)
    try:
        await holding.runtime.jobs.start()
        subscription_id, batch = await _batch(holding)
        await _until(lambda: len(holding.scanner.calls) == 1)

        # When a wait budget has gone by, the holding process ticking all along (alive), and the other sweeps
        clock.advance(seconds=wait_budget(sweeping.runtime) + 1)
        await holding.next_whole_tick()
        await end_abandoned_jobs(sweeping.runtime)

        # Then the job the killed process left is ended, its unit given back, and none of the live sibling's
        rows = _rows(database_url)
        assert (rows[stale].status, rows[stale].error_message) == (JOB_FAILED, SERVER_STOPPED)
        assert [rows[job_id].status for job_id in batch] == [JOB_RUNNING, JOB_QUEUED, JOB_QUEUED]
        with sweeping.database.session() as session:
            assert session.exec(select(FreeScanCounter)).one().used == 0

        # and the sibling runs its batch to its end: each scanned once, done, its three units kept
        holding.gate.set()
        await _until(lambda: all(_rows(database_url)[job_id].status == JOB_DONE for job_id in batch))
        assert sorted(holding.scanner.calls) == [f"https://{host}/" for host in BATCH]
        with sweeping.database.session() as session:
            assert monthly_scans_used(session, subscription_id, clock()) == len(BATCH)
        assert await end_abandoned_jobs(sweeping.runtime) == 0
    finally:
        await holding.close()
        await sweeping.close()


async def test_a_sweep_ends_the_jobs_of_a_sibling_killed_outright_once_it_has_been_silent_long_enough(
    database_url: str, tmp_path: Path
) -> None:
    # Given a process with an async batch in its queue, alive a wait budget after queueing it, then killed
    # outright: its tasks gone with it (no stop: nothing ended, its queue's lease left as its last tick set it)
    clock = FrozenClock(TEST_NOW)
    killed = Process(database_url, tmp_path, clock)
    sweeping = Process(database_url, tmp_path, clock)
    try:
        await killed.runtime.jobs.start()
        subscription_id, batch = await _batch(killed)
        await _until(lambda: len(killed.scanner.calls) == 1)
        clock.advance(seconds=wait_budget(sweeping.runtime) + 1)
        await killed.next_whole_tick()
        parts = killed.runtime.jobs._parts
        assert parts is not None and parts.worker is not None
        parts.worker.cancel()  # its workers and its ticker
        await asyncio.gather(parts.worker, return_exceptions=True)
        silent_for = killed.runtime.jobs.queue_gone_after  # the lease its last tick took
        assert silent_for == 60  # three ticks of a second, and never under a minute

        # When the other sweeps while the killed one has been silent for less than that: its jobs are left
        assert await end_abandoned_jobs(sweeping.runtime) == 0
        clock.advance(seconds=silent_for - 1)
        assert await end_abandoned_jobs(sweeping.runtime) == 0
        assert {_rows(database_url)[job_id].status for job_id in batch} == {JOB_RUNNING, JOB_QUEUED}

        # and then once it has been silent for longer
        clock.advance(seconds=2)
        assert await end_abandoned_jobs(sweeping.runtime) == len(BATCH)

        # Then its jobs are ended failed, their units given back, once
        rows = _rows(database_url)
        for job_id in batch:
            assert (rows[job_id].status, rows[job_id].error_status) == (JOB_FAILED, SERVER_STOPPED_STATUS)
        with sweeping.database.session() as session:
            assert monthly_scans_used(session, subscription_id, clock()) == 0
        assert await end_abandoned_jobs(sweeping.runtime) == 0
    finally:
        await killed.close()
        await sweeping.close()


async def test_a_tick_renews_the_queues_lease_on_the_service_clock_forgets_the_long_gone_and_stop_ends_it(
    database_url: str, tmp_path: Path
) -> None:
    # Given the leases of two queues whose processes stopped outright: one a few minutes ago, one a day ago
    clock = FrozenClock(TEST_NOW)
    process = Process(database_url, tmp_path, clock)
    queue_id = process.runtime.jobs.queue_id
    assert queue_id is not None
    recently, long_ago = "1" * 32, "2" * 32
    with process.database.session() as session:
        session.add(models.EmbeddedQueue(id=recently, alive_until=TEST_NOW - timedelta(minutes=5)))
        session.add(models.EmbeddedQueue(id=long_ago, alive_until=TEST_NOW - timedelta(days=1)))
        session.commit()
    try:
        # When a process's ticker ticks
        await process.runtime.jobs.start()
        await process.next_whole_tick()

        # Then its queue is alive until a lease past the service's time; the queue gone for a day is forgotten
        lease = timedelta(seconds=process.runtime.jobs.queue_gone_after)
        with process.database.session() as session:
            leases = {row.id: row.alive_until for row in session.exec(select(models.EmbeddedQueue))}
        assert leases == {queue_id: TEST_NOW + lease, recently: TEST_NOW - timedelta(minutes=5)}
    finally:
        # and when it stops, its lease goes with it
        await process.close()
    database = Database(database_url)
    try:
        with database.session() as session:
            assert [row.id for row in session.exec(select(models.EmbeddedQueue))] == [recently]
    finally:
        database.dispose()
