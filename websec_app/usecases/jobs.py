"""Scans as jobs of the task engine (issue 16): what a request does before and after, what a worker does.

A request (the synchronous API endpoints, and the async `POST /api/scans`):
1. checks the URL (a malformed one costs nothing) and the cluster's expected wait (`ScannerBusy` past
   `WEBSEC_MAX_SCAN_WAIT`: nothing taken);
2. reserves the unit (free day, Pro month, or the one-time token) and creates the `scan_jobs` row holding
   it, then queues the job;
3. waits for the row to end (synchronous endpoints only) and answers from it.

A worker (`execute_job`, job_worker.py) marks the row running, scans, and ends it: `done` with the body, or `failed`
with the unit given back in the same transaction. The transitions are conditional
(websec_app/store/scan_jobs.py): a job retried after its worker died ends once, and a request that stops
waiting ends it itself (failed, unit given back) so that no unit stays taken by a job nobody answers.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from sqlmodel import Session

from websec_app.jobs.callbacks import callback_secret, checked_address
from websec_app.jobs.engine import STALLED_AFTER_SECONDS
from websec_app.scanner import (
    InvalidTarget,
    ScanError,
    TargetRefused,
    TargetUnreachable,
    parse_target,
)
from websec_app.services.admission import RETRY_AFTER_SECONDS, Place, ScannerBusy
from websec_app.services.pdf import PdfRenderError, report_filename
from websec_app.store import (
    SCAN_COMPLIANCE,
    SCAN_FREE,
    SCAN_ONE_TIME,
    SCAN_PDF,
    SCAN_PRO,
    Reservation,
    claim_scan_token,
    day_resets_at,
    month_resets_at,
    reserve_monthly_scan,
)
from websec_app.store.hot_rows.scan_jobs import reserve_free_job
from websec_app.store.models import JOB_DONE, JOB_FAILED, JOB_QUEUED, ScanJob
from websec_app.store.quotas import reserve_monthly_scans
from websec_app.store.scan_jobs import (
    ERROR_KIND,
    ERROR_REASON,
    KEPT_REPORT,
    add_job,
    find_job,
    finish_failed,
    first_showing_of_callback_secret,
    new_job,
)

from .accounts import Subscriber
from .errors import FreeQuotaUsed, MonthlyQuotaUsed
from .runtime import Runtime
from .scans import STEPS, WAITING, PdfFile, Progress, Scanned

#: How often a watched job (the UI's step indicator) is looked at while it waits or runs.
WATCH_SECONDS = 0.25
#: The scanner errors a failed job raises again in the request as themselves (the UI words each one).
_SCAN_ERRORS: dict[str, type[ScanError]] = {
    cls.__name__: cls for cls in (InvalidTarget, TargetRefused, TargetUnreachable)
}

log = logging.getLogger(__name__)

#: The answer of a job that failed for an unexpected reason (the worker's log has the traceback).
SCAN_FAILED = "An internal error occurred. Please try again later."
#: The answer of a job nobody finished in time (its unit is given back).
NOT_FINISHED = "The scan did not finish in time; nothing was counted. Please try again."
#: The answer of a job withdrawn before any worker started it (its unit is given back).
NOT_STARTED = "The scanner is at capacity right now; nothing was counted. Please retry later (see Retry-After)."
MAX_BATCH = 50
#: The job option asking the worker to keep the report for a /report/<id> link (the web UI's scans).
KEEP = "keep"


class JobScanError(ScanError):
    """A job's scan failed: the status and sentence the worker recorded, raised again in the request."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.http_status = status


class BatchQuotaUsed(MonthlyQuotaUsed):
    """A batch needs more Pro scans than are left this month (`remaining`); none was taken."""

    def __init__(self, limit: int, resets_at: datetime, remaining: int, wanted: int) -> None:
        super().__init__(limit, resets_at)
        self.remaining = remaining
        self.wanted = wanted


@dataclass(frozen=True)
class JobResult:
    """An ended job as its owner reads it."""

    id: str
    status: str
    url: str
    body: dict[str, Any] | None
    error_status: int | None
    error: str | None
    remaining: int | None


def real_now() -> datetime:
    return datetime.now(UTC)


async def admit(runtime: Runtime, count: int = 1) -> None:
    """Refuse (ScannerBusy, Retry-After = the expected wait) when `count` more scans would wait longer than
    WEBSEC_MAX_SCAN_WAIT across the cluster."""
    load = await runtime.jobs.load()
    wait = load.expected_wait(count)
    if wait > runtime.settings.max_scan_wait:
        raise ScannerBusy(max(1, math.ceil(wait)))


def wait_budget(runtime: Runtime) -> float:
    """How long a request waits for its job: the admitted wait, a scan, and a retry after a worker died."""
    scan = runtime.settings.limits.total_seconds
    return runtime.settings.max_scan_wait + 2 * scan + STALLED_AFTER_SECONDS + 10


# --- the request's side --------------------------------------------------------------------------------


@asynccontextmanager
async def _in_line(runtime: Runtime, place: Place | None, progress: Progress | None = None) -> AsyncIterator[None]:
    """Embedded (the queue in this process's memory): the request holds one of the process's scan slots,
    shared with the web UI, while its job runs here; ScannerBusy past them, before anything is taken. On a
    shared queue the cluster's expected wait (`admit`) is the only bound."""
    if place is not None:
        try:
            await place.turn()
            yield
        finally:
            place.leave()
    elif runtime.jobs.distributed:
        yield
    else:
        async with runtime.scan_slot(on_wait=None if progress is None else lambda: progress(WAITING)):
            yield


async def _queue_and_wait(runtime: Runtime, job: ScanJob, progress: Progress | None = None) -> ScanJob:
    """Queue the job and wait for its end. A job no worker has started within WEBSEC_MAX_SCAN_WAIT less a
    scan's time (the admission's estimate was too kind: a burst on idle figures, a worker lost) is
    withdrawn, its unit given back, and answered 503 like a refused one; a started job is waited for (a
    scan is bounded)."""
    engine = runtime.jobs
    try:
        # The waiter is registered with the job, before any worker can end it (no read of the row to wait).
        await engine.submit(job.id, waiter=True)
        # Withdrawn in time for a scan started at the last moment to still answer within the budget.
        start_by = max(1.0, runtime.settings.max_scan_wait - engine.recent_scan_seconds())
        ended = await _wait(runtime, job.id, start_by, progress)
        if not ended:
            withdrawn = await runtime.db(
                finish_failed, job.id, real_now(), 503, NOT_STARTED, only_queued=True, callback_owed_at=runtime.now()
            )
            if not withdrawn:
                ended = await _wait(runtime, job.id, wait_budget(runtime) - start_by, progress)
    except BaseException:
        engine.forget(job.id)
        engine.take_handed(job.id)
        with anyio.CancelScope(shield=True):
            await _give_up(runtime, job.id)
        raise
    engine.forget(job.id)
    if not ended:
        await _give_up(runtime, job.id)
    # Ended done by this process's worker: the row as it committed it (the row stays the truth; this only
    # saves reading it back and decoding the result).
    row = engine.take_handed(job.id) or await runtime.db(find_job, job.id)
    assert row is not None  # rows are never deleted while their request waits
    return row


async def _wait(runtime: Runtime, job_id: str, timeout: float, progress: Progress | None) -> bool:
    """Wait for the job's end (True) or `timeout` (False). Watched (`progress`), its state is read every
    WATCH_SECONDS and told as the step it is at: queued is WAITING (no worker has it yet), running is
    "fetch" (a worker scans it), and "save" once it has ended (the worker kept the result with its end)."""
    engine = runtime.jobs
    if progress is None:
        return await engine.wait(job_id, timeout)
    deadline = anyio.current_time() + timeout
    told = ""
    while True:
        left = deadline - anyio.current_time()
        if left <= 0:
            return False
        if await engine.wait(job_id, min(WATCH_SECONDS, left)):
            if told != STEPS[1]:  # a worker scanned it between two looks: the steps are told in order all the same
                progress(STEPS[1])
            progress(STEPS[2])
            return True
        row = await runtime.db(find_job, job_id)
        step = WAITING if row is not None and row.status == JOB_QUEUED else STEPS[1]
        if step != told:
            progress(step)
            told = step


async def _give_up(runtime: Runtime, job_id: str) -> None:
    """End a job nobody will wait for any more (its unit given back), unless it ended meanwhile."""
    try:
        await runtime.db(finish_failed, job_id, real_now(), 503, NOT_FINISHED, callback_owed_at=runtime.now())
    except Exception:  # noqa: BLE001 - report the original error
        log.exception("could not give up scan job %s", job_id)


def _raise_failure(row: ScanJob) -> None:
    if row.status == JOB_DONE:
        return
    status = row.error_status or 500
    message = row.error_message or SCAN_FAILED
    if row.kind == SCAN_PDF and status == 500:
        raise PdfRenderError(message)
    if status == 503:
        raise ScannerBusy(RETRY_AFTER_SECONDS)
    failure = row.result or {}
    scan_error = _SCAN_ERRORS.get(str(failure.get(ERROR_KIND, "")))
    if scan_error is TargetUnreachable:
        raise TargetUnreachable(message, reason=str(failure.get(ERROR_REASON, "")))
    if scan_error is not None:
        raise scan_error(message)
    raise JobScanError(status, message)


def _remaining(row: ScanJob) -> int | None:
    return Reservation(**row.reservation).remaining if row.reservation else None


async def _reserve_free(
    runtime: Runtime, url: str, client: str, now: datetime, limit: int, options: dict[str, Any]
) -> ScanJob:
    """The free unit and the job row holding it, in one transaction of prebuilt statements
    (store/hot_rows/scan_jobs.py); FreeQuotaUsed when today's allowance is used up."""
    job = new_job(kind=SCAN_FREE, url=url, now=now, options=options, client=client, queue_id=runtime.jobs.queue_id)
    if await runtime.db_engine(reserve_free_job, job, client, now, limit) is None:
        raise FreeQuotaUsed(limit, day_resets_at(now))
    return job


def _claim_token(
    session: Session,
    url: str,
    token: str,
    now: datetime,
    options: dict[str, Any] | None = None,
    *,
    queue_id: str | None = None,
) -> ScanJob:
    claim = claim_scan_token(session, token, now, commit=False)  # committed with its job, by add_job
    job = new_job(kind=SCAN_ONE_TIME, url=url, now=now, claim=claim, options=options, queue_id=queue_id)
    return add_job(session, job)


def _reserve_month(
    session: Session,
    kind: str,
    url: str,
    subscriber: Subscriber,
    now: datetime,
    options: dict[str, Any],
    *,
    queue_id: str | None = None,
) -> ScanJob:
    reservation = reserve_monthly_scan(
        session, subscriber.subscription_id, now, subscriber.monthly_limit, commit=False
    )  # committed with its job, by add_job
    if reservation is None:
        raise MonthlyQuotaUsed(subscriber.monthly_limit, month_resets_at(now))
    job = new_job(
        kind=kind,
        url=url,
        now=now,
        reservation=reservation,
        options=options,
        subscription_id=subscriber.subscription_id,
        api_key_id=subscriber.key_id,
        queue_id=queue_id,
    )
    return add_job(session, job)


# --- the metered scans, for the API and the web UI alike ------------------------------------------------
#
# `keep`: the worker keeps the report for a /report/<id> link (the web UI's scans; the API's are kept in the
# history only). `progress`: told each step (the UI's step indicator); None: nobody watches, and the request
# sleeps until its job ends.


def _options(keep: bool, **options: Any) -> dict[str, Any]:
    return {**options, KEEP: True} if keep else options


def _scanned(row: ScanJob) -> Scanned:
    """A job ended done, as its request answers it."""
    return Scanned(dict(row.result or {}), str((row.options or {}).get(KEPT_REPORT, "")), _remaining(row))


def _tell(progress: Progress | None, step: str) -> None:
    if progress is not None:
        progress(step)


async def _as_job(
    runtime: Runtime,
    create: Callable[[], Awaitable[ScanJob]],
    *,
    place: Place | None = None,
    progress: Progress | None = None,
    tell_first_step: bool = True,
) -> ScanJob:
    """What every scan does around its own unit: admit it, take its place in the scan line, `create` the
    job holding the unit (the first step told), queue it and wait for its end: the row ended done, or its
    failure raised as the scan's own error."""
    await admit(runtime)
    async with _in_line(runtime, place, progress):
        if tell_first_step:
            _tell(progress, STEPS[0])
        job = await create()
        row = await _queue_and_wait(runtime, job, progress)
    _raise_failure(row)
    return row


async def free_scan(
    runtime: Runtime,
    url: str,
    client: str,
    *,
    include_fix: bool = False,
    keep: bool = False,
    progress: Progress | None = None,
) -> Scanned:
    """A free scan (spec 2.1 body): one unit of the client's daily quota.
    Raises ScanError, ScannerBusy or FreeQuotaUsed."""
    parse_target(url)
    limit, options = runtime.settings.free_scans_per_day, _options(keep, include_fix=include_fix)
    row = await _as_job(
        runtime, lambda: _reserve_free(runtime, url, client, runtime.now(), limit, options), progress=progress
    )
    return _scanned(row)


async def token_scan(
    runtime: Runtime, url: str, token: str, *, keep: bool = False, progress: Progress | None = None
) -> Scanned:
    """A paid one-time scan (spec 2.2 body, fixes included): uses up the token.
    Raises ScanError, ScannerBusy or store.TokenRejected."""
    parse_target(url)
    row = await _as_job(
        runtime,
        lambda: runtime.db(
            _claim_token, url, token.strip(), runtime.now(), _options(keep), queue_id=runtime.jobs.queue_id
        ),
        progress=progress,
    )
    return _scanned(row)


async def pro_scan(
    runtime: Runtime,
    subscriber: Subscriber,
    url: str,
    *,
    place: Place | None = None,
    keep: bool = False,
    progress: Progress | None = None,
) -> Scanned:
    """A Pro scan (spec 2.2 body): one unit of the month, and the scans left. `place`: the caller's place in
    the process's scan line (the API takes it on arrival, api_routes/auth.py), given back here.
    Raises ScanError, ScannerBusy or MonthlyQuotaUsed."""
    parse_target(url)
    row = await _as_job(
        runtime,
        lambda: runtime.db(
            _reserve_month, SCAN_PRO, url, subscriber, runtime.now(), _options(keep), queue_id=runtime.jobs.queue_id
        ),
        place=place,
        progress=progress,
    )
    return _scanned(row)


async def pro_pdf(
    runtime: Runtime,
    subscriber: Subscriber,
    url: str,
    client_name: str | None,
    *,
    place: Place | None = None,
    keep: bool = False,
    progress: Progress | None = None,
) -> PdfFile:
    """A Pro scan rendered as the PDF report (one unit of the month), `client_name` in its header. Raises as
    pro_scan, or PdfRenderError when the renderer fails (the unit is given back)."""
    name = (client_name or "").strip()[:80] or None
    host = parse_target(url).host
    options = _options(keep, client_name=name)
    row = await _as_job(
        runtime,
        lambda: runtime.db(
            _reserve_month, SCAN_PDF, url, subscriber, runtime.now(), options, queue_id=runtime.jobs.queue_id
        ),
        place=place,
        progress=progress,
    )
    scanned = _scanned(row)
    return PdfFile(report_filename(host), bytes(row.pdf or b""), scanned.report_id, scanned.remaining or 0)


async def compliance_scan(runtime: Runtime, url: str, progress: Progress) -> dict[str, Any]:
    """The compliance report's scan as a job (usecases.purchases.compliance_report): the spec 2.2 body. The
    job holds no unit: the compliance token, reserved by the caller before, is the unit, and the caller
    releases it when this raises (as scans do: ScanError, ScannerBusy). The caller told the first step."""
    parse_target(url)
    row = await _as_job(
        runtime,
        lambda: runtime.db(_create_compliance_job, url, runtime.now(), runtime.jobs.queue_id),
        progress=progress,
        tell_first_step=False,
    )
    return _scanned(row).body


def _create_compliance_job(session: Session, url: str, now: datetime, queue_id: str | None) -> ScanJob:
    return add_job(session, new_job(kind=SCAN_COMPLIANCE, url=url, now=now, queue_id=queue_id))


# --- async and batch scans -----------------------------------------------------------------------------


def _reserve_batch(
    session: Session,
    urls: Sequence[str],
    subscriber: Subscriber,
    now: datetime,
    options: dict[str, Any],
    *,
    queue_id: str | None = None,
) -> tuple[list[str], int]:
    """All the batch's units, or none (BatchQuotaUsed with what is left); one job per URL, committed with the
    units in one transaction (a crash in between would have kept units no job holds). `queue_id`: the queue
    that will hold them (embedded, this process's: `JobEngine.queue_id`)."""
    taken = reserve_monthly_scans(
        session, subscriber.subscription_id, now, subscriber.monthly_limit, len(urls), commit=False
    )
    if isinstance(taken, int):
        raise BatchQuotaUsed(subscriber.monthly_limit, month_resets_at(now), taken, len(urls))
    ids = []
    for url in urls:
        unit = Reservation(taken.counter, taken.owner, taken.period, taken.used, taken.limit)
        job = new_job(
            kind=SCAN_PRO,
            url=url,
            now=now,
            reservation=unit,
            options=options,
            subscription_id=subscriber.subscription_id,
            api_key_id=subscriber.key_id,
            queue_id=queue_id,
        )
        session.add(job)
        ids.append(job.id)
    session.commit()
    return ids, taken.remaining


@dataclass(frozen=True)
class Submitted:
    """The queued jobs of a batch, in the order of its URLs, and the key's callback secret the first time
    it is shown (None afterwards, and without a callback_url)."""

    ids: list[str]
    remaining: int
    callback_secret: str | None = None


async def submit_scans(
    runtime: Runtime, subscriber: Subscriber, urls: Sequence[str], callback_url: str | None = None
) -> Submitted:
    """Queue one Pro scan job per URL, all or none. Raises ScanError (a bad URL or callback URL: nothing
    taken), CallbacksUnavailable, ScannerBusy, or BatchQuotaUsed."""
    if not urls or len(urls) > MAX_BATCH:
        raise JobScanError(400, f"Give between 1 and {MAX_BATCH} URLs.")
    for url in urls:
        parse_target(url)
    secret = None
    if callback_url:
        secret = callback_secret(runtime.settings, subscriber.key_id)  # CallbacksUnavailable first
        await checked_address(callback_url, runtime.settings)
    await admit(runtime, len(urls))
    options = {"callback_url": callback_url} if callback_url else {}
    engine = runtime.jobs
    ids, remaining = await runtime.db(
        _reserve_batch, list(urls), subscriber, runtime.now(), options, queue_id=engine.queue_id
    )
    for job_id in ids:
        try:
            await engine.submit(job_id)
        except Exception:
            log.exception("could not queue scan job %s", job_id)
            await _give_up(runtime, job_id)
            raise
    shown = secret is not None and await runtime.db(first_showing_of_callback_secret, subscriber.key_id, runtime.now())
    return Submitted(ids, remaining, secret if shown else None)


def job_view(job: JobResult) -> dict[str, Any]:
    """A job as `GET /api/scans/{id}` and its callback show it: the report when done, the error when failed."""
    view: dict[str, Any] = {"id": job.id, "status": job.status, "url": job.url}
    if job.body is not None:
        view["report"] = job.body
    if job.status == JOB_FAILED:
        view["error"] = job.error or SCAN_FAILED
    return view


async def read_job(runtime: Runtime, api_key_id: int, job_id: str) -> JobResult | None:
    """The job as its owner sees it; None when it does not exist or another key queued it."""
    row = await runtime.db(find_job, job_id[:64])
    if row is None or row.api_key_id != api_key_id:
        return None
    return job_result(row)


def job_result(row: ScanJob) -> JobResult:
    return JobResult(
        id=row.id,
        status=row.status,
        url=row.url,
        body=dict(row.result) if row.result is not None and row.status == JOB_DONE else None,
        error_status=row.error_status,
        error=row.error_message,
        remaining=_remaining(row),
    )


__all__ = [
    "admit",
    "BatchQuotaUsed",
    "compliance_scan",
    "free_scan",
    "job_result",
    "job_view",
    "JobResult",
    "JobScanError",
    "KEEP",
    "MAX_BATCH",
    "pro_pdf",
    "pro_scan",
    "read_job",
    "real_now",
    "SCAN_FAILED",
    "submit_scans",
    "Submitted",
    "token_scan",
]
