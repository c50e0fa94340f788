"""Quota and token accounting around a scan: take a unit first, give it back if no report comes out.

A scan that fails before producing a report (400 refused target, 502 unreachable), a
PDF that cannot be rendered, a crash or a cancelled request all release what they took;
only a delivered result keeps it. See `websec_app/store/quotas.py` for why this is exact
under concurrency.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, TypeVar

from websec_app.scanner import ScanReport, Target, parse_target
from websec_app.services.metering import given_back_on_failure, record_report
from websec_app.store import (
    Reservation,
    month_resets_at,
    refund,
    reserve_monthly_scan,
)
from websec_app.wording import counted

from .auth import InLine, Principal
from .context import ApiContext
from .errors import ApiError, iso

log = logging.getLogger(__name__)
T = TypeVar("T")


def released_on_failure(ctx: ApiContext, release: Callable[..., None], *args: Any) -> AbstractAsyncContextManager[None]:
    """Give the reserved scan back if the block raises or the client goes away (services.metering)."""
    return given_back_on_failure(ctx.db, release, *args)


def target_of(url: str) -> Target:
    """Validate the URL before anything is reserved (InvalidTarget -> 400)."""
    return parse_target(url)


def monthly_quota_exhausted(principal: Principal, now: datetime) -> ApiError:
    resets = month_resets_at(now)
    return ApiError(
        429,
        f"The monthly quota of {counted(principal.monthly_limit, 'scan')} is used up. "
        f"It resets on {resets:%Y-%m-%d} at 00:00 UTC ({iso(resets)}).",
        {"X-Scans-Remaining": "0", "Retry-After": str(max(1, int((resets - now).total_seconds())))},
    )


async def save_record(ctx: ApiContext, report: ScanReport, kind: str, now: datetime, **who: Any) -> None:
    """Keep the scan in the history. A failure here must not take a delivered result away."""
    try:
        await ctx.db(record_report, report, kind=kind, now=now, **who)
    except Exception:  # noqa: BLE001 - history is secondary to the paid result
        log.exception("could not record a %s scan of %s", kind, report.url)


async def metered_pro_scan(
    ctx: ApiContext,
    pro: InLine,
    url: str,
    kind: str,
    finish: Callable[[ScanReport], Awaitable[T]],
) -> tuple[ScanReport, Reservation, T]:
    """Wait for the scan slot of `pro`'s place in line, reserve one monthly scan, scan, `finish` the result;
    refund if any step fails. (The place is given back by the route's dependency, auth.ProKeyInLine.)"""
    target_of(url)
    if pro.place is not None:
        await pro.place.turn()
    principal = pro.principal
    now = ctx.now()
    reservation = await ctx.db(reserve_monthly_scan, principal.subscription_id, now, principal.monthly_limit)
    if reservation is None:
        raise monthly_quota_exhausted(principal, now)
    async with released_on_failure(ctx, refund, reservation):
        report = await ctx.scanner(url, ctx.settings)
        result = await finish(report)
    await save_record(ctx, report, kind, now, subscription_id=principal.subscription_id, api_key_id=principal.key_id)
    return report, reservation, result
