"""Scan jobs (issue 16): the rows behind the task engine's queue, and the cluster's load for admission.

Every change of a job's state is one conditional UPDATE (`WHERE status IN (queued, running)`), so of a
worker finishing, a retried copy finishing, and a waiter giving up, exactly one ends the job; the one
that ends it as `failed` refunds its unit in the same transaction. A unit is therefore kept once or given
back once, whatever happens to the workers.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, literal, or_
from sqlmodel import Session, col, delete, select, update

from ._sql import insert_ignoring_conflicts
from .models import JOB_DONE, JOB_FAILED, JOB_QUEUED, JOB_RUNNING, EmbeddedQueue, ScanJob, ScanWorker
from .quotas import Reservation, refund
from .tokens import Claim, release_scan_token

_OPEN = (JOB_QUEUED, JOB_RUNNING)
#: The key of a failed job's `result` naming the scanner error it failed with.
ERROR_KIND = "error_kind"
#: TargetUnreachable's reason (the end of its message), kept beside its kind so the waiting request raises it whole.
ERROR_REASON = "error_reason"
#: The key of a done job's `options` holding the id of the report kept for its /report/<id> link.
KEPT_REPORT = "report_id"
#: A worker that has not said it is alive for this long no longer counts as capacity.
WORKER_ALIVE_SECONDS = 15.0
#: The scan time assumed before any scan has finished (a scan of a public site takes a few seconds).
DEFAULT_SCAN_SECONDS = 3.0
#: How many recent scans the measured scan time averages.
SCAN_TIME_SAMPLE = 200


def new_job_id() -> str:
    return secrets.token_hex(16)


def add_job(session: Session, job: ScanJob) -> ScanJob:
    """Insert `job` (a `new_job`) and commit: the job is queued."""
    session.add(job)
    session.commit()
    return job


def new_job(
    *,
    kind: str,
    url: str,
    now: datetime,
    reservation: Reservation | None = None,
    claim: Claim | None = None,
    options: Mapping[str, Any] | None = None,
    job_id: str | None = None,
    queue_id: str | None = None,
    **who: Any,
) -> ScanJob:
    """A queued job holding `reservation` (or the one-time token of `claim`), not yet in any session:
    `add_job` inserts it, and so does store.hot_rows.scan_jobs with its reservation. `queue_id`, embedded:
    the in-memory queue of the process that creates the job and will hold it (`JobEngine.queue_id`)."""
    return ScanJob(
        id=job_id or new_job_id(),
        kind=kind,
        url=url,
        reservation=asdict(reservation) if reservation is not None else None,
        scan_token_id=claim.token_id if claim is not None else None,
        options=dict(options or {}),
        created_at=now,
        queue_id=queue_id,
        **who,
    )


def claim_job(session: Session, job_id: str, now: datetime) -> ScanJob | None:
    """Mark the job running (one attempt more); None when it has already ended (a retried copy, or a job
    its waiter gave up on)."""
    # One statement: the UPDATE returns the whole row (no SELECT after the commit; the session does not
    # expire it, websec_app/store/database.py).
    started: ScanJob | None = session.exec(
        update(ScanJob)
        .where(col(ScanJob.id) == job_id, col(ScanJob.status).in_(_OPEN))
        .values(status=JOB_RUNNING, attempts=col(ScanJob.attempts) + 1, started_at=now)
        .returning(ScanJob)
        .execution_options(populate_existing=True)
    ).scalar_one_or_none()
    session.commit()
    return started


def finish_done(
    session: Session,
    job_id: str,
    now: datetime,
    result: Mapping[str, Any],
    pdf: bytes | None = None,
    *,
    callback_owed_at: datetime | None = None,
) -> bool:
    """End the job with its result (the unit stays used). False when it had already ended. Not committed:
    the caller records the scan's history in the same transaction, then commits. `callback_owed_at` (a job
    with a callback_url): its callback is owed from then, committed with the end (`callbacks_owed`)."""
    values: dict[str, Any] = {"status": JOB_DONE, "result": dict(result), "pdf": pdf, "finished_at": now}
    if callback_owed_at is not None:
        values["callback_owed_at"] = callback_owed_at
    ended = session.exec(
        update(ScanJob)
        .where(col(ScanJob.id) == job_id, col(ScanJob.status).in_(_OPEN))
        .values(**values)
        .returning(col(ScanJob.id))
    ).scalar_one_or_none()
    return ended is not None


def finish_failed(
    session: Session,
    job_id: str,
    now: datetime,
    status: int,
    message: str,
    *,
    callback_owed_at: datetime,
    only_queued: bool = False,
    error_kind: str | None = None,
    error_reason: str = "",
) -> bool:
    """End the job without a result and give its unit back, in one transaction. False when it had already
    ended (nothing given back then: whoever ended it decided), or with `only_queued`, when a worker has
    started it. `error_kind` (the scanner error's class name) is kept in `result` as {ERROR_KIND: ...}, so
    the waiting request raises the same error the scan did (the UI words each kind differently); a failed
    job's result is never shown as a report. A job with a callback_url owes its callback from
    `callback_owed_at`, committed with the end, whoever ends it (a worker, the sweep of abandoned jobs, a
    stopping process). It is on the service's clock, which the redelivery compares it with; `now` (when the job
    ended) is on the real clock, as the job rows' other times are."""
    states = (JOB_QUEUED,) if only_queued else _OPEN
    failure: dict[str, str] | None = {ERROR_KIND: error_kind} if error_kind else None
    if failure is not None and error_reason:
        failure[ERROR_REASON] = error_reason[:1024]
    ended = session.exec(
        update(ScanJob)
        .where(col(ScanJob.id) == job_id, col(ScanJob.status).in_(states))
        .values(status=JOB_FAILED, error_status=status, error_message=message[:1024], finished_at=now, result=failure)
        .returning(col(ScanJob.reservation), col(ScanJob.scan_token_id), col(ScanJob.options))
    ).one_or_none()
    if ended is None:
        session.rollback()
        return False
    reservation, token_id, options = ended
    if (options or {}).get("callback_url"):  # only a job with a callback pays this second statement
        session.exec(update(ScanJob).where(col(ScanJob.id) == job_id).values(callback_owed_at=callback_owed_at))
    if reservation is not None:
        refund(session, Reservation(**reservation))  # commits the transition with the refund
    elif token_id is not None:
        release_scan_token(session, Claim(token_id=token_id, email=""))
    else:
        session.commit()
    return True


def callbacks_owed(session: Session, owed_before: datetime, limit: int) -> list[str]:
    """Up to `limit` ended jobs whose callback has been owed since before `owed_before` (not delivered, not
    given up, not queued again since): by the partial index of the jobs owing one (migration 0014)."""
    query = (
        select(ScanJob.id)
        .where(col(ScanJob.callback_owed_at) < owed_before, col(ScanJob.status).not_in(_OPEN))
        .order_by(col(ScanJob.callback_owed_at))
        .limit(limit)
    )
    return list(session.exec(query).all())


def owes_callback(session: Session, job_id: str) -> bool:
    """Whether the job owes its callback: a read, so that a retried copy of a job with no callback (a withdrawn
    free scan, the common case under load) takes no write lock on SQLite."""
    owed = session.exec(select(ScanJob.callback_owed_at).where(col(ScanJob.id) == job_id)).first()
    return owed is not None


def take_owed_callback(session: Session, job_id: str, owed_before: datetime | None, now: datetime) -> bool:
    """Take the ended job's owed callback to queue it again (its owed time moves to `now`) and commit; False
    when it is not owed (any more), or, with `owed_before`, not owed since before then (delivered, given up,
    or taken by another process's upkeep: one conditional UPDATE, so two upkeeps racing queue it once)."""
    owed = col(ScanJob.callback_owed_at)
    taken = session.exec(
        update(ScanJob)
        .where(
            col(ScanJob.id) == job_id,
            col(ScanJob.status).not_in(_OPEN),
            owed.is_not(None) if owed_before is None else owed < owed_before,
        )
        .values(callback_owed_at=now)
        .returning(col(ScanJob.id))
    ).scalar_one_or_none()
    session.commit()
    return taken is not None


def settle_callback(session: Session, job_id: str) -> None:
    """The job's callback is no longer owed: the receiver took it (2xx), or its attempts were used up."""
    session.exec(update(ScanJob).where(col(ScanJob.id) == job_id).values(callback_owed_at=None))
    session.commit()


def note_kept_report(session: Session, job_id: str, options: Mapping[str, Any], report_id: str) -> None:
    """Remember the kept report's id on the job (not committed: part of the transaction that ends it done)."""
    session.exec(update(ScanJob).where(col(ScanJob.id) == job_id).values(options={**options, KEPT_REPORT: report_id}))


def find_job(session: Session, job_id: str) -> ScanJob | None:
    return session.get(ScanJob, job_id, populate_existing=True)


def ended_jobs(session: Session, job_ids: Iterable[str]) -> list[str]:
    """Which of these jobs have ended (the waiters' poll: one query for every waiting request)."""
    ids = list(job_ids)
    if not ids:
        return []
    return list(
        session.exec(select(ScanJob.id).where(col(ScanJob.id).in_(ids), col(ScanJob.status).not_in(_OPEN))).all()
    )


def end_failed(
    session: Session, job_ids: Iterable[str], now: datetime, status: int, message: str, *, callback_owed_at: datetime
) -> int:
    """`finish_failed` for each of these jobs still open (units given back); how many it ended."""
    return sum(
        finish_failed(session, job_id, now, status, message, callback_owed_at=callback_owed_at) for job_id in job_ids
    )


def open_jobs_left_behind(session: Session, cutoff: datetime, leases_at: datetime, this_queue: str | None) -> list[str]:
    """The jobs still queued or running that were created before `cutoff` (by the status index) that no
    other live process's queue holds: queued in no embedded queue, in `this_queue` (the caller leaves out
    those it still holds), or in a queue whose process has not renewed its lease (`queue_alive`) past
    `leases_at` (on the clock the leases are written on, the machine's: not the service's, which `cutoff`
    is on): it stopped (a queue never heard of, or forgotten, is as gone)."""
    alive_elsewhere = select(EmbeddedQueue.id).where(
        col(EmbeddedQueue.alive_until) >= leases_at, col(EmbeddedQueue.id) != this_queue
    )
    queue = col(ScanJob.queue_id)
    query = select(ScanJob.id).where(
        col(ScanJob.status).in_(_OPEN),
        col(ScanJob.created_at) < cutoff,
        or_(queue.is_(None), queue.not_in(alive_elsewhere)),
    )
    return list(session.exec(query).all())


def queue_alive(session: Session, queue_id: str, alive_until: datetime, forget_before: datetime) -> None:
    """Say this process's embedded queue is to be taken for alive until `alive_until` (registers it the first
    time), and forget the queues gone since before `forget_before` (long stopped: forgotten is as gone). Both
    on the machine's clock (`JobEngine.lease_now`), which every process on it reads alike."""
    insert_ignoring_conflicts(session, EmbeddedQueue, {"id": queue_id, "alive_until": alive_until})
    session.exec(update(EmbeddedQueue).where(col(EmbeddedQueue.id) == queue_id).values(alive_until=alive_until))
    session.exec(delete(EmbeddedQueue).where(col(EmbeddedQueue.alive_until) < forget_before))
    session.commit()


def queue_gone(session: Session, queue_id: str) -> None:
    """This process's embedded queue stopped (the jobs it held were ended first)."""
    session.exec(delete(EmbeddedQueue).where(col(EmbeddedQueue.id) == queue_id))
    session.commit()


def delete_ended_jobs_created_before(session: Session, cutoff: datetime, limit: int) -> int:
    """Delete up to `limit` ended jobs (done or failed) created before `cutoff`, their results and PDFs with
    them, and commit; how many it deleted. An open job is never deleted. By the (status, created_at) index;
    at most `limit` rows a transaction, so that the database's writers are not held up for long."""
    expired = (
        select(ScanJob.id)
        .where(col(ScanJob.status).in_((JOB_DONE, JOB_FAILED)), col(ScanJob.created_at) < cutoff)
        .limit(limit)
    )
    deleted = session.exec(delete(ScanJob).where(col(ScanJob.id).in_(expired)))
    session.commit()
    return int(deleted.rowcount)


@dataclass(frozen=True)
class ClusterLoad:
    """Scans waiting or running across the cluster, the live workers' total concurrency, and the mean scan
    time of the latest scans done."""

    depth: int
    capacity: int
    scan_seconds: float

    def expected_wait(self, more: int = 1) -> float:
        """Seconds until `more` new scans would be answered: the queue ahead drained by every worker
        slot, then the scan itself."""
        slots = max(self.capacity, 1)
        return (self.depth + more) * self.scan_seconds / slots


def _recent_durations(session: Session, status: str) -> list[tuple[datetime, float]]:
    """(created_at, seconds a worker spent) of the latest SCAN_TIME_SAMPLE scans ended `status`. A failed
    job counts when the scanner ran and raised (its `result` names the error): an unreachable target holds a
    worker slot up to the scan's whole time budget, so leaving those out made the expected wait too short
    exactly when scans of dead hosts fill the queue. Jobs ended by the sweep or a stopping process (no error
    kind) are left out: their time is the outage's, not a scan's.

    Only a failed job's error kind is read, taken out of its result in SQL: a done job's result is its report
    (~17 KiB), and reading the results made every admission read decode 200 reports (3.4 MB of JSON)."""
    error_kind = col(ScanJob.result)[ERROR_KIND].as_string() if status == JOB_FAILED else literal(None)
    recent = (
        select(ScanJob.created_at, ScanJob.started_at, ScanJob.finished_at, error_kind)
        .where(col(ScanJob.status) == status, col(ScanJob.finished_at).is_not(None))
        .order_by(col(ScanJob.created_at).desc())
        .limit(SCAN_TIME_SAMPLE)
    )
    return [
        (created, (finished - started).total_seconds())
        for created, started, finished, kind in session.exec(recent).all()
        if started is not None and finished is not None and (status == JOB_DONE or kind)
    ]


def cluster_load(session: Session, now: datetime) -> ClusterLoad:
    depth = session.exec(select(func.count()).select_from(ScanJob).where(col(ScanJob.status).in_(_OPEN))).one()
    alive_since = now - timedelta(seconds=WORKER_ALIVE_SECONDS)
    capacity = session.exec(
        select(func.coalesce(func.sum(ScanWorker.concurrency), 0)).where(col(ScanWorker.heartbeat_at) >= alive_since)
    ).one()
    # The latest by creation, not by finish: the (status, created_at) index then hands them over in order.
    # Ordered by finished_at, every read sorted all the done jobs ever kept: ~0.5 s of CPU with 100,000,
    # at every admission read (LOAD_TTL_SECONDS), growing with each scan. One read per status keeps that
    # order (an IN over both would sort them all).
    durations = sorted((*_recent_durations(session, JOB_DONE), *_recent_durations(session, JOB_FAILED)), reverse=True)[
        :SCAN_TIME_SAMPLE
    ]
    scan_seconds = sum(seconds for _, seconds in durations) / len(durations) if durations else DEFAULT_SCAN_SECONDS
    return ClusterLoad(int(depth), int(capacity), max(scan_seconds, 0.01))


def worker_alive(session: Session, worker_id: str, concurrency: int, now: datetime) -> None:
    """Say this worker is alive (registers it the first time)."""
    insert_ignoring_conflicts(session, ScanWorker, {"id": worker_id, "concurrency": concurrency, "heartbeat_at": now})
    session.exec(update(ScanWorker).where(col(ScanWorker.id) == worker_id).values(heartbeat_at=now))
    stale = now - timedelta(seconds=WORKER_ALIVE_SECONDS * 20)
    session.exec(delete(ScanWorker).where(col(ScanWorker.heartbeat_at) < stale))
    session.commit()


def worker_gone(session: Session, worker_id: str) -> None:
    session.exec(delete(ScanWorker).where(col(ScanWorker.id) == worker_id))
    session.commit()


__all__ = [
    "ERROR_KIND",
    "ERROR_REASON",
    "KEPT_REPORT",
    "ClusterLoad",
    "claim_job",
    "cluster_load",
    "add_job",
    "callbacks_owed",
    "delete_ended_jobs_created_before",
    "end_failed",
    "ended_jobs",
    "find_job",
    "finish_done",
    "finish_failed",
    "new_job",
    "new_job_id",
    "note_kept_report",
    "open_jobs_left_behind",
    "queue_alive",
    "queue_gone",
    "settle_callback",
    "owes_callback",
    "take_owed_callback",
    "worker_alive",
    "worker_gone",
]


def first_showing_of_callback_secret(session: Session, api_key_id: int, now: datetime) -> bool:
    """True the first time only: the key's callback secret may be shown now, and never again."""
    from .models import CallbackSecretShown

    first = insert_ignoring_conflicts(session, CallbackSecretShown, {"api_key_id": api_key_id, "shown_at": now})
    session.commit()
    return first


#: The task engine's own tables on PostgreSQL (migration 0006 creates them from procrastinate's schema).
ENGINE_TABLE_PREFIX = "procrastinate_"


def store_owns(name: str | None, type_: str, parent_names: object) -> bool:
    """Alembic's `include_name`: compare and autogenerate only the store's tables, not the engine's."""
    return not (type_ == "table" and name is not None and name.startswith(ENGINE_TABLE_PREFIX))
