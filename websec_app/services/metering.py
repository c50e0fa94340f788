"""A delivered scan kept in the history (the worker's end of a scan job, and a monitor run)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session

from websec_app.scanner import ScanReport
from websec_app.store import ScanRecord, record_scan


def record_report(session: Session, report: ScanReport, *, kind: str, now: datetime, **who: Any) -> ScanRecord:
    """Keep a delivered scan in the history (who: subscription_id, api_key_id, scan_token_id or client)."""
    return record_scan(
        session,
        kind=kind,
        url=report.url,
        final_url=report.final_url,
        grade=report.grade,
        score=report.score,
        algorithm_version=report.algorithm_version,
        now=now,
        **who,
    )
