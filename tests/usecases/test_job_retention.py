"""Ended scan jobs are deleted after WEBSEC_JOB_RETENTION_DAYS (`usecases.job_worker.delete_expired_jobs`):
without it every scan's row, its result and a PDF job's PDF, stayed for good. Open jobs are never deleted,
and the history the scans left is another table, kept."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlmodel import select

from tests import db_fixtures
from tests.clock import TEST_NOW
from tests.job_rows import insert_job_rows, job_row
from websec_app.runtime import build_runtime
from websec_app.settings import Settings, SettingsError
from websec_app.store import Database
from websec_app.store.models import JOB_DONE, JOB_FAILED, JOB_QUEUED, JOB_RUNNING, ScanJob, ScanRecord
from websec_app.store.scans import record_scan
from websec_app.usecases import job_worker
from websec_app.usecases.job_worker import delete_expired_jobs

any_database = db_fixtures.any_database


def _add(database: Database, name: str, status: str, created: datetime) -> str:
    job_id = f"{name:0>32}"
    insert_job_rows(database, [job_row(job_id, status, created, pdf=b"%PDF-1.4 ...")])
    return job_id


def _job_ids(database: Database) -> set[str]:
    with database.session() as session:
        return set(session.exec(select(ScanJob.id)).all())


async def test_ended_jobs_past_the_retention_are_deleted_open_and_younger_ones_kept(
    any_database: Database, scan_settings: Settings
) -> None:
    # Given a week's retention, and jobs either side of it in every state, and a scan in the history
    settings = scan_settings.with_overrides(job_retention_days=7)
    runtime = build_runtime(settings, database=any_database, clock=lambda: TEST_NOW)
    week = timedelta(days=7)
    old = TEST_NOW - week - timedelta(seconds=1)
    young = TEST_NOW - week + timedelta(seconds=1)
    old_done, old_failed = _add(any_database, "a1", JOB_DONE, old), _add(any_database, "a2", JOB_FAILED, old)
    old_open = {_add(any_database, "a3", JOB_QUEUED, old), _add(any_database, "a4", JOB_RUNNING, old)}
    young_ended = {_add(any_database, "b1", JOB_DONE, young), _add(any_database, "b2", JOB_FAILED, young)}
    with any_database.session() as session:
        record_scan(
            session,
            kind="pdf",
            url="https://a.test/",
            final_url="https://a.test/",
            grade="A",
            score=90,
            algorithm_version="test",
            now=old,
        )

    # When the tick deletes the expired jobs
    deleted = await delete_expired_jobs(runtime)

    # Then only the ended jobs queued before the week are gone, with their results and PDFs
    assert deleted == 2
    remaining = _job_ids(any_database)
    assert not remaining & {old_done, old_failed}
    assert remaining == old_open | young_ended
    with any_database.session() as session:
        assert len(session.exec(select(ScanRecord)).all()) == 1  # the history is not the job's to delete
    assert await delete_expired_jobs(runtime) == 0


async def test_a_backlog_goes_in_bounded_batches_over_the_ticks(
    any_database: Database, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 7 expired jobs, and runs of at most 2 batches of 3
    monkeypatch.setattr(job_worker, "EXPIRED_JOBS_BATCH", 3)
    monkeypatch.setattr(job_worker, "EXPIRED_JOBS_BATCHES_A_RUN", 2)
    runtime = build_runtime(scan_settings, database=any_database, clock=lambda: TEST_NOW)
    old = TEST_NOW - timedelta(days=scan_settings.job_retention_days, seconds=1)
    for n in range(7):
        _add(any_database, f"c{n}", JOB_DONE, old - timedelta(minutes=n))

    # Then each run deletes at most 6, and the next tick the rest
    assert await delete_expired_jobs(runtime) == 6
    assert await delete_expired_jobs(runtime) == 1
    assert _job_ids(any_database) == set()


async def test_a_retention_of_0_keeps_every_job(any_database: Database, scan_settings: Settings) -> None:
    runtime = build_runtime(
        scan_settings.with_overrides(job_retention_days=0), database=any_database, clock=lambda: TEST_NOW
    )
    kept = _add(any_database, "d1", JOB_DONE, TEST_NOW - timedelta(days=3650))

    assert await delete_expired_jobs(runtime) == 0
    assert _job_ids(any_database) == {kept}


def test_the_retention_comes_from_the_environment() -> None:
    assert Settings.from_env({}).job_retention_days == 7
    assert Settings.from_env({"WEBSEC_JOB_RETENTION_DAYS": "30"}).job_retention_days == 30
    assert Settings.from_env({"WEBSEC_JOB_RETENTION_DAYS": "0"}).job_retention_days == 0
    with pytest.raises(SettingsError, match="WEBSEC_JOB_RETENTION_DAYS must be at least 0"):
        Settings.from_env({"WEBSEC_JOB_RETENTION_DAYS": "-1"})
