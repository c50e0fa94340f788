"""A subscriber's history of a site, the diff of two of its scans, and the public badge (issue 17).

The history is the subscription's, whichever of its keys made a scan: a rotated key keeps it. Another
subscriber's report, or an unknown id, is simply not found (nobody learns that an id exists).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session

from websec_app.scanner import parse_target
from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.store.history import history_page, kept_scan, kept_scan_before, latest_scan_of
from websec_app.store.models import ScanRecord

from .accounts import Subscriber
from .runtime import Runtime

#: The largest page of a history a client may ask for.
MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class HistoryEntry:
    report_id: str
    scanned_at: datetime
    grade: str
    score: int
    kind: str


@dataclass(frozen=True)
class HistoryPage:
    url: str
    entries: tuple[HistoryEntry, ...]
    total: int
    page: int
    per_page: int

    @property
    def has_more(self) -> bool:
        return self.page * self.per_page < self.total


@dataclass(frozen=True)
class KeptReport:
    report_id: str
    scanned_at: datetime
    body: dict[str, Any]
    kind: str  # what made the scan, as the history lists it: pro, pdf, monitor


@dataclass(frozen=True)
class ScanDiff:
    before: KeptReport | None  # None: the first kept scan of that URL: nothing to compare with
    after: KeptReport
    diff: ReportDiff | None


class AgainstNotFound(Exception):
    """`against` names no kept scan of the subscriber's (another's is not found either: nobody learns it exists)."""


class OtherUrl(Exception):
    """`against` is a kept scan of another URL than the scan it was to be compared with: a diff compares two
    scans of one URL. Both are the subscriber's, so both URLs may be named."""

    def __init__(self, url: str, against_url: str) -> None:
        super().__init__(f"{against_url} is not {url}")
        self.url = url
        self.against_url = against_url


def normalised_url(url: str) -> str:
    """The URL as reports record it (`parse_target`): raises InvalidTarget for one no scan would accept."""
    return parse_target(url).url


def _entry(record: ScanRecord, report_id: str) -> HistoryEntry:
    return HistoryEntry(report_id, record.created_at, record.grade, record.score, record.kind)


async def history(runtime: Runtime, subscriber: Subscriber, url: str, *, page: int, per_page: int) -> HistoryPage:
    """One page of the subscription's kept scans of `url`, newest first. Raises InvalidTarget."""
    wanted = normalised_url(url)
    page, per_page = max(1, page), min(max(1, per_page), MAX_PAGE_SIZE)
    rows, total = await runtime.db(
        history_page,
        subscription_id=subscriber.subscription_id,
        url=wanted,
        offset=(page - 1) * per_page,
        limit=per_page,
    )
    return HistoryPage(wanted, tuple(_entry(r, i) for r, i in rows), total, page, per_page)


async def kept_report(runtime: Runtime, subscriber: Subscriber, report_id: str) -> KeptReport | None:
    found = await runtime.db(kept_scan, subscription_id=subscriber.subscription_id, report_id=report_id)
    if found is None:
        return None
    record, stored = found
    return KeptReport(stored.id, record.created_at, dict(stored.body), record.kind)


def _diff_rows(session: Session, subscription_id: int, report_id: str, against: str | None) -> ScanDiff | None:
    found = kept_scan(session, subscription_id=subscription_id, report_id=report_id)
    if found is None:
        return None
    record, stored = found
    after = KeptReport(stored.id, record.created_at, dict(stored.body), record.kind)
    if against is not None:
        other = kept_scan(session, subscription_id=subscription_id, report_id=against)
        if other is None:
            raise AgainstNotFound(against)
        if other[0].url != record.url:
            raise OtherUrl(record.url, other[0].url)
    else:
        other = kept_scan_before(session, subscription_id=subscription_id, record=record)
    if other is None:
        return ScanDiff(None, after, None)
    before = KeptReport(other[1].id, other[0].created_at, dict(other[1].body), other[0].kind)
    return ScanDiff(before, after, diff_reports(before.body, after.body))


async def scan_diff(
    runtime: Runtime, subscriber: Subscriber, report_id: str, *, against: str | None = None
) -> ScanDiff | None:
    """A kept scan compared with `against` (another kept scan of the same URL) or with the one before it;
    None when `report_id` is not the subscriber's. Raises AgainstNotFound when `against` is not, OtherUrl when
    it is a scan of another URL."""
    return await runtime.db(_diff_rows, subscriber.subscription_id, report_id, against)


@dataclass(frozen=True)
class BadgeFacts:
    """All a badge tells: the latest grade of a URL and when; nothing else of the scan or who made it."""

    grade: str | None  # None: never scanned
    scanned_at: datetime | None


async def badge_facts(runtime: Runtime, url: str) -> BadgeFacts:
    """The latest scan of `url` by anyone. Never starts a scan. Raises InvalidTarget."""
    record = await runtime.db(latest_scan_of, normalised_url(url))
    return BadgeFacts(None, None) if record is None else BadgeFacts(record.grade, record.created_at)


__all__ = [
    "MAX_PAGE_SIZE",
    "AgainstNotFound",
    "BadgeFacts",
    "HistoryEntry",
    "HistoryPage",
    "KeptReport",
    "OtherUrl",
    "ScanDiff",
    "badge_facts",
    "history",
    "kept_report",
    "normalised_url",
    "scan_diff",
]
