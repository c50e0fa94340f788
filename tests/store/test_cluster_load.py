"""The admission's view of the cluster (`store.scan_jobs.cluster_load`): what it counts, and that reading it
costs the same however many jobs the table keeps (every process reads it every LOAD_TTL_SECONDS while
scans come in, and job rows are kept)."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session

from tests import db_fixtures
from tests.clock import TEST_NOW
from tests.job_rows import insert_job_rows, job_row
from websec_app.store import Database
from websec_app.store.models import JOB_DONE, JOB_FAILED, JOB_QUEUED, JOB_RUNNING
from websec_app.store.scan_jobs import (
    DEFAULT_SCAN_SECONDS,
    SCAN_TIME_SAMPLE,
    WORKER_ALIVE_SECONDS,
    cluster_load,
    worker_alive,
)

database = db_fixtures.database
any_database = db_fixtures.any_database


def _add_jobs(
    database: Database,
    count: int,
    *,
    first: int,
    status: str = JOB_DONE,
    seconds: float = 2.0,
    error_kind: str | None = None,
) -> None:
    """`count` jobs created a second apart (the later the number, the later the job), each `seconds` long."""
    start = TEST_NOW - timedelta(days=30)
    rows = [
        job_row(f"{n:032x}", status, start + timedelta(seconds=n), seconds=seconds, error_kind=error_kind)
        for n in range(first, first + count)
    ]
    insert_job_rows(database, rows)


def test_the_load_counts_open_jobs_live_capacity_and_the_latest_scan_times(any_database: Database) -> None:
    with any_database.session() as session:
        assert cluster_load(session, TEST_NOW).scan_seconds == DEFAULT_SCAN_SECONDS  # nothing done yet

    # Given old scans of 10 s, then the latest SCAN_TIME_SAMPLE of 1 s, 3 open jobs and two workers, one dead
    _add_jobs(any_database, 50, first=0, seconds=10.0)
    _add_jobs(any_database, SCAN_TIME_SAMPLE, first=100, seconds=1.0)
    _add_jobs(any_database, 2, first=1000, status=JOB_QUEUED)
    _add_jobs(any_database, 1, first=2000, status=JOB_RUNNING)
    with any_database.session() as session:
        worker_alive(session, "a" * 32, 4, TEST_NOW)
        worker_alive(session, "b" * 32, 8, TEST_NOW - timedelta(seconds=WORKER_ALIVE_SECONDS + 1))

        load = cluster_load(session, TEST_NOW)

    # Then: the open jobs, the live worker's slots, and the mean of the latest scans only
    assert (load.depth, load.capacity, load.scan_seconds) == (3, 4, 1.0)


def test_scans_that_failed_in_the_scanner_count_in_the_scan_time(any_database: Database) -> None:
    # Given 100 scans done in 1 s, then 100 of an unreachable host that held their worker 19 s each, and
    # 50 jobs the sweep ended an hour after they started (no scanner error: the server had stopped)
    _add_jobs(any_database, 100, first=0, seconds=1.0)
    _add_jobs(any_database, 100, first=100, status=JOB_FAILED, seconds=19.0, error_kind="TargetUnreachable")
    _add_jobs(any_database, 50, first=200, status=JOB_FAILED, seconds=3600.0)

    with any_database.session() as session:
        load = cluster_load(session, TEST_NOW)

    # Then the mean is over the 200 scans that ran, the slow failures among them: the admission's wait
    # estimate is the time workers really spend (it said 1 s while dead hosts held every slot for 19)
    assert load.scan_seconds == 10.0


def test_the_scan_time_averages_the_latest_scans_whatever_their_end(any_database: Database) -> None:
    # Given old failed scans of 30 s, then the latest SCAN_TIME_SAMPLE done in 2 s
    _add_jobs(any_database, 40, first=0, status=JOB_FAILED, seconds=30.0, error_kind="TargetUnreachable")
    _add_jobs(any_database, SCAN_TIME_SAMPLE, first=100, seconds=2.0)

    with any_database.session() as session:
        load = cluster_load(session, TEST_NOW)

    # Then the older failures fall out of the sample as done scans do
    assert load.scan_seconds == 2.0


def _vm_steps(database: Database) -> int:
    """SQLite virtual-machine steps (in thousands) that one `cluster_load` runs: a measure of the work it
    does, which unlike its time does not depend on the machine."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    with database.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        raw.set_progress_handler(count, 1000)  # type: ignore[attr-defined]
        with Session(bind=connection) as session:
            cluster_load(session, TEST_NOW)
        raw.set_progress_handler(None, 0)  # type: ignore[attr-defined]
    return steps


def test_reading_the_load_costs_the_same_with_ten_times_the_jobs(database: Database) -> None:
    # Given 2,000 done jobs and 500 failed, then 20,000 and 5,000
    _add_jobs(database, 2_000, first=0)
    _add_jobs(database, 500, first=100_000, status=JOB_FAILED, error_kind="TargetUnreachable")
    small = _vm_steps(database)
    _add_jobs(database, 18_000, first=2_000)
    _add_jobs(database, 4_500, first=100_500, status=JOB_FAILED, error_kind="TargetUnreachable")
    large = _vm_steps(database)

    # Then the read does about the same work (sorting every done job by its end time grew with the table)
    assert large <= small + 5, (small, large)


def test_reading_the_load_fetches_no_report(database: Database) -> None:
    # Given the latest scans done, each keeping its result (a done job's is its report, ~17 KiB), then slower
    # failed ones of a host the scanner could not reach
    _add_jobs(database, SCAN_TIME_SAMPLE, first=0, seconds=2.0)
    _add_jobs(database, 10, first=1000, status=JOB_FAILED, seconds=12.0, error_kind="TargetUnreachable")
    statements: list[str] = []

    with database.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        raw.set_trace_callback(statements.append)  # type: ignore[attr-defined]
        with Session(bind=connection) as session:
            load = cluster_load(session, TEST_NOW)
        raw.set_trace_callback(None)  # type: ignore[attr-defined]

    # Then a failed job's error kind is taken out of its result in SQL and no result is fetched whole: every
    # admission read (each process, every LOAD_TTL_SECONDS) decoded 200 reports, 3.4 MB of JSON
    reads = [statement for statement in statements if "scan_jobs.result" in statement]
    assert reads, statements
    assert all(s.count("scan_jobs.result") == s.count("JSON_EXTRACT(scan_jobs.result") for s in reads), reads
    assert load.scan_seconds == (10 * 12.0 + (SCAN_TIME_SAMPLE - 10) * 2.0) / SCAN_TIME_SAMPLE
