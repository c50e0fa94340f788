"""The metered scans, for every interface: free, one-time token, Pro, and the Pro PDF (spec 4.1, 4.2, 4.3).

Each one, in this order: check the URL (a malformed one costs nothing), take a place in the process's scan
line (`ScannerBusy` when it is full: nothing taken), reserve a unit (the client's free day, the
subscription's month, or the token), scan, shape the body, and keep the scan in the history. A scan that
produces nothing (refused, unreachable, a PDF that cannot be rendered, a client that goes away) gives its
unit back (`services.metering.given_back_on_failure`); only a delivered result keeps it. Quotas are exact
under concurrency because the units live in the database (store/quotas.py).

`progress(step)` is told each step as it starts (the UI's step indicator): WAITING only when every scan
slot is busy, then "quota", "fetch", "save".
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread
from sqlmodel import Session

from websec_app.scanner import ScanReport, parse_target
from websec_app.services.admission import Place
from websec_app.services.metering import given_back_on_failure, record_report
from websec_app.services.pdf import PdfRenderError, report_filename
from websec_app.store import (
    SCAN_FREE,
    SCAN_ONE_TIME,
    SCAN_PDF,
    SCAN_PRO,
    Reservation,
    claim_scan_token,
    day_resets_at,
    find_report,
    month_resets_at,
    refund,
    release_scan_token,
    reserve_free_scan,
    reserve_monthly_scan,
    save_report,
)
from websec_app.store.clients import free_scan_client

from .accounts import Subscriber
from .errors import FreeQuotaUsed, MonthlyQuotaUsed
from .runtime import Runtime

T = TypeVar("T")
log = logging.getLogger(__name__)

Progress = Callable[[str], None]
STEPS = ("quota", "fetch", "save")
WAITING = "wait"


def no_progress(step: str) -> None:
    """The default Progress: nobody is watching."""


@dataclass(frozen=True)
class Scanned:
    """A delivered scan: the report (None when a worker of the task engine scanned it: usecases/jobs.py
    `kept_*`), the body as shown, the kept report's id ("" when not kept) and, for a metered Pro scan, the
    scans left this month."""

    report: ScanReport | None
    body: dict[str, Any]
    report_id: str = ""
    remaining: int | None = None


@dataclass(frozen=True)
class PdfFile:
    filename: str
    data: bytes
    report_id: str
    remaining: int


def client_key(peer: str | None, forwarded_for: list[str], runtime: Runtime) -> str:
    """Whose free quota a request's scans count against (socket peer, X-Forwarded-For only from trusted
    proxies, IPv6 per /64: store/clients.py)."""
    return free_scan_client(peer, forwarded_for, runtime.trusted_proxies)


@asynccontextmanager
async def _in_line(runtime: Runtime, place: Place | None, progress: Progress) -> AsyncIterator[None]:
    """Hold a scan slot for the block: the caller's place taken on arrival (the API's Pro endpoints, see
    api_routes auth), which the caller gives back, or a new one."""
    if place is not None:
        await place.turn()
        yield
        return
    async with runtime.scan_slot(on_wait=lambda: progress(WAITING)):
        yield


def _keep(session: Session, report: ScanReport, body: Mapping[str, Any], kind: str, now: datetime, **who: Any) -> str:
    """Record the scan in the history and store the body as shown; returns its link id."""
    record = record_report(session, report, kind=kind, now=now, **who)
    return save_report(session, body=body, kind=kind, now=now, scan_record_id=record.id).id


async def record_quietly(
    runtime: Runtime,
    report: ScanReport,
    kind: str,
    now: datetime,
    *,
    body: Mapping[str, Any] | None = None,
    **who: Any,
) -> str:
    """Record a delivered scan in the history, with its body when given (a subscriber's history keeps every
    Pro report: issue 17); returns the kept report's id, or "". A failure here is logged and never takes the
    result away."""
    try:
        if body is not None:
            return str(await runtime.db(_keep, report, body, kind, now, **who))
        await runtime.db(record_report, report, kind=kind, now=now, **who)
    except Exception:  # noqa: BLE001 - the history is secondary to the delivered (maybe paid) result
        log.exception("could not record a %s scan of %s", kind, report.url)
    return ""


async def _deliver(
    runtime: Runtime, report: ScanReport, body: Mapping[str, Any], kind: str, now: datetime, keep: bool, **who: Any
) -> str:
    """Inside the metered block: with `keep`, store the report (its link is part of the result, so a failure
    gives the unit back). Without, nothing here: the caller records the history after the block."""
    return await runtime.db(_keep, report, body, kind, now, **who) if keep else ""


async def free_scan(
    runtime: Runtime,
    url: str,
    client: str,
    *,
    include_fix: bool = False,
    keep: bool = True,
    progress: Progress = no_progress,
) -> Scanned:
    """A free scan (spec 2.1 body): one unit of the client's daily quota.
    Raises ScanError, ScannerBusy or FreeQuotaUsed."""
    parse_target(url)
    async with _in_line(runtime, None, progress):
        progress("quota")
        now = runtime.now()
        limit = runtime.settings.free_scans_per_day
        reservation = await runtime.db(reserve_free_scan, client, now, limit)
        if reservation is None:
            raise FreeQuotaUsed(limit, day_resets_at(now))
        async with given_back_on_failure(runtime.db, refund, reservation):
            progress("fetch")
            report = await runtime.scanner(url, runtime.settings)
            progress("save")
            body = report.to_dict(pro=False, include_fix=include_fix)
            report_id = await _deliver(runtime, report, body, SCAN_FREE, now, keep, client=client)
    if not keep:
        await record_quietly(runtime, report, SCAN_FREE, now, client=client)
    return Scanned(report, body, report_id)


async def token_scan(
    runtime: Runtime, url: str, token: str, *, keep: bool = True, progress: Progress = no_progress
) -> Scanned:
    """A paid one-time scan (spec 2.2 body, fixes included): uses up the token.
    Raises ScanError, ScannerBusy or store.TokenRejected."""
    parse_target(url)
    async with _in_line(runtime, None, progress):
        progress("quota")
        now = runtime.now()
        claim = await runtime.db(claim_scan_token, token.strip(), now)
        async with given_back_on_failure(runtime.db, release_scan_token, claim):
            progress("fetch")
            report = await runtime.scanner(url, runtime.settings)
            progress("save")
            body = report.to_dict(pro=True, include_fix=True)
            report_id = await _deliver(runtime, report, body, SCAN_ONE_TIME, now, keep, scan_token_id=claim.token_id)
    if not keep:
        await record_quietly(runtime, report, SCAN_ONE_TIME, now, scan_token_id=claim.token_id)
    return Scanned(report, body, report_id)


async def _reserve_month(runtime: Runtime, subscriber: Subscriber) -> tuple[datetime, Reservation]:
    now = runtime.now()
    reservation = await runtime.db(reserve_monthly_scan, subscriber.subscription_id, now, subscriber.monthly_limit)
    if reservation is None:
        raise MonthlyQuotaUsed(subscriber.monthly_limit, month_resets_at(now))
    return now, reservation


async def _metered_pro_scan(
    runtime: Runtime,
    subscriber: Subscriber,
    url: str,
    kind: str,
    finish: Callable[[dict[str, Any]], Awaitable[T]],
    *,
    place: Place | None,
    keep: bool,
    progress: Progress,
) -> tuple[Scanned, T]:
    """In a scan slot: reserve a month's unit, scan, `finish` the Pro body, keep it; refund on any failure."""
    parse_target(url)
    who = {"subscription_id": subscriber.subscription_id, "api_key_id": subscriber.key_id}
    async with _in_line(runtime, place, progress):
        progress("quota")
        now, reservation = await _reserve_month(runtime, subscriber)
        async with given_back_on_failure(runtime.db, refund, reservation):
            progress("fetch")
            report = await runtime.scanner(url, runtime.settings)
            progress("save")
            body = report.to_dict(pro=True, include_fix=True)
            finished = await finish(body)
            report_id = await _deliver(runtime, report, body, kind, now, keep, **who)
    if not keep:  # the subscriber's history keeps the report all the same, outside the metered block
        report_id = await record_quietly(runtime, report, kind, now, body=body, **who)
    return Scanned(report, body, report_id, reservation.remaining), finished


async def _as_is(body: dict[str, Any]) -> None:
    return None


async def pro_scan(
    runtime: Runtime,
    subscriber: Subscriber,
    url: str,
    *,
    place: Place | None = None,
    keep: bool = True,
    progress: Progress = no_progress,
) -> Scanned:
    """A Pro scan (spec 2.2 body): one unit of the monthly quota.
    Raises ScanError, ScannerBusy or MonthlyQuotaUsed."""
    scanned, _ = await _metered_pro_scan(
        runtime, subscriber, url, SCAN_PRO, _as_is, place=place, keep=keep, progress=progress
    )
    return scanned


async def pro_pdf(
    runtime: Runtime,
    subscriber: Subscriber,
    url: str,
    client_name: str | None,
    *,
    place: Place | None = None,
    keep: bool = True,
    progress: Progress = no_progress,
) -> PdfFile:
    """A Pro scan rendered as the PDF report (one unit of the month). Raises as pro_scan, or PdfRenderError
    when the renderer fails (the unit is given back)."""
    name = (client_name or "").strip()[:80] or None
    host = parse_target(url).host

    async def render(body: dict[str, Any]) -> bytes:
        try:
            return await anyio.to_thread.run_sync(runtime.render_pdf, body, name)
        except Exception as exc:  # noqa: BLE001 - any renderer failure is the PDF's failure
            raise PdfRenderError(f"the PDF report of {url} could not be rendered: {exc}") from exc

    scanned, data = await _metered_pro_scan(
        runtime, subscriber, url, SCAN_PDF, render, place=place, keep=keep, progress=progress
    )
    return PdfFile(report_filename(host), data, scanned.report_id, scanned.remaining or 0)


async def load_report(runtime: Runtime, report_id: str) -> dict[str, Any] | None:
    """A kept report's body, as it was shown (the UI's shareable /report/<id> link)."""
    row = await runtime.db(find_report, report_id)
    return None if row is None else dict(row.body)


__all__ = [
    "STEPS",
    "WAITING",
    "PdfFile",
    "Progress",
    "Scanned",
    "client_key",
    "free_scan",
    "load_report",
    "no_progress",
    "pro_pdf",
    "pro_scan",
    "record_quietly",
    "token_scan",
]
