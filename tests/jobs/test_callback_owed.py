"""A job's callback survives the worker that ended the job (issue 16: callbacks retried with backoff; the
async scans' callbacks are delivered at least once).

A worker killed between a job's end and queueing its callback is simulated by raising at that exact point
(the task engine's `submit_callback`); what runs after it is what the engine runs after a crash: the retried
copy of the job's task (procrastinate's `retry_stalled` on PostgreSQL) or, embedded (the queue died with the
process), the upkeep before each monitor tick. The engine's queue is replaced by a recorder, so the store's
side runs on SQLite and on PostgreSQL alike; the engine's own bookkeeping is tested at the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests import db_fixtures
from tests.api.fakes import NOON, FakeScanner, FrozenClock
from websec_app.jobs.engine import JobEngine
from websec_app.runtime import build_runtime
from websec_app.settings import Settings
from websec_app.store import Database, create_subscription, issue_api_key
from websec_app.store.hot_rows import scan_jobs as hot
from websec_app.store.models import JOB_DONE, JOB_FAILED, ScanJob
from websec_app.store.scan_jobs import callbacks_owed, find_job, new_job
from websec_app.usecases import authenticate, job_worker
from websec_app.usecases.job_worker import (
    CALLBACK_REDELIVER_AFTER_SECONDS,
    call_back,
    callback_given_up,
    end_abandoned_jobs,
    execute_job,
    redeliver_owed_callbacks,
)
from websec_app.usecases.jobs import _reserve_batch, wait_budget
from websec_app.usecases.runtime import Runtime

any_database = db_fixtures.any_database
sqlite_database = db_fixtures.database
postgres_database = db_fixtures.postgres_database
STEP_TIMEOUT = 30.0


class WorkerKilled(BaseException):
    """Stands in for SIGKILL: nothing after the point it is raised at runs."""


class Queue:
    """The engine's callback queue, recorded: what was queued, and what a queued task still carries."""

    def __init__(self) -> None:
        self.submitted: list[str] = []
        self.carried: set[str] = set()

    async def submit_callback(self, job_id: str) -> None:
        self.submitted.append(job_id)

    async def queued_callbacks(self) -> set[str]:
        return set(self.carried)


async def _killed(job_id: str) -> None:
    raise WorkerKilled(f"the worker died before queueing the callback of {job_id}")


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(NOON)


@pytest.fixture
def scanner() -> FakeScanner:
    return FakeScanner()


@pytest.fixture
def runtime(any_database: Database, tmp_path: Path, clock: FrozenClock, scanner: FakeScanner) -> Iterator[Runtime]:
    settings = Settings(data_dir=tmp_path, callback_secret="test-callback-secret", scan_workers=0)
    yield build_runtime(settings, database=any_database, scanner=scanner, clock=clock, bounded=False)


async def _job_with_callback(runtime: Runtime, url: str = "https://site.example/") -> str:
    with runtime.database.session() as session:
        subscription = create_subscription(session, email="agency@example.com", now=NOON)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, NOON)
    owner = await authenticate(runtime, key.key)
    [job_id], _ = await runtime.db(_reserve_batch, [url], owner, NOON, {"callback_url": "https://hooks.example/h"})
    return str(job_id)


async def _ended_without_its_callback_queued(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Queue]:
    """A job whose worker was killed right after committing its end, before queueing its callback."""
    job_id = await _job_with_callback(runtime)
    monkeypatch.setattr(runtime.jobs, "submit_callback", _killed)
    with pytest.raises(WorkerKilled):
        await execute_job(runtime, job_id)
    queue = Queue()
    monkeypatch.setattr(runtime.jobs, "submit_callback", queue.submit_callback)
    monkeypatch.setattr(runtime.jobs, "queued_callbacks", queue.queued_callbacks)
    return job_id, queue


def _row(runtime: Runtime, job_id: str) -> ScanJob:
    with runtime.database.session() as session:
        row = find_job(session, job_id)
    assert row is not None
    return row


async def test_the_retried_copy_of_a_job_killed_after_its_end_queues_the_callback(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job whose worker died after the job ended done, before its callback was queued
    job_id, queue = await _ended_without_its_callback_queued(runtime, monkeypatch)
    assert _row(runtime, job_id).status == JOB_DONE

    # When the engine runs the job's task again (retry_stalled)
    await execute_job(runtime, job_id)

    # Then the callback is queued, once: a further copy finds it carried by a queued task
    assert queue.submitted == [job_id]
    queue.carried.add(job_id)
    await execute_job(runtime, job_id)
    assert queue.submitted == [job_id]


async def test_the_upkeep_queues_again_a_callback_owed_a_while_that_no_task_carries(
    runtime: Runtime, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job killed after its end, and no retried copy of its task (embedded: the queue died with it)
    job_id, queue = await _ended_without_its_callback_queued(runtime, monkeypatch)

    # When the upkeep runs soon after, nothing is queued (its callback may still be on its way)
    clock.advance(minutes=1)
    assert await redeliver_owed_callbacks(runtime) == 0

    # When it runs once the callback has been owed longer than a delivery's whole life
    clock.advance(seconds=CALLBACK_REDELIVER_AFTER_SECONDS)
    assert await redeliver_owed_callbacks(runtime) == 1

    # Then the callback is queued, once: the next upkeeps leave it to the task now carrying it
    assert queue.submitted == [job_id]
    assert await redeliver_owed_callbacks(runtime) == 0
    queue.carried.add(job_id)
    clock.advance(seconds=CALLBACK_REDELIVER_AFTER_SECONDS + 60)
    assert await redeliver_owed_callbacks(runtime) == 0
    assert queue.submitted == [job_id]


async def test_a_callback_taken_by_its_receiver_or_given_up_is_no_longer_owed(
    runtime: Runtime, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two jobs that owe their callbacks
    taken_id, queue = await _ended_without_its_callback_queued(runtime, monkeypatch)
    refused_id = await _job_with_callback(runtime, "https://other.example/")
    await execute_job(runtime, refused_id)
    assert _row(runtime, refused_id).callback_owed_at is not None

    # When one receiver answers 204, and the other refuses every attempt until the engine gives up
    answer = 204

    async def receiver(url: str, body: bytes, signature: str, settings: Settings) -> int:
        return answer

    monkeypatch.setattr(job_worker, "deliver", receiver)
    await call_back(runtime, taken_id)
    answer = 500
    with pytest.raises(job_worker.CallbackRefused):
        await call_back(runtime, refused_id)
    assert _row(runtime, refused_id).callback_owed_at is not None  # a failed attempt is retried: still owed
    await callback_given_up(runtime, refused_id)

    # Then neither is owed, and the upkeep queues neither again
    assert _row(runtime, taken_id).callback_owed_at is None
    assert _row(runtime, refused_id).callback_owed_at is None
    clock.advance(seconds=CALLBACK_REDELIVER_AFTER_SECONDS + 60)
    assert await redeliver_owed_callbacks(runtime) == 0
    assert queue.submitted == [refused_id]  # queued normally at its end; never again


async def test_a_job_failed_with_a_callback_owes_it_and_a_free_scan_owes_nothing(
    runtime: Runtime, any_database: Database, scanner: FakeScanner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job with a callback whose scan fails (its worker then killed before queueing the callback)
    job_id = await _job_with_callback(runtime, "https://down.example/")
    scanner.crash = RuntimeError("the scanner broke")
    monkeypatch.setattr(runtime.jobs, "submit_callback", _killed)
    with pytest.raises(WorkerKilled):
        await execute_job(runtime, job_id)
    scanner.crash = None

    # And a free scan that ends done through the prebuilt end (no callback)
    free = hot.reserve_free_job(
        any_database.engine, new_job(kind="free", url="https://free.example/", now=NOON), "192.0.2.7", NOON, 10
    )
    assert free is not None
    await execute_job(runtime, free.id)

    # Then the failed job owes its callback, committed with its end; the free scan owes none
    assert _row(runtime, job_id).status == JOB_FAILED
    assert _row(runtime, job_id).callback_owed_at == NOON
    assert _row(runtime, free.id).status == JOB_DONE
    assert _row(runtime, free.id).callback_owed_at is None
    with any_database.session() as session:
        assert callbacks_owed(session, NOON + timedelta(days=1), 10) == [job_id]


def test_a_free_scan_end_is_the_same_prebuilt_statement() -> None:
    # The hot path (issue 14): a job without a callback ends with the statement it always did; only a job
    # with a callback pays for the owed column.
    assert "callback_owed_at" not in str(hot._END_DONE)
    assert "callback_owed_at" in str(hot._END_DONE_OWING_CALLBACK)


async def test_a_retried_copy_of_an_ended_job_without_a_callback_writes_nothing(
    runtime: Runtime, any_database: Database
) -> None:
    # Given a free scan that ended (done), and a second copy of its task run (a retry, or a waiter gone)
    from sqlalchemy import event

    free = hot.reserve_free_job(
        any_database.engine, new_job(kind="free", url="https://free.example/", now=NOON), "192.0.2.7", NOON, 10
    )
    assert free is not None
    await execute_job(runtime, free.id)
    statements: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement.lstrip().split()[0].upper())

    event.listen(any_database.engine, "before_cursor_execute", seen)
    try:
        await execute_job(runtime, free.id)
    finally:
        event.remove(any_database.engine, "before_cursor_execute", seen)

    # Then past the claim (one conditional UPDATE, matching nothing) it only reads: it owes no callback. No second
    # write transaction on SQLite while the service sheds load, when withdrawn free scans are common
    assert statements[:1] == ["UPDATE"]
    assert statements[1:] and all(kind == "SELECT" for kind in statements[1:]), statements


# --- the embedded engine's own bookkeeping ------------------------------------------------------------------


async def test_the_embedded_engine_knows_which_callbacks_it_carries_and_says_when_it_gives_up(
    sqlite_database: Database,
) -> None:
    # Given the embedded engine, a receiver that refuses twice then takes the callback, and one that never does
    calls: list[str] = []
    given_up: list[str] = []
    done = asyncio.Event()

    async def callback(job_id: str) -> None:
        calls.append(job_id)
        if job_id == "never" or calls.count(job_id) <= 2:
            raise RuntimeError("the receiver answered 500")

    async def gave_up(job_id: str) -> None:
        given_up.append(job_id)
        done.set()

    async def scan(job_id: str) -> None:
        pass

    engine = JobEngine(sqlite_database, in_process_workers=1)
    engine.set_handlers(scan, callback, gave_up)
    engine.callback_first_retry_seconds = 0.01
    try:
        # When both callbacks are queued
        await engine.submit_callback("taken")
        await engine.submit_callback("never")
        assert await engine.queued_callbacks() == {"taken", "never"}
        async with asyncio.timeout(STEP_TIMEOUT):
            await done.wait()

        # Then the taken one was delivered on its third attempt, the other given up after its last, and
        # neither is carried any more
        from websec_app.jobs.engine import CALLBACK_ATTEMPTS

        assert calls.count("taken") == 3
        assert calls.count("never") == CALLBACK_ATTEMPTS
        assert given_up == ["never"]
        assert await engine.queued_callbacks() == set()
    finally:
        await engine.stop()


@pytest.mark.postgres
async def test_on_postgresql_a_queued_callback_is_seen_by_the_cluster_and_its_last_failure_given_up(
    postgres_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the PostgreSQL engine (procrastinate), callbacks given 2 attempts in all (as the embedded queue counts
    # them: procrastinate's max_attempts counts the retries), and a receiver that never takes one
    from websec_app.jobs import engine as engine_module

    monkeypatch.setattr(engine_module, "CALLBACK_ATTEMPTS", 2)
    calls: list[str] = []
    given_up: list[str] = []

    async def callback(job_id: str) -> None:
        calls.append(job_id)
        raise RuntimeError("the receiver answered 500")

    async def gave_up(job_id: str) -> None:
        given_up.append(job_id)

    async def scan(job_id: str) -> None:
        pass

    engine = JobEngine(postgres_database, in_process_workers=0)
    engine.set_handlers(scan, callback, gave_up)
    try:
        # When a callback is queued, it is carried in procrastinate's table, seen by any process
        await engine.submit_callback("job-pg")
        assert await engine.queued_callbacks() == {"job-pg"}

        # When a worker runs it: it fails, is retried, fails again and is given up
        worker = asyncio.create_task(engine.run_worker(1))
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                while "job-pg" in await engine.queued_callbacks():
                    await asyncio.sleep(0.1)
        finally:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)

        # Then the engine said so once, after the last attempt only
        assert calls == ["job-pg", "job-pg"]
        assert given_up == ["job-pg"]
    finally:
        await engine.stop()


async def test_a_callback_owed_by_a_job_the_sweep_ended_is_dated_on_the_service_clock(
    runtime: Runtime, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job with a callback whose process stopped outright before running it (embedded: the queue died)
    job_id = await _job_with_callback(runtime)
    queue = Queue()
    monkeypatch.setattr(runtime.jobs, "submit_callback", queue.submit_callback)
    monkeypatch.setattr(runtime.jobs, "queued_callbacks", queue.queued_callbacks)

    # When the sweep of abandoned jobs ends it, a wait budget later on the service's clock
    clock.advance(seconds=wait_budget(runtime) + 1)
    assert await end_abandoned_jobs(runtime) == 1

    # Then the callback it owes is owed from that moment of the service's clock (the one the upkeep reads), and
    # the upkeep queues it once it has been owed a delivery's whole life: not never, not at once
    owed = _row(runtime, job_id).callback_owed_at
    assert owed is not None and owed.replace(tzinfo=None) == clock().replace(tzinfo=None)  # SQLite keeps it naive
    assert await redeliver_owed_callbacks(runtime) == 0
    clock.advance(seconds=CALLBACK_REDELIVER_AFTER_SECONDS + 60)
    assert await redeliver_owed_callbacks(runtime) == 1
    assert queue.submitted == [job_id]
