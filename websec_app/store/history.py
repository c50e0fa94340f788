"""A subscriber's kept scans of one URL (issue 17), and the latest scan of a URL by anyone (the badge).

A kept scan is a `scan_records` row with its `stored_reports` body. Both tables are the subscription's
history whatever key made the scan, so a rotated key keeps it.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func
from sqlmodel import Session, col, select

from .models import ScanRecord, StoredReport


def history_page(
    session: Session, *, subscription_id: int, url: str, offset: int, limit: int
) -> tuple[list[tuple[ScanRecord, str]], int]:
    """The subscription's kept scans of `url`, newest first: one page of (record, report id), and the total."""
    kept = (
        select(ScanRecord, StoredReport.id)
        .join(StoredReport, col(StoredReport.scan_record_id) == col(ScanRecord.id))
        .where(ScanRecord.subscription_id == subscription_id, ScanRecord.url == url)
    )
    rows = session.exec(
        kept.order_by(col(ScanRecord.created_at).desc(), col(ScanRecord.id).desc()).offset(offset).limit(limit)
    ).all()
    total = session.exec(
        select(func.count())
        .select_from(ScanRecord)
        .join(StoredReport, col(StoredReport.scan_record_id) == col(ScanRecord.id))
        .where(ScanRecord.subscription_id == subscription_id, ScanRecord.url == url)
    ).one()
    return [(record, str(report_id)) for record, report_id in rows], int(total)


def kept_scan(session: Session, *, subscription_id: int, report_id: str) -> tuple[ScanRecord, StoredReport] | None:
    """The subscription's kept scan with this report id; None for another subscription's or an unknown id."""
    if not 0 < len(report_id) <= 32:
        return None
    row = session.exec(
        select(ScanRecord, StoredReport)
        .join(StoredReport, col(StoredReport.scan_record_id) == col(ScanRecord.id))
        .where(StoredReport.id == report_id, ScanRecord.subscription_id == subscription_id)
    ).first()
    return None if row is None else (row[0], row[1])


def _before(subscription_id: int, record: ScanRecord) -> ColumnElement[bool]:
    """The subscription's scans of `record`'s URL made before it (the history's order: time, then id)."""
    return and_(
        col(ScanRecord.subscription_id) == subscription_id,
        col(ScanRecord.url) == record.url,
        (col(ScanRecord.created_at) < record.created_at)
        | ((col(ScanRecord.created_at) == record.created_at) & (col(ScanRecord.id) < record.id)),
    )


def kept_scan_before(
    session: Session, *, subscription_id: int, record: ScanRecord
) -> tuple[ScanRecord, StoredReport] | None:
    """The subscription's kept scan of the same URL just before `record` (the one a diff compares with)."""
    row = session.exec(
        select(ScanRecord, StoredReport)
        .join(StoredReport, col(StoredReport.scan_record_id) == col(ScanRecord.id))
        .where(_before(subscription_id, record))
        .order_by(col(ScanRecord.created_at).desc(), col(ScanRecord.id).desc())
    ).first()
    return None if row is None else (row[0], row[1])


def kept_report_ids_before(session: Session, *, subscription_id: int, record: ScanRecord, limit: int) -> list[str]:
    """The report ids of the subscription's kept scans of the same URL before `record`, newest first, at most
    `limit` (ids only: a caller reads the bodies it needs one by one)."""
    rows = session.exec(
        select(StoredReport.id)
        .join(ScanRecord, col(StoredReport.scan_record_id) == col(ScanRecord.id))
        .where(_before(subscription_id, record))
        .order_by(col(ScanRecord.created_at).desc(), col(ScanRecord.id).desc())
        .limit(limit)
    ).all()
    return [str(report_id) for report_id in rows]


def latest_scan_of(session: Session, url: str) -> ScanRecord | None:
    """The newest scan of `url` by anyone, of any kind (the public badge shows its grade and date only)."""
    return session.exec(
        select(ScanRecord)
        .where(ScanRecord.url == url)
        .order_by(col(ScanRecord.created_at).desc(), col(ScanRecord.id).desc())
        .limit(1)
    ).first()
