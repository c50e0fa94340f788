"""Scan records: who scanned what, when, and the result (enough to show a history)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from .models import ScanRecord


def record_scan(
    session: Session,
    *,
    kind: str,
    url: str,
    final_url: str,
    grade: str,
    score: int,
    algorithm_version: str,
    now: datetime,
    subscription_id: int | None = None,
    api_key_id: int | None = None,
    scan_token_id: int | None = None,
    client: str | None = None,
    commit: bool = True,
) -> ScanRecord:
    """Keep a scan in the history. `commit=False`: part of the caller's transaction (a scan job's end)."""
    record = ScanRecord(
        kind=kind,
        url=url[:2048],
        final_url=final_url[:2048],
        grade=grade,
        score=score,
        algorithm_version=algorithm_version,
        created_at=now,
        subscription_id=subscription_id,
        api_key_id=api_key_id,
        scan_token_id=scan_token_id,
        client=client,
    )
    session.add(record)
    if not commit:
        session.flush()
        return record
    session.commit()
    session.refresh(record)
    return record


def recent_scans(
    session: Session, *, subscription_id: int | None = None, client: str | None = None, limit: int = 20
) -> list[ScanRecord]:
    """Newest first, for one subscription or one free-scan client."""
    query = select(ScanRecord)
    if subscription_id is not None:
        query = query.where(ScanRecord.subscription_id == subscription_id)
    elif client is not None:
        query = query.where(ScanRecord.client == client)
    else:
        raise ValueError("give a subscription id or a client")
    return list(session.exec(query.order_by(col(ScanRecord.created_at).desc(), col(ScanRecord.id).desc()).limit(limit)))
