"""What the web UI does, as plain async functions over the scanner, the store and the services.

UI state handlers stay thin: they read a form, call one function here and show its result or
its exception. Nothing here imports Reflex, so the flows are tested without a browser.

The quotas are the API's: a free scan takes one unit of the same per-client daily counter as
`POST /api/scan` (the client key comes from `store.clients`, as the API's does), a Pro scan or
PDF one unit of the subscription's monthly counter, a one-time scan claims its token. A scan
that produces no report gives its unit (or token) back, exactly as the API does, so a refused
or unreachable site costs nothing. Every delivered report is stored, so its link works later.

So are the scan slots: before reserving anything, a scan takes one of the process's slots from the
same `ScanAdmission` as the API (`services.admission.admission_for`), waiting in the same FIFO queue;
when slots and queue are full it raises `ScannerBusy` and nothing was counted.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from sqlmodel import Session

from websec_app.clock import clock_for
from websec_app.scanner import ScanReport, parse_target, scan
from websec_app.services.admission import ScanAdmission, admission_for
from websec_app.services.metering import given_back_on_failure, record_report
from websec_app.services.pdf import render_scan_pdf, report_filename
from websec_app.settings import Settings, get_settings
from websec_app.store import (
    PLAN_LABELS,
    SCAN_FREE,
    SCAN_ONE_TIME,
    SCAN_PDF,
    SCAN_PRO,
    Database,
    KeyStatus,
    check_api_key,
    claim_scan_token,
    database_for,
    day_resets_at,
    find_report,
    month_resets_at,
    monthly_scan_limit,
    monthly_scans_used,
    recent_scans,
    refund,
    release_scan_token,
    report_ids_for_scans,
    reserve_free_scan,
    reserve_monthly_scan,
    save_report,
)
from websec_app.store.clients import free_scan_client, parse_networks

log = logging.getLogger(__name__)
T = TypeVar("T")

#: `await scanner(url, settings)` -> ScanReport (the API's Scanner type).
Scanner = Callable[[str, Settings], Awaitable[ScanReport]]
PdfRenderer = Callable[[Mapping[str, Any], str | None], bytes]
#: Told each step as it starts: "quota" (the unit or token is taken), "fetch" (the site is fetched and
#: checked), "save" (the report is rendered and stored). The UI shows them as a step indicator. Before
#: them, only when every scan slot of the process is busy, WAITING: the scan waits its turn in the queue.
Progress = Callable[[str], None]
STEPS = ("quota", "fetch", "save")
WAITING = "wait"


def no_progress(step: str) -> None:
    """The default Progress: nobody is watching."""


@dataclass(frozen=True)
class Backend:
    """The parts the flows use; `backend()` is the production set, tests build their own."""

    settings: Settings
    database: Database
    scanner: Scanner = scan
    render_pdf: PdfRenderer = render_scan_pdf
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    async def db(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`work(session, ...)` in a worker thread: the event loop serves other browsers meanwhile."""

        def run() -> T:
            with self.database.session() as session:
                return work(session, *args, **kwargs)

        return await anyio.to_thread.run_sync(run)

    @property
    def admission(self) -> ScanAdmission:
        """The process's scan slots for these settings: the same instance the API built with them takes from."""
        return admission_for(self.settings)


_backend: Backend | None = None


def backend() -> Backend:
    """The process-wide backend: the same settings and database (pool) as the mounted API."""
    global _backend
    if _backend is None:
        settings = get_settings()
        _backend = Backend(settings, database_for(settings.resolved_database_url), clock=clock_for(settings))
    return _backend


# --- results and refusals ---------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A report that was stored and can be shown: `report_id` is the last part of its link."""

    report_id: str
    body: dict[str, Any]


class QuotaUsed(Exception):
    """No scan left in the period; `resets_at` says when the counter starts again."""

    def __init__(self, limit: int, resets_at: datetime) -> None:
        super().__init__(f"quota of {limit} used up until {resets_at.isoformat()}")
        self.limit = limit
        self.resets_at = resets_at


class FreeQuotaUsed(QuotaUsed):
    """Today's free scans (per client address, UTC day) are used up."""


class MonthlyQuotaUsed(QuotaUsed):
    """The subscription's scans for this calendar month are used up."""


class KeyRefused(Exception):
    """The API key cannot be used: `reason` is a KeyStatus value, or "no_plan"."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"API key refused: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class ProAccount:
    key_id: int
    subscription_id: int
    email: str
    plan: str
    plan_label: str
    monthly_limit: int


@dataclass(frozen=True)
class Usage:
    used: int
    limit: int
    resets_at: datetime


@dataclass(frozen=True)
class RecentScan:
    scanned_at: datetime
    url: str
    grade: str
    score: int
    kind: str
    report_id: str  # "" when the scan was made through the API (no stored report)


@dataclass(frozen=True)
class PdfFile:
    filename: str
    data: bytes
    report_id: str


# --- helpers ------------------------------------------------------------------------------------


def _given_back_on_failure(b: Backend, release: Callable[..., None], *args: Any) -> AbstractAsyncContextManager[None]:
    """Give the reserved scan back if the block raises or is cancelled (services.metering)."""
    return given_back_on_failure(b.db, release, *args)


def _keep(session: Session, report: ScanReport, body: Mapping[str, Any], kind: str, now: datetime, **who: Any) -> str:
    """Record the scan in the history and store the report as shown; returns the report's link id."""
    record = record_report(session, report, kind=kind, now=now, **who)
    return save_report(session, body=body, kind=kind, now=now, scan_record_id=record.id).id


# --- free and one-time scans --------------------------------------------------------------------


def client_key(peer: str | None, forwarded_for: list[str], settings: Settings) -> str:
    """Whose free quota a browser's scans count against (the same key the API uses)."""
    return free_scan_client(peer, forwarded_for, parse_networks(settings.trusted_proxies))


async def free_scan(b: Backend, url: str, client: str, progress: Progress = no_progress) -> Shown:
    """A free scan: one unit of the client's daily quota. Raises ScanError, ScannerBusy or FreeQuotaUsed."""
    parse_target(url)  # a malformed URL costs nothing (InvalidTarget)
    async with scan_slot(b, progress):
        progress("quota")
        now = b.clock()
        limit = b.settings.free_scans_per_day
        reservation = await b.db(reserve_free_scan, client, now, limit)
        if reservation is None:
            raise FreeQuotaUsed(limit, day_resets_at(now))
        async with _given_back_on_failure(b, refund, reservation):
            progress("fetch")
            report = await b.scanner(url, b.settings)
            progress("save")
            body = report.to_dict(pro=False, include_fix=False)
            report_id = await b.db(_keep, report, body, SCAN_FREE, now, client=client)
    return Shown(report_id, body)


async def token_scan(b: Backend, url: str, token: str, progress: Progress = no_progress) -> Shown:
    """A paid one-time scan (full report with fixes). Raises ScanError, ScannerBusy or store.TokenRejected."""
    parse_target(url)
    async with scan_slot(b, progress):
        progress("quota")
        now = b.clock()
        claim = await b.db(claim_scan_token, token.strip(), now)
        async with _given_back_on_failure(b, release_scan_token, claim):
            progress("fetch")
            report = await b.scanner(url, b.settings)
            progress("save")
            body = report.to_dict(pro=True, include_fix=True)
            report_id = await b.db(_keep, report, body, SCAN_ONE_TIME, now, scan_token_id=claim.token_id)
    return Shown(report_id, body)


def scan_slot(b: Backend, progress: Progress = no_progress) -> AbstractAsyncContextManager[None]:
    """Hold one of the process's scan slots (shared with the API) for the block; when none is free, wait in
    the queue and tell `progress(WAITING)` first. Past the queue too: ScannerBusy, nothing taken."""
    return b.admission.slot(on_wait=lambda: progress(WAITING))


async def in_scan_slot(b: Backend, job: Callable[[], Awaitable[T]], progress: Progress = no_progress) -> T:
    """`await job()` holding one of the process's scan slots: for a scan job built elsewhere (the compliance
    report of `ui/purchases.py`), which claims its token only once admitted. Raises ScannerBusy."""
    async with scan_slot(b, progress):
        return await job()


async def load_report(b: Backend, report_id: str) -> dict[str, Any] | None:
    row = await b.db(find_report, report_id)
    return None if row is None else dict(row.body)


# --- Pro ----------------------------------------------------------------------------------------


def _account(session: Session, key: str, settings: Settings) -> ProAccount:
    check = check_api_key(session, key.strip())
    if not check.valid or check.key_id is None or check.subscription_id is None:
        raise KeyRefused(check.status.value if not check.valid else KeyStatus.UNKNOWN.value)
    plan = check.plan or ""
    limit = monthly_scan_limit(plan, settings)
    if limit <= 0:
        raise KeyRefused("no_plan")
    return ProAccount(check.key_id, check.subscription_id, check.email or "", plan, PLAN_LABELS.get(plan, plan), limit)


async def pro_account(b: Backend, key: str) -> ProAccount:
    """The subscription a key belongs to. Raises KeyRefused."""
    return await b.db(_account, key, b.settings)


async def usage(b: Backend, account: ProAccount) -> Usage:
    now = b.clock()
    used = await b.db(monthly_scans_used, account.subscription_id, now)
    return Usage(used, account.monthly_limit, month_resets_at(now))


async def _metered(b: Backend, account: ProAccount, progress: Progress) -> tuple[datetime, Any]:
    """Reserve one unit of the monthly quota (the caller checked the URL and holds a scan slot)."""
    progress("quota")
    now = b.clock()
    reservation = await b.db(reserve_monthly_scan, account.subscription_id, now, account.monthly_limit)
    if reservation is None:
        raise MonthlyQuotaUsed(account.monthly_limit, month_resets_at(now))
    return now, reservation


async def pro_scan(b: Backend, account: ProAccount, url: str, progress: Progress = no_progress) -> Shown:
    """A Pro scan: one unit of the monthly quota. Raises ScanError, ScannerBusy or MonthlyQuotaUsed."""
    parse_target(url)
    report_id, body, _ = await _metered_pro_scan(b, account, url, SCAN_PRO, progress, _nothing_more)
    return Shown(report_id, body)


async def _nothing_more(body: dict[str, Any]) -> None:
    return None


async def pro_pdf(
    b: Backend, account: ProAccount, url: str, client_name: str, progress: Progress = no_progress
) -> PdfFile:
    """A Pro scan rendered as the PDF report (one unit, as `POST /api/report/pdf`). Raises as pro_scan,
    or the renderer's exception (the unit is given back)."""
    name = client_name.strip()[:80] or None
    host = parse_target(url).host

    async def render(body: dict[str, Any]) -> bytes:
        return await anyio.to_thread.run_sync(b.render_pdf, body, name)

    report_id, _, data = await _metered_pro_scan(b, account, url, SCAN_PDF, progress, render)
    return PdfFile(report_filename(host), data, report_id)


async def _metered_pro_scan(
    b: Backend,
    account: ProAccount,
    url: str,
    kind: str,
    progress: Progress,
    finish: Callable[[dict[str, Any]], Awaitable[T]],
) -> tuple[str, dict[str, Any], T]:
    """In a scan slot: reserve a unit, scan, `finish` the Pro body (the PDF), keep the report; the unit is
    given back if any step fails. Returns the kept report's id, the body and what `finish` made."""
    async with scan_slot(b, progress):
        now, reservation = await _metered(b, account, progress)
        async with _given_back_on_failure(b, refund, reservation):
            progress("fetch")
            report = await b.scanner(url, b.settings)
            progress("save")
            body = report.to_dict(pro=True, include_fix=True)
            finished = await finish(body)
            report_id = await b.db(
                _keep, report, body, kind, now, subscription_id=account.subscription_id, api_key_id=account.key_id
            )
    return report_id, body, finished


def _recent(session: Session, subscription_id: int, limit: int) -> list[RecentScan]:
    records = recent_scans(session, subscription_id=subscription_id, limit=limit)
    links = report_ids_for_scans(session, [r.id for r in records if r.id is not None])
    return [
        RecentScan(r.created_at, r.final_url or r.url, r.grade, r.score, r.kind, links.get(r.id or 0, ""))
        for r in records
    ]


async def recent(b: Backend, account: ProAccount, limit: int = 10) -> list[RecentScan]:
    """The subscription's latest scans (UI and API alike), newest first."""
    return await b.db(_recent, account.subscription_id, limit)
