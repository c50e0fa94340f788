"""A scan job's worker side (issue 16): what the task engine runs for a job, and its callback.

`execute_job` marks the row running (a job that ended meanwhile, a retried copy or one its waiter gave up
on, is skipped), scans, shapes the body and renders the PDF, then ends the row: `done` with the body and
the history entry (and the kept report, for Pro and the web UI's scans) in one transaction, or `failed`
with the unit given back. A request of this process that waits for the job is handed the ended row.
`call_back` POSTs an ended job to its callback_url, signed. The request's side is jobs.py.

A job with a callback_url owes its callback from the transaction that ends it (`callback_owed_at`) until
the receiver takes it (2xx) or its attempts are used up. A worker that dies between the end and queueing
the callback therefore loses nothing: the retried copy of the job's task, finding the job ended, queues
the callback still owed, and so does the upkeep before each monitor tick (`redeliver_owed_callbacks`) for
callbacks owed a while that no queued task carries (embedded, the queue died with its process). Delivery
is at least once: a receiver deduplicates by the job's `id` (docs/api.md).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import anyio.to_thread
from sqlalchemy import Engine
from sqlmodel import Session

from websec_app.jobs.callbacks import callback_secret, deliver, encode, sign
from websec_app.jobs.engine import SERVER_STOPPED, SERVER_STOPPED_STATUS
from websec_app.scanner import ScanError, ScanReport, TargetUnreachable
from websec_app.services.metering import record_report
from websec_app.services.pdf import PdfRenderError
from websec_app.store import SCAN_COMPLIANCE, SCAN_FREE, SCAN_ONE_TIME, SCAN_PDF
from websec_app.store.hot_rows.scan_jobs import claim_job as claim_job_hot
from websec_app.store.hot_rows.scan_jobs import end_done_with_history, history_row
from websec_app.store.models import JOB_DONE, ScanJob
from websec_app.store.reports import save_report
from websec_app.store.scan_jobs import (
    KEPT_REPORT,
    callbacks_owed,
    delete_ended_jobs_created_before,
    end_failed,
    find_job,
    finish_done,
    finish_failed,
    note_kept_report,
    open_jobs_left_behind,
    owes_callback,
    settle_callback,
    take_owed_callback,
)

from .jobs import KEEP, SCAN_FAILED, job_result, job_view, real_now, wait_budget
from .runtime import Runtime

log = logging.getLogger(__name__)


def _who(row: ScanJob) -> dict[str, Any]:
    if row.kind == SCAN_FREE:
        return {"client": row.client}
    if row.kind == SCAN_ONE_TIME:
        return {"scan_token_id": row.scan_token_id}
    if row.kind == SCAN_COMPLIANCE:
        return {}
    return {"subscription_id": row.subscription_id, "api_key_id": row.api_key_id}


def _end_done(
    session: Session,
    row: ScanJob,
    report: ScanReport,
    body: dict[str, Any],
    pdf: bytes | None,
    now: datetime,
    owed: datetime | None,
) -> bool:
    """The result and the history entry (and the callback owed from `owed`), in one transaction; False
    when the job had ended meanwhile."""
    if not finish_done(session, row.id, now, body, pdf, callback_owed_at=owed):
        session.rollback()
        return False
    # Nothing below commits before the end: the job's end, its history entry and its kept report are
    # seen together or not at all.
    record = record_report(session, report, kind=row.kind, now=row.created_at, commit=False, **_who(row))
    # A subscriber's history keeps every Pro report (issue 17); the UI keeps every report it shows (its
    # /report/<id> link): kept once, here, with the job's end.
    options = row.options or {}
    if row.subscription_id is not None or options.get(KEEP):
        kept = save_report(
            session, body=body, kind=row.kind, now=row.created_at, scan_record_id=record.id, commit=False
        )
        options = {**options, KEPT_REPORT: kept.id}
        note_kept_report(session, row.id, row.options or {}, kept.id)
    session.commit()
    # `row` (detached) now says what was committed: the worker hands it to a request of this process.
    row.status, row.result, row.pdf, row.finished_at, row.options = JOB_DONE, body, pdf, now, dict(options)
    return True


def _end_done_hot(
    engine: Engine, row: ScanJob, report: ScanReport, body: dict[str, Any], now: datetime, owed: datetime | None
) -> bool:
    """`_end_done` for a job with nothing to keep but its history entry (free and one-time token scans, the
    compliance scan): the end and the entry in one transaction of prebuilt statements."""
    history = history_row(
        lambda session: record_report(session, report, kind=row.kind, now=row.created_at, commit=False, **_who(row))
    )
    if not end_done_with_history(engine, row.id, now, body, None, history, owed):
        return False
    row.status, row.result, row.pdf, row.finished_at = JOB_DONE, body, None, now
    return True


async def _end(
    runtime: Runtime, row: ScanJob, report: ScanReport, body: dict[str, Any], pdf: bytes | None, now: datetime
) -> bool:
    """End the job done (False when it had ended meanwhile); `row` then says what was committed."""
    options = row.options or {}
    # Owed on the service's clock, which the upkeep reads (`redeliver_owed_callbacks`).
    owed = runtime.now() if options.get("callback_url") else None
    if pdf is None and row.subscription_id is None and not options.get(KEEP):
        return await runtime.db_engine(_end_done_hot, row, report, body, now, owed)
    return await runtime.db(_end_done, row, report, body, pdf, now, owed)


async def _fail(runtime: Runtime, row: ScanJob, status: int, message: str, error: ScanError | None = None) -> None:
    """End the job failed; `error`, the scanner's, is kept as its kind (and an unreachable target's reason)."""
    ended = await runtime.db(
        finish_failed,
        row.id,
        real_now(),
        status,
        message,
        error_kind=type(error).__name__ if error is not None else None,
        error_reason=error.reason if isinstance(error, TargetUnreachable) else "",
        callback_owed_at=runtime.now(),
    )
    if ended:
        await _queue_callback(runtime, row)


async def execute_job(runtime: Runtime, job_id: str) -> None:
    """Run one scan job (the task engine's task): scan, shape the body, render a PDF, end the row."""
    row = await runtime.db_engine(claim_job_hot, job_id, real_now())
    if row is None:
        # Ended already: a retried copy, or its waiter gave up. A retried copy's worker may have died
        # between the job's end and queueing its callback: queue the callback if it is still owed.
        await _queue_owed_callback(runtime, job_id)
        return
    options = row.options or {}
    try:
        report = await runtime.scanner(row.url, runtime.settings)
        if row.kind == SCAN_FREE:
            body = report.to_dict(pro=False, include_fix=bool(options.get("include_fix")))
        else:
            body = report.to_dict(pro=True, include_fix=True)
        pdf = None
        if row.kind == SCAN_PDF:
            try:
                pdf = await anyio.to_thread.run_sync(runtime.render_pdf, body, options.get("client_name"))
            except Exception as exc:  # noqa: BLE001 - any renderer failure is the PDF's failure
                log.exception("PDF rendering failed for %s", row.url)
                raise PdfRenderError(f"the PDF report of {row.url} could not be rendered: {exc}") from exc
    except ScanError as exc:
        log.info("scan job %s failed: %s", job_id, exc)
        await _fail(runtime, row, exc.http_status, str(exc) or SCAN_FAILED, exc)
        return
    except PdfRenderError as exc:
        await _fail(runtime, row, 500, str(exc))
        return
    except Exception:  # noqa: BLE001 - the job ends failed and refunded; the traceback is logged
        log.exception("scan job %s failed", job_id)
        await _fail(runtime, row, 500, SCAN_FAILED)
        return
    if await _end(runtime, row, report, body, pdf, real_now()):
        runtime.jobs.hand_over(job_id, row)
        log.info("scan job %s done (attempt %d)", job_id, row.attempts)
        await _queue_callback(runtime, row)


async def _queue_callback(runtime: Runtime, row: ScanJob) -> None:
    if (row.options or {}).get("callback_url"):
        try:
            await runtime.jobs.submit_callback(row.id)
        except Exception:  # noqa: BLE001 - the result stays readable with GET /api/scans/{id}
            log.exception("could not queue the callback of scan job %s", row.id)


async def _queue_owed_callback(runtime: Runtime, job_id: str) -> None:
    """Queue the ended job's callback if it is still owed and no queued task carries it: a read, then (only for
    a job that owes one) one conditional UPDATE, so that two copies racing queue it once."""
    if not await runtime.db(owes_callback, job_id):
        return
    if not await runtime.db(take_owed_callback, job_id, None, runtime.now()):
        return
    if job_id in await runtime.jobs.queued_callbacks():
        return  # its worker queued it before it died: one delivery is enough
    log.warning("scan job %s had ended without its callback queued: queued now", job_id)
    try:
        await runtime.jobs.submit_callback(job_id)
    except Exception:  # noqa: BLE001 - still owed: the upkeep queues it again
        log.exception("could not queue the callback of scan job %s", job_id)


async def call_back(runtime: Runtime, job_id: str) -> None:
    """POST the ended job to its callback_url, signed (websec_app/jobs/callbacks.py); raises to be retried
    when the receiver does not take it (2xx). Taken, the callback is no longer owed."""
    row = await runtime.db(find_job, job_id)
    if row is None or row.api_key_id is None or not (row.options or {}).get("callback_url"):
        return
    body = encode(job_view(job_result(row)))
    signature = sign(callback_secret(runtime.settings, row.api_key_id), body)
    status = await deliver(row.options["callback_url"], body, signature, runtime.settings)
    if not 200 <= status < 300:
        raise CallbackRefused(f"the callback receiver of job {job_id} answered {status}")
    await runtime.db(settle_callback, job_id)


async def callback_given_up(runtime: Runtime, job_id: str) -> None:
    """The callback's last attempt failed (CALLBACK_ATTEMPTS): no longer owed, so the upkeep does not start
    it over; the result stays readable with GET /api/scans/{id}."""
    await runtime.db(settle_callback, job_id)


#: A callback owed this long (seconds, on the service's clock) that no queued task carries is queued again
#: by the upkeep: longer than a delivery's whole life once queued (CALLBACK_ATTEMPTS, backoff 2+4+8+16+32 s,
#: CALLBACK_TIMEOUT_SECONDS each), so that a callback still being retried is not queued twice.
CALLBACK_REDELIVER_AFTER_SECONDS = 300
#: Callbacks queued again by one upkeep run, at most (the next tick takes the rest).
CALLBACK_REDELIVER_BATCH = 200


async def redeliver_owed_callbacks(runtime: Runtime) -> int:
    """Queue again the callbacks owed for more than CALLBACK_REDELIVER_AFTER_SECONDS by ended jobs that no
    queued callback task carries: their worker died between the job's end and queueing the callback (and
    no retried copy of the job's task came: embedded, the queue died with its process), or the process
    running the callback stopped. Run before each monitor tick, by every kind of engine. How many it queued."""
    cutoff = runtime.now() - timedelta(seconds=CALLBACK_REDELIVER_AFTER_SECONDS)
    owed = await runtime.db(callbacks_owed, cutoff, CALLBACK_REDELIVER_BATCH)
    if not owed:
        return 0
    queued = await runtime.jobs.queued_callbacks()
    requeued = 0
    for job_id in owed:
        if job_id in queued or not await runtime.db(take_owed_callback, job_id, cutoff, runtime.now()):
            continue
        await runtime.jobs.submit_callback(job_id)
        requeued += 1
    if requeued:
        log.warning("queued again %d callback(s) owed by ended scan jobs", requeued)
    return requeued


async def end_abandoned_jobs(runtime: Runtime) -> int:
    """Embedded (SQLite): end failed, units given back, the jobs still open a wait budget after they were
    created that no live process's queue holds: not this process's (`JobEngine.held_jobs`), and not another
    process's on the same database whose ticker renewed its queue's lease lately (`JobEngine.queue_gone_after`;
    the queue that holds a job is named in its row). Those were lost with a
    process stopped outright, whose queue was in its memory (or their task here raised with the row open):
    no process will run them, and by then every request has given up on its job. A job a live process holds
    is live however old: an async batch's jobs wait their turn with no request waiting on them, and a queue
    can rightly hold them longer than a wait budget (admission measures the expected wait, it does not bound
    it). The wait budget still keeps the sweep off a job whose row is committed and not yet queued. Returns
    how many it ended.

    The leases are judged on the machine's clock they are written on (`JobEngine.lease_now`), the jobs' age on
    the service's that dates them. Another process's service clock may be far from this one's (each
    WEBSEC_CLOCK_START clock starts when its process does), and the age of its jobs read here is off by as
    much: what keeps them from this sweep is its lease, taken before it serves (`JobEngine.start`)."""
    cutoff = runtime.now() - timedelta(seconds=wait_budget(runtime))
    old = await runtime.db(open_jobs_left_behind, cutoff, runtime.jobs.lease_now(), runtime.jobs.queue_id)
    held = runtime.jobs.held_jobs()  # read after the rows: a job queued meanwhile is in it
    abandoned = [job_id for job_id in old if job_id not in held]
    if not abandoned:
        return 0
    ended = await runtime.db(
        end_failed, abandoned, real_now(), SERVER_STOPPED_STATUS, SERVER_STOPPED, callback_owed_at=runtime.now()
    )
    if ended:
        log.warning("ended %d scan job(s) a stopped process left open: failed, their units given back", ended)
    return ended


#: Rows deleted a transaction, and transactions a run, by `delete_expired_jobs`: a run is bounded (a
#: backlog, say after the retention was first set, goes over the next ticks), a transaction short.
EXPIRED_JOBS_BATCH = 500
EXPIRED_JOBS_BATCHES_A_RUN = 40


async def delete_expired_jobs(runtime: Runtime) -> int:
    """Delete the ended jobs queued more than WEBSEC_JOB_RETENTION_DAYS ago (nothing when 0), with their
    results and PDFs: without it every scan's row stays for good. `GET /api/scans/{id}` then answers 404,
    as for an unknown job; the history and the reports kept for links are other tables. Run with each
    monitor tick, by every kind of engine. Returns how many it deleted."""
    days = runtime.settings.job_retention_days
    if days <= 0:
        return 0
    cutoff = runtime.now() - timedelta(days=days)
    deleted = 0
    for _ in range(EXPIRED_JOBS_BATCHES_A_RUN):
        batch = await runtime.db(delete_ended_jobs_created_before, cutoff, EXPIRED_JOBS_BATCH)
        deleted += batch
        if batch < EXPIRED_JOBS_BATCH:
            break
    if deleted:
        log.info("deleted %d ended scan job(s) queued more than %d day(s) ago", deleted, days)
    return deleted


class CallbackRefused(Exception):
    """The receiver did not answer 2xx: the engine retries the callback with backoff."""


__all__ = [
    "CallbackRefused",
    "call_back",
    "callback_given_up",
    "delete_expired_jobs",
    "end_abandoned_jobs",
    "execute_job",
    "redeliver_owed_callbacks",
]
