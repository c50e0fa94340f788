"""The scan jobs' hot transactions, as prebuilt Core statements on one connection: a free scan's
reservation with its job row, a worker's claim of a job, and a job's end with its history entry.

Why: every free scan through `serve-api` ran them through an ORM session (unit of work, flush, identity
map, the refresh after commit): ~3.1 ms of CPU for `_reserve_free` (two transactions: the quota's, then
the job row's) and ~3.2 ms for `_end_done` (py-spy under bench/serve_bench.py, docs/performance.md). Here
each is one transaction of statements built once and compiled once per dialect (SQLAlchemy's compiled
cache), with the column types' own conversions (UTC datetimes, JSON), on SQLite and on PostgreSQL alike.

Exactness is the ORM path's: the free counter's row is created with `INSERT ... ON CONFLICT DO NOTHING`
(on SQLite the transaction's first statement, so it takes the write lock up front) and taken with one
conditional `UPDATE ... RETURNING` (`used < limit`), and the job row holding the unit is inserted in the
same transaction: the unit and the job that holds it are committed together or not at all. A job's end
is the same conditional UPDATE as `store.scan_jobs.finish_done` (only an open job ends, so it ends once),
and its history entry is committed with it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Engine, bindparam, delete, insert, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from ..models import JOB_DONE, JOB_QUEUED, JOB_RUNNING, FreeScanCounter, ScanJob, ScanRecord
from ..periods import day_period
from ..quotas import Reservation, prune_due_today

_OPEN = (JOB_QUEUED, JOB_RUNNING)
_COUNTERS = FreeScanCounter.__table__  # type: ignore[attr-defined]
_JOBS = ScanJob.__table__  # type: ignore[attr-defined]
_RECORDS = ScanRecord.__table__  # type: ignore[attr-defined]

_TAKE_FREE = (
    update(_COUNTERS)
    .where(
        _COUNTERS.c.client == bindparam("b_client"),
        _COUNTERS.c.day == bindparam("b_day"),
        _COUNTERS.c.used < bindparam("b_limit"),
    )
    .values(used=_COUNTERS.c.used + 1)
    .returning(_COUNTERS.c.used)
)
_PRUNE_PAST_DAYS = delete(_COUNTERS).where(_COUNTERS.c.day < bindparam("b_day"))
_INSERT_JOB = insert(_JOBS)
_END_DONE = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("b_id"), _JOBS.c.status.in_(_OPEN))
    .values(status=JOB_DONE, result=bindparam("b_result"), pdf=bindparam("b_pdf"), finished_at=bindparam("b_now"))
    .returning(_JOBS.c.id)
)
#: A job with a callback_url owes it from its end, committed with it (store.scan_jobs.callbacks_owed); a
#: separate statement, so that a free scan's end (no callback) stays `_END_DONE`.
_END_DONE_OWING_CALLBACK = _END_DONE.values(callback_owed_at=bindparam("b_owed"))
_INSERT_RECORD = insert(_RECORDS)
_CLAIM = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("b_id"), _JOBS.c.status.in_(_OPEN))
    .values(status=JOB_RUNNING, attempts=_JOBS.c.attempts + 1, started_at=bindparam("b_now"))
    .returning(*_JOBS.columns)
)


def _new_counter_statement(engine: Engine) -> Any:
    dialect = engine.dialect.name
    if dialect == "sqlite":
        stmt: Any = sqlite.insert(_COUNTERS)
    elif dialect == "postgresql":
        stmt = postgresql.insert(_COUNTERS)
    else:  # pragma: no cover - the settings only produce these two
        raise NotImplementedError(f"the store supports SQLite and PostgreSQL, not {dialect}")
    return (
        stmt.values(client=bindparam("b_client"), day=bindparam("b_day"), used=0)
        .on_conflict_do_nothing()
        .returning(_COUNTERS.c.client)
    )


_new_counter: weakref.WeakKeyDictionary[Engine, Any] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _inserted_values(row: Any) -> dict[str, Any]:
    """The row's column values for a Core INSERT; None left out, so a nullable column (JSON too) is SQL NULL
    as the ORM leaves it."""
    table = type(row).__table__
    return {column.name: value for column in table.columns if (value := getattr(row, column.name)) is not None}


def reserve_free_job(engine: Engine, job: ScanJob, client: str, now: datetime, limit: int) -> ScanJob | None:
    """Take one free scan from today's (UTC) allowance of `client` and insert `job` (not yet added to any
    session) holding it, in one transaction; None (nothing written) when the allowance is used up."""
    day = day_period(now)
    with _lock:
        new_counter = _new_counter.get(engine)
        if new_counter is None:
            new_counter = _new_counter[engine] = _new_counter_statement(engine)
    with engine.begin() as connection:
        new_client = connection.execute(new_counter, {"b_client": client, "b_day": day}).first() is not None
        if new_client and prune_due_today(engine, day):  # as quotas.reserve_free_scan prunes
            connection.execute(_PRUNE_PAST_DAYS, {"b_day": day})
        used = connection.execute(_TAKE_FREE, {"b_client": client, "b_day": day, "b_limit": limit}).scalar()
        if used is None:
            connection.rollback()
            return None
        job.reservation = asdict(Reservation("free", client, day, used, limit))
        connection.execute(_INSERT_JOB, _inserted_values(job))
    return job


def claim_job(engine: Engine, job_id: str, now: datetime) -> ScanJob | None:
    """`store.scan_jobs.claim_job` in one Core statement: mark the open job running (one attempt more) and
    return its row as committed, not attached to any session; None when it has already ended."""
    with engine.begin() as connection:
        row = connection.execute(_CLAIM, {"b_id": job_id, "b_now": now}).first()
    return None if row is None else ScanJob(**row._mapping)


class _HistoryRow:
    """Stands in for the session `services.metering.record_report` adds its `ScanRecord` to, so that the
    history row keeps its one definition (store.scans.record_scan) and goes in with a Core INSERT."""

    def __init__(self) -> None:
        self.rows: list[Any] = []

    def add(self, row: Any) -> None:
        self.rows.append(row)

    def flush(self) -> None:
        pass


def history_row(record: Any) -> ScanRecord:
    """The `ScanRecord` that `record(session)` (a `record_report(session, ..., commit=False)`) adds."""
    collector = _HistoryRow()
    record(cast(Session, collector))
    [row] = collector.rows
    return cast(ScanRecord, row)


def end_done_with_history(
    engine: Engine,
    job_id: str,
    now: datetime,
    result: Mapping[str, Any],
    pdf: bytes | None,
    history: ScanRecord,
    callback_owed_at: datetime | None = None,
) -> bool:
    """End the open job `job_id` done with its result and insert its history entry, in one transaction;
    False (nothing written) when the job had ended meanwhile. `callback_owed_at` (a job with a
    callback_url): its callback is owed from then, committed with the end."""
    params: dict[str, Any] = {"b_id": job_id, "b_result": dict(result), "b_pdf": pdf, "b_now": now}
    statement = _END_DONE
    if callback_owed_at is not None:
        statement, params["b_owed"] = _END_DONE_OWING_CALLBACK, callback_owed_at
    with engine.begin() as connection:
        ended = connection.execute(statement, params).first()
        if ended is None:
            connection.rollback()
            return False
        connection.execute(_INSERT_RECORD, _inserted_values(history))
    return True


__all__ = ["claim_job", "end_done_with_history", "history_row", "reserve_free_job"]
