"""What the API and the web UI share around a metered scan (spec 8: a scan that fails consumes nothing).

Both reserve a unit (free, monthly or a token) with the store before scanning; these give it back
when the scan fails or the caller goes away, and record a delivered scan in the history.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import anyio
from sqlmodel import Session

from websec_app.scanner import ScanReport
from websec_app.store import ScanRecord, record_scan

log = logging.getLogger(__name__)

#: Runs `work(session, *args)` with a database session off the event loop (ApiContext.db, the UI's Backend.db).
DbCall = Callable[..., Awaitable[Any]]


@asynccontextmanager
async def given_back_on_failure(db: DbCall, release: Callable[..., None], *args: Any) -> AsyncIterator[None]:
    """Run `release(session, *args)` if the block raises or is cancelled (a closed tab, a dropped client)."""
    try:
        yield
    except BaseException:
        with anyio.CancelScope(shield=True):
            try:
                await db(release, *args)
            except Exception:  # noqa: BLE001 - report the original error, not the failed refund
                log.exception("could not give back a reserved scan (%s%r)", release.__name__, args)
        raise


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
