"""`scan_jobs` rows written straight to the table, in any state and at any age, for the store's and the use
cases' tests of what reads or deletes them (store.scan_jobs.cluster_load, usecases.job_worker); and the
`scan_workers` rows, read back."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert
from sqlmodel import select

from websec_app.store import Database
from websec_app.store.models import JOB_DONE, JOB_FAILED, JOB_QUEUED, ScanJob, ScanWorker


def job_row(
    job_id: str,
    status: str,
    created: datetime,
    *,
    seconds: float = 3.0,
    pdf: bytes | None = None,
    error_kind: str | None = None,
) -> dict[str, Any]:
    """A job created at `created`: started then unless queued, ended `seconds` later when done or failed, a
    result (and `pdf`) when done; a failed one names `error_kind` when the scanner raised it."""
    ended = status in (JOB_DONE, JOB_FAILED)
    done = status == JOB_DONE
    return {
        "id": job_id,
        "kind": "pdf" if pdf is not None else "free",
        "url": "https://a.test/",
        "status": status,
        "created_at": created,
        "started_at": created if status != JOB_QUEUED else None,
        "finished_at": created + timedelta(seconds=seconds) if ended else None,
        "result": {"grade": "A"} if done else ({"error_kind": error_kind} if error_kind else None),
        "pdf": pdf if done else None,
        "options": {},
        "attempts": 1,
    }


def insert_job_rows(database: Database, rows: list[dict[str, Any]]) -> None:
    with database.engine.begin() as connection:
        connection.execute(insert(ScanJob), rows)


def registered_workers(database: Database) -> int:
    """The workers registered as the cluster's capacity (`scan_workers`), whatever their heartbeat."""
    with database.session() as session:
        return len(session.exec(select(ScanWorker)).all())
