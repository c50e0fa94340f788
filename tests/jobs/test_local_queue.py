"""The embedded engine's own queue (SQLite: `LocalQueue`, no procrastinate) and the job path's prebuilt
transactions (store/hot_rows/scan_jobs.py).

Embedded: scans run on this process's workers, a request that submitted with its waiter needs no read of
the row to wait, callbacks are retried with backoff until they pass, monitor runs go through the queue,
and the monitor tick runs when the workers start. The prebuilt transactions keep the ORM path's
guarantees: under concurrent reservations exactly the allowance is taken, each taken unit has its job
row (and no job row exists without its unit), and a job ends once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from tests import db_fixtures
from tests.api.fakes import FakeScanner, FrozenClock
from tests.clock import TEST_NOW
from tests.pg_server import get_server
from websec_app.jobs.engine import SERVER_STOPPED, SERVER_STOPPED_STATUS, JobEngine
from websec_app.runtime import build_runtime
from websec_app.settings import Settings
from websec_app.store import Database, create_subscription, issue_api_key
from websec_app.store.hot_rows import scan_jobs as hot
from websec_app.store.models import JOB_DONE, JOB_FAILED, JOB_QUEUED, JOB_RUNNING, FreeScanCounter, ScanJob, ScanRecord
from websec_app.store.scan_jobs import finish_done, finish_failed, new_job
from websec_app.store.scans import record_scan
from websec_app.usecases import authenticate
from websec_app.usecases.job_worker import end_abandoned_jobs
from websec_app.usecases.jobs import submit_scans, wait_budget

any_database = db_fixtures.any_database
#: Generous: the steps below take milliseconds; the bound only stops a broken engine from hanging the run.
STEP_TIMEOUT = 30.0


@pytest.fixture
def sqlite_database(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'websec.db'}")
    database.ensure_schema()
    yield database
    database.dispose()


class Recorder:
    """Handlers for the engine that record what ran; the callback fails its first `callback_failures` calls."""

    def __init__(self, callback_failures: int = 0) -> None:
        self.scans: list[str] = []
        self.callbacks: list[str] = []
        self.ticks = 0
        self.runs: list[int] = []
        self.sweeps = 0
        self.prunes = 0
        self.callback_failures = callback_failures
        self.changed = asyncio.Event()

    async def scan(self, job_id: str) -> None:
        self.scans.append(job_id)
        self.changed.set()

    async def callback(self, job_id: str) -> None:
        self.callbacks.append(job_id)
        self.changed.set()
        if len(self.callbacks) <= self.callback_failures:
            raise RuntimeError("the receiver answered 500")

    async def tick(self) -> None:
        self.ticks += 1
        self.changed.set()

    async def run(self, run_id: int) -> None:
        self.runs.append(run_id)
        self.changed.set()

    async def sweep(self) -> None:
        self.sweeps += 1
        self.changed.set()

    async def prune(self) -> None:
        self.prunes += 1
        self.changed.set()

    async def until(self, done: Any) -> None:
        async with asyncio.timeout(STEP_TIMEOUT):
            while not done():
                self.changed.clear()
                await self.changed.wait()


def _engine(database: Database, recorder: Recorder) -> JobEngine:
    engine = JobEngine(database, in_process_workers=2, monitor_tick_seconds=60)
    engine.set_handlers(recorder.scan, recorder.callback)
    engine.set_monitor_handlers(recorder.tick, recorder.run)
    engine.set_upkeep(sweep=recorder.sweep, prune=recorder.prune)
    engine.callback_first_retry_seconds = 0.01
    return engine


async def test_embedded_engine_queues_in_memory_and_ticks_monitors_at_start(sqlite_database: Database) -> None:
    recorder = Recorder()
    engine = _engine(sqlite_database, recorder)
    assert not engine.distributed

    await engine.start()
    await recorder.until(lambda: recorder.ticks >= 1)  # the tick runs when the workers start
    assert recorder.sweeps >= 1  # and the sweep of abandoned jobs before it
    assert recorder.prunes >= 1  # and the deletion of expired ones

    await engine.submit_monitor_run(7)
    await recorder.until(lambda: recorder.runs == [7])


async def test_a_waiter_registered_at_submit_is_woken_without_reading_the_row(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    engine = _engine(sqlite_database, recorder)
    reads: list[str] = []
    db = engine._db

    async def recording_db(work: Any, *args: Any) -> Any:
        reads.append(work.__name__)
        return await db(work, *args)

    monkeypatch.setattr(engine, "_db", recording_db)

    await engine.submit("job-1", waiter=True)
    assert await engine.wait("job-1", STEP_TIMEOUT)
    assert await engine.wait("job-1", STEP_TIMEOUT)  # a watched request waits again: still ended
    engine.forget("job-1")

    assert recorder.scans == ["job-1"]
    assert "ended_jobs" not in reads
    parts = engine._parts
    assert parts is not None and not parts.waiters and not parts.registered  # nothing left behind


async def test_embedded_callbacks_are_retried_until_the_receiver_takes_them(sqlite_database: Database) -> None:
    recorder = Recorder(callback_failures=2)
    engine = _engine(sqlite_database, recorder)

    await engine.submit_callback("job-2")
    await recorder.until(lambda: len(recorder.callbacks) == 3)

    assert recorder.callbacks == ["job-2"] * 3


async def test_stopping_the_embedded_engine_ends_its_open_jobs_and_gives_their_units_back(
    sqlite_database: Database,
) -> None:
    # Given one worker, a job that ran to its end, one running (its scan never ends) and one queued behind it
    client = "192.0.2.44"
    ids = []
    for _ in range(3):
        job = hot.reserve_free_job(sqlite_database.engine, _job(client), client, TEST_NOW, 10)
        assert job is not None
        ids.append(job.id)
    finished, running, queued = ids
    started = asyncio.Event()

    async def scan(job_id: str) -> None:
        if job_id == running:
            hot.claim_job(sqlite_database.engine, job_id, TEST_NOW)
            started.set()
            await asyncio.Event().wait()

    engine = JobEngine(sqlite_database, in_process_workers=1)
    engine.set_handlers(scan, Recorder().callback)
    for job_id in ids:
        await engine.submit(job_id)
    async with asyncio.timeout(STEP_TIMEOUT):
        await started.wait()

    # When the app shuts down
    async with asyncio.timeout(STEP_TIMEOUT):
        await engine.stop()

    # Then the two open jobs are ended failed with their units back; the one that ran is not touched
    with sqlite_database.session() as session:
        rows = {row.id: row for row in session.exec(select(ScanJob))}
        counter = session.exec(select(FreeScanCounter)).one()
    assert rows[finished].status == JOB_QUEUED  # its handler returned: its end was its own to make
    for job_id in (running, queued):
        assert rows[job_id].status == JOB_FAILED
        assert (rows[job_id].error_status, rows[job_id].error_message) == (SERVER_STOPPED_STATUS, SERVER_STOPPED)
    assert counter.used == 1


async def test_stopping_says_nothing_of_open_jobs_when_the_jobs_it_held_had_ended_their_rows(
    sqlite_database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a job whose row already ended (failed) while its task was still running, cancelled by the stop
    client = "192.0.2.45"
    job = hot.reserve_free_job(sqlite_database.engine, _job(client), client, TEST_NOW, 10)
    assert job is not None
    ended_row = asyncio.Event()

    async def scan(job_id: str) -> None:
        with sqlite_database.session() as session:
            assert finish_failed(session, job_id, TEST_NOW, 504, "timed out", callback_owed_at=TEST_NOW)
            session.commit()
        ended_row.set()
        await asyncio.Event().wait()

    engine = JobEngine(sqlite_database, in_process_workers=1)
    engine.set_handlers(scan, Recorder().callback)
    await engine.submit(job.id)
    async with asyncio.timeout(STEP_TIMEOUT):
        await ended_row.wait()

    # When the app shuts down
    with caplog.at_level("WARNING", logger="websec_app.jobs.engine"):
        async with asyncio.timeout(STEP_TIMEOUT):
            await engine.stop()

    # Then the row keeps its own end, and the log does not claim a stop ended open jobs ("0 job(s)")
    with sqlite_database.session() as session:
        row = session.exec(select(ScanJob)).one()
    assert (row.status, row.error_status) == (JOB_FAILED, 504)
    assert not [r for r in caplog.records if "stopped with" in r.getMessage()]


async def test_the_sweep_ends_the_jobs_a_stopped_process_left_open_and_gives_their_units_back(
    sqlite_database: Database, scan_settings: Settings
) -> None:
    # Given jobs a process killed outright left open a wait budget ago, and jobs younger or ended
    runtime = build_runtime(scan_settings, database=sqlite_database, clock=lambda: TEST_NOW)
    budget = timedelta(seconds=wait_budget(runtime))
    client = "192.0.2.45"

    def reserve(created: datetime) -> str:
        job = new_job(kind="free", url="https://a.test/", now=created, client=client)
        assert hot.reserve_free_job(sqlite_database.engine, job, client, TEST_NOW, 10) is not None
        return job.id

    old_queued, old_running, old_done = (reserve(TEST_NOW - budget - timedelta(seconds=1)) for _ in range(3))
    young = reserve(TEST_NOW - budget + timedelta(seconds=5))
    hot.claim_job(sqlite_database.engine, old_running, TEST_NOW)
    with sqlite_database.session() as session:
        assert finish_done(session, old_done, TEST_NOW, {"grade": "A"}, None)
        session.commit()

    # When the embedded ticker sweeps
    ended = await end_abandoned_jobs(runtime)

    # Then the two old open jobs are ended failed with their units back; the others are untouched
    assert ended == 2
    with sqlite_database.session() as session:
        rows = {row.id: row for row in session.exec(select(ScanJob))}
        counter = session.exec(select(FreeScanCounter)).one()
    for job_id in (old_queued, old_running):
        assert (rows[job_id].status, rows[job_id].error_status) == (JOB_FAILED, SERVER_STOPPED_STATUS)
    assert (rows[old_done].status, rows[young].status) == (JOB_DONE, JOB_QUEUED)
    assert counter.used == 2
    assert await end_abandoned_jobs(runtime) == 0  # once


def _rows(database: Database) -> dict[str, ScanJob]:
    with database.session() as session:
        return {row.id: row for row in session.exec(select(ScanJob))}


async def _until(done: Any) -> None:
    async with asyncio.timeout(STEP_TIMEOUT):
        while not done():
            await asyncio.sleep(0.01)


async def test_the_sweep_leaves_the_jobs_this_process_holds_however_long_they_wait(
    sqlite_database: Database, tmp_path: Path
) -> None:
    # Given one worker whose scan hangs, an async batch of three (one running, two queued behind it), and a
    # job a process killed outright left open (its queue died with it)
    clock = FrozenClock(TEST_NOW)
    scanner = FakeScanner(gate=asyncio.Event())
    settings = Settings(data_dir=tmp_path, scan_workers=1)
    runtime = build_runtime(settings, database=sqlite_database, scanner=scanner, clock=clock, bounded=False)
    stale = hot.reserve_free_job(sqlite_database.engine, _job("192.0.2.46"), "192.0.2.46", TEST_NOW, 10)
    assert stale is not None
    with sqlite_database.session() as session:
        subscription = create_subscription(session, email="agency@example.com", now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW)
    owner = await authenticate(runtime, key.key)
    try:
        batch = (await submit_scans(runtime, owner, ["a.example", "b.example", "c.example"])).ids
        await _until(lambda: len(scanner.calls) == 1)

        # When the sweep runs a wait budget later (nobody waits on an async job: they may wait that long)
        clock.advance(seconds=wait_budget(runtime) + 1)
        await end_abandoned_jobs(runtime)

        # Then it ends the job the stopped process left, its unit given back, and none of the batch's
        rows = _rows(sqlite_database)
        assert (rows[stale.id].status, rows[stale.id].error_message) == (JOB_FAILED, SERVER_STOPPED)
        assert [rows[job_id].status for job_id in batch] == [JOB_RUNNING, JOB_QUEUED, JOB_QUEUED]
        with sqlite_database.session() as session:
            assert session.exec(select(FreeScanCounter)).one().used == 0

        # and the batch's scans all end done, each scanned once
        scanner.gate.set()
        await _until(lambda: all(row.status == JOB_DONE for row in _rows(sqlite_database).values() if row.id in batch))
        assert sorted(scanner.calls) == ["https://a.example/", "https://b.example/", "https://c.example/"]
        assert await end_abandoned_jobs(runtime) == 0
    finally:
        await runtime.jobs.stop()


async def test_the_sweep_ends_a_job_whose_task_here_failed_with_its_row_open(
    sqlite_database: Database, tmp_path: Path
) -> None:
    # Given a job of this process whose task raised after starting it (its row left running, no task holds it)
    clock = FrozenClock(TEST_NOW)
    runtime = build_runtime(Settings(data_dir=tmp_path, scan_workers=1), database=sqlite_database, clock=clock)
    tried = asyncio.Event()

    async def broken(job_id: str) -> None:
        hot.claim_job(sqlite_database.engine, job_id, TEST_NOW)
        tried.set()
        raise RuntimeError("the database went away")

    runtime.jobs.set_handlers(broken, Recorder().callback)
    job = hot.reserve_free_job(sqlite_database.engine, _job("192.0.2.47"), "192.0.2.47", TEST_NOW, 10)
    assert job is not None
    try:
        await runtime.jobs.submit(job.id)
        async with asyncio.timeout(STEP_TIMEOUT):
            await tried.wait()
        await _until(lambda: job.id not in runtime.jobs.held_jobs())

        # When the sweep runs a wait budget later
        clock.advance(seconds=wait_budget(runtime) + 1)
        await end_abandoned_jobs(runtime)

        # Then the job is ended failed with its unit given back: nothing here would ever end it
        row = _rows(sqlite_database)[job.id]
        assert (row.status, row.error_status) == (JOB_FAILED, SERVER_STOPPED_STATUS)
        with sqlite_database.session() as session:
            assert session.exec(select(FreeScanCounter)).one().used == 0
    finally:
        await runtime.jobs.stop()


def _job(client: str) -> ScanJob:
    return new_job(kind="free", url="https://a.test/", now=TEST_NOW, options={"include_fix": False}, client=client)


def test_concurrent_free_reservations_take_exactly_the_allowance_each_with_its_job(any_database: Database) -> None:
    # Given an allowance of 25 and 8 threads asking 10 times each at once
    limit, threads, each = 25, 8, 10
    start = threading.Barrier(threads)
    taken: list[str] = []
    refused = 0
    lock = threading.Lock()

    def ask() -> None:
        nonlocal refused
        start.wait()
        for _ in range(each):
            job = hot.reserve_free_job(any_database.engine, _job("203.0.113.9"), "203.0.113.9", TEST_NOW, limit)
            with lock:
                if job is None:
                    refused += 1
                else:
                    taken.append(job.id)

    workers = [threading.Thread(target=ask) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    # Then exactly the allowance is taken, every unit held by one job row, and nothing else written
    assert len(taken) == limit and refused == threads * each - limit
    with any_database.session() as session:
        counter = session.exec(select(FreeScanCounter)).one()
        rows = session.exec(select(ScanJob)).all()
    assert counter.used == limit
    assert sorted(row.id for row in rows) == sorted(taken)
    assert sorted(row.reservation["used"] for row in rows if row.reservation) == list(range(1, limit + 1))


def test_a_job_ends_once_with_its_history_entry(any_database: Database) -> None:
    job = hot.reserve_free_job(any_database.engine, _job("198.51.100.7"), "198.51.100.7", TEST_NOW, 5)
    assert job is not None
    now = TEST_NOW
    claimed = hot.claim_job(any_database.engine, job.id, now)
    assert claimed is not None and claimed.status == JOB_RUNNING and claimed.attempts == 1
    assert claimed.reservation == job.reservation and claimed.options == {"include_fix": False}

    def history() -> ScanRecord:
        return hot.history_row(
            lambda session: record_scan(
                session,
                kind="free",
                url=job.url,
                final_url=job.url,
                grade="A+",
                score=100,
                algorithm_version="test",
                now=TEST_NOW,
                client="198.51.100.7",
                commit=False,
            )
        )

    body = {"grade": "A+", "score": 100}
    assert hot.end_done_with_history(any_database.engine, job.id, now, body, None, history())
    assert not hot.end_done_with_history(any_database.engine, job.id, now, body, None, history())
    assert hot.claim_job(any_database.engine, job.id, now) is None
    with any_database.session() as session:
        # ended: nothing given back
        assert not finish_failed(session, job.id, now, 503, "too late", callback_owed_at=now)
        row = session.get(ScanJob, job.id)
        records = session.exec(select(ScanRecord)).all()
        counter = session.exec(select(FreeScanCounter)).one()
    assert row is not None and row.status == JOB_DONE and row.result == body
    assert [(record.client, record.grade) for record in records] == [("198.51.100.7", "A+")]
    assert counter.used == 1


@pytest.mark.postgres
async def test_on_postgresql_the_deletion_of_expired_jobs_runs_with_the_clusters_monitor_tick() -> None:
    # Given an engine on PostgreSQL (procrastinate's queue), its worker in this process
    database = Database(get_server().migrated_database())
    database.ensure_schema()
    recorder = Recorder()
    engine = _engine(database, recorder)
    assert engine.distributed
    try:
        # When its worker starts, then the monitor tick's latest tick is deferred and run, deletion first
        await engine.start()
        await recorder.until(lambda: recorder.prunes >= 1 and recorder.ticks >= 1)
    finally:
        await engine.stop()
        database.dispose()
    assert recorder.sweeps == 0  # the embedded sweep is not PostgreSQL's: its queue outlives a process
