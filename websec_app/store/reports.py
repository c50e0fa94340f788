"""Stored reports: what the web UI showed, kept behind an unguessable id for its shareable link."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from .models import StoredReport

#: 16 random bytes: 22 URL-safe characters, far too many to guess or enumerate.
_ID_BYTES = 16


def save_report(
    session: Session,
    *,
    body: Mapping[str, Any],
    kind: str,
    now: datetime,
    scan_record_id: int | None = None,
    commit: bool = True,
) -> StoredReport:
    """Keep a report as shown; the returned row's `id` goes into the link. `commit=False`: part of the
    caller's transaction (a scan job's end, which commits it with the job's result)."""
    row = StoredReport(
        id=secrets.token_urlsafe(_ID_BYTES),
        scan_record_id=scan_record_id,
        kind=kind,
        body=dict(body),
        created_at=now,
    )
    session.add(row)
    if not commit:
        session.flush()
        return row
    session.commit()
    session.refresh(row)
    return row


def find_report(session: Session, report_id: str) -> StoredReport | None:
    """The stored report with this id, or None (also for ids that cannot be ours)."""
    if not 0 < len(report_id) <= 32:
        return None
    return session.get(StoredReport, report_id)


def report_ids_for_scans(session: Session, scan_record_ids: Iterable[int]) -> dict[int, str]:
    """Scan record id -> stored report id, for the scans that have one (a history's "view" links)."""
    ids = [i for i in scan_record_ids if i is not None]
    if not ids:
        return {}
    rows = session.exec(
        select(StoredReport.scan_record_id, StoredReport.id).where(col(StoredReport.scan_record_id).in_(ids))
    )
    return {scan_id: report_id for scan_id, report_id in rows if scan_id is not None}
