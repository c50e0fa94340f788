"""Several processes on one SQLite file (`serve-api --workers 2`, or two `make run`): each keeps its own
queue in memory, and each one's ticker sweeps the jobs a stopped process left open (`end_abandoned_jobs`).

A process is a Runtime here, as in test_local_queue.py: its own engine, queue, ticker and connections, on
the one database file. Each has its service clock (which dates the jobs), which the test moves, and all
read the one machine's clock (which the queues' leases are on), which the test moves apart. A sweep must
leave alone the jobs a live sibling holds, however long they wait there and whatever its service clock
says, and end those of a sibling that went silent, once it has been silent long enough to be taken for gone.
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
from tests.clock import TEST_NOW, MachineClockAt
from websec_app.jobs.engine import LONGEST_LEASE_SECONDS, SERVER_STOPPED, SERVER_STOPPED_STATUS
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
#: The machine's own clock, which needs not agree with any process's service clock.
MACHINE_NOW = TEST_NOW + timedelta(days=3, hours=5, seconds=17)


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'websec.db'}"
    database = Database(url)
    database.ensure_schema()
    database.dispose()
    yield url


class Process:
    """One serve-api process on the shared file: its runtime, on its service clock and the machine's, its
    scanner (whose scans wait for `gate`), and how many ticks its ticker has run (a tick waits in its last
    step, the monitor tick, while `ticking` is clear)."""

    def __init__(self, url: str, tmp_path: Path, clock: FrozenClock, machine: MachineClockAt) -> None:
        self.database = Database(url)
        self.gate = asyncio.Event()
        self.scanner = FakeScanner(gate=self.gate)
        # A tick a second, so that the test sees a tick of the process after it moved the clock.
        settings = Settings(data_dir=tmp_path, scan_workers=1, monitor_tick_seconds=1)
        self.runtime = build_runtime(settings, database=self.database, scanner=self.scanner, clock=clock, bounded=False)
        self.runtime.jobs.machine_clock = machine
        self.ticks = 0
        self.ticking = asyncio.Event()
        self.ticking.set()

        async def tick() -> None:
            self.ticks += 1
            await self.ticking.wait()

        async def run(run_id: int) -> None:
            pass

        self.runtime.jobs.set_monitor_handlers(tick, run)

    async def next_whole_tick(self) -> None:
        """Until a tick has run from its start after now (its every step saw the clock as it is now)."""
        seen = self.ticks
        await _until(lambda: self.ticks >= seen + 2)

    async def hold_ticks(self) -> None:
        """Until a tick has renewed the queue's lease and waits in its monitor tick: no tick after it until
        `release_ticks`."""
        self.ticking.clear()
        seen = self.ticks
        await _until(lambda: self.ticks > seen)

    def release_ticks(self) -> None:
        self.ticking.set()

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
    clock, machine = FrozenClock(TEST_NOW), MachineClockAt(MACHINE_NOW)
    holding = Process(database_url, tmp_path, clock, machine)
    # The sweeping process's ticker is not started: its sweep runs once, below.
    sweeping = Process(database_url, tmp_path, clock, machine)
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
    clock, machine = FrozenClock(TEST_NOW), MachineClockAt(MACHINE_NOW)
    killed = Process(database_url, tmp_path, clock, machine)
    sweeping = Process(database_url, tmp_path, clock, machine)
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
        machine.advance(seconds=silent_for - 1)
        assert await end_abandoned_jobs(sweeping.runtime) == 0
        assert {_rows(database_url)[job_id].status for job_id in batch} == {JOB_RUNNING, JOB_QUEUED}

        # and then once it has been silent for longer
        machine.advance(seconds=2)
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


async def test_a_process_whose_service_clock_runs_ahead_leaves_the_jobs_a_live_sibling_holds(
    database_url: str, tmp_path: Path
) -> None:
    # Given `make run` and `serve-api` on one var/ with the same WEBSEC_CLOCK_START, the sweeping one started
    # longer ago than a wait budget and a lease (each service clock starts at that instant when its process
    # starts), on one machine; the holding one has an async batch in its queue and ticks
    machine = MachineClockAt(MACHINE_NOW)
    holding = Process(database_url, tmp_path, FrozenClock(TEST_NOW), machine)
    ahead = timedelta(seconds=wait_budget(holding.runtime) + LONGEST_LEASE_SECONDS + 60)
    sweeping = Process(database_url, tmp_path, FrozenClock(TEST_NOW + ahead), machine)
    try:
        await holding.runtime.jobs.start()
        subscription_id, batch = await _batch(holding)
        await _until(lambda: len(holding.scanner.calls) == 1)
        await holding.next_whole_tick()

        # When the other sweeps: the batch is a wait budget old on its service clock
        ended = await end_abandoned_jobs(sweeping.runtime)

        # Then none of the live sibling's jobs is ended
        assert ended == 0
        assert [_rows(database_url)[job_id].status for job_id in batch] == [JOB_RUNNING, JOB_QUEUED, JOB_QUEUED]

        # and when the holding one is killed outright, they are ended once its lease has run out on the machine
        parts = holding.runtime.jobs._parts
        assert parts is not None and parts.worker is not None
        parts.worker.cancel()
        await asyncio.gather(parts.worker, return_exceptions=True)
        assert await end_abandoned_jobs(sweeping.runtime) == 0
        machine.advance(seconds=holding.runtime.jobs.queue_gone_after + 1)
        assert await end_abandoned_jobs(sweeping.runtime) == len(BATCH)
        with sweeping.database.session() as session:
            assert monthly_scans_used(session, subscription_id, TEST_NOW) == 0
    finally:
        await holding.close()
        await sweeping.close()


async def test_a_forward_step_of_the_machines_clock_does_not_end_the_jobs_a_live_sibling_holds(
    database_url: str, tmp_path: Path
) -> None:
    # Given two processes on one SQLite file, the holding one with an async batch in its queue; the other has
    # swept since the holding one's last tick, which renewed its lease, and its ticker is not due yet
    clock, machine = FrozenClock(TEST_NOW), MachineClockAt(MACHINE_NOW)
    holding = Process(database_url, tmp_path, clock, machine)
    sweeping = Process(database_url, tmp_path, clock, machine)
    try:
        await holding.runtime.jobs.start()
        subscription_id, batch = await _batch(holding)
        await _until(lambda: len(holding.scanner.calls) == 1)
        await holding.hold_ticks()
        assert await end_abandoned_jobs(sweeping.runtime) == 0

        # When the system clock steps an hour forward (a laptop resumed, NTP setting the time): the service's
        # clock and the machine's, not its monotonic clock; and the other sweeps before the holding one ticks
        step = wait_budget(sweeping.runtime) + 3600
        clock.advance(seconds=step)
        machine.step(seconds=step)
        ended = await end_abandoned_jobs(sweeping.runtime)

        # Then none of the live sibling's jobs is ended
        assert ended == 0
        assert [_rows(database_url)[job_id].status for job_id in batch] == [JOB_RUNNING, JOB_QUEUED, JOB_QUEUED]

        # nor later, the holding one ticking on the new time, once every lease was renewed since the step
        holding.release_ticks()
        machine.advance(seconds=LONGEST_LEASE_SECONDS + 1)
        await holding.next_whole_tick()
        assert await end_abandoned_jobs(sweeping.runtime) == 0

        # and the holding one runs its batch to its end: each scanned once, done, its three units kept
        holding.gate.set()
        await _until(lambda: all(_rows(database_url)[job_id].status == JOB_DONE for job_id in batch))
        assert sorted(holding.scanner.calls) == [f"https://{host}/" for host in BATCH]
        with sweeping.database.session() as session:
            assert monthly_scans_used(session, subscription_id, clock()) == len(BATCH)
    finally:
        holding.release_ticks()
        await holding.close()
        await sweeping.close()


def _leases(url: str) -> dict[str, Any]:
    database = Database(url)
    try:
        with database.session() as session:
            return {row.id: row.alive_until for row in session.exec(select(models.EmbeddedQueue))}
    finally:
        database.dispose()


async def test_a_process_takes_its_queues_lease_when_it_starts_before_it_serves(
    database_url: str, tmp_path: Path
) -> None:
    # Given a process on a SQLite file
    process = Process(database_url, tmp_path, FrozenClock(TEST_NOW), MachineClockAt(MACHINE_NOW))
    queue_id = process.runtime.jobs.queue_id
    assert queue_id is not None
    try:
        # When it starts (serve-api's lifespan, then it serves)
        await process.runtime.jobs.start()

        # Then its queue's lease is taken already, before its ticker's first tick: a job it queues at once is
        # never without one (a sibling's sweep would judge it by its age, on a service clock that may run ahead)
        lease = timedelta(seconds=process.runtime.jobs.queue_gone_after)
        assert _leases(database_url) == {queue_id: MACHINE_NOW + lease}
    finally:
        await process.close()


async def test_a_tick_renews_the_queues_lease_on_the_machines_clock_forgets_the_long_gone_and_stop_ends_it(
    database_url: str, tmp_path: Path
) -> None:
    # Given the leases of two queues whose processes stopped outright: one a few minutes ago, one a day ago
    machine = MachineClockAt(MACHINE_NOW)
    process = Process(database_url, tmp_path, FrozenClock(TEST_NOW), machine)
    queue_id = process.runtime.jobs.queue_id
    assert queue_id is not None
    recently, long_ago = "1" * 32, "2" * 32
    with process.database.session() as session:
        session.add(models.EmbeddedQueue(id=recently, alive_until=MACHINE_NOW - timedelta(minutes=5)))
        session.add(models.EmbeddedQueue(id=long_ago, alive_until=MACHINE_NOW - timedelta(days=1)))
        session.commit()
    try:
        # When a process's ticker ticks, some time after it started
        await process.runtime.jobs.start()
        machine.advance(seconds=30)
        await process.next_whole_tick()

        # Then its queue is alive until a lease past the machine's time (not the service's); the queue gone
        # for a day is forgotten
        lease = timedelta(seconds=process.runtime.jobs.queue_gone_after)
        expected = {queue_id: MACHINE_NOW + timedelta(seconds=30) + lease, recently: MACHINE_NOW - timedelta(minutes=5)}
        assert _leases(database_url) == expected
    finally:
        # and when it stops, its lease goes with it
        await process.close()
    assert list(_leases(database_url)) == [recently]
