"""POST /api/scan (free, or with a one-time token) and POST /api/scan/pro (spec 4.1, 4.2)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from websec_app.scanner import ScanReport
from websec_app.store import (
    SCAN_FREE,
    SCAN_ONE_TIME,
    SCAN_PRO,
    TokenRejected,
    claim_scan_token,
    day_resets_at,
    refund,
    release_scan_token,
    reserve_free_scan,
)
from websec_app.wording import counted

from .auth import ProKeyInLine
from .client_ip import client_address, quota_key
from .context import ApiContext, Context
from .docs import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from .errors import SCAN_TOKEN_MESSAGES, ApiError, iso, token_error
from .metering import metered_pro_scan, released_on_failure, save_record, target_of
from .schemas import FreeScanResult, ProScanRequest, ProScanResult, ScanRequest

router = APIRouter(tags=["scans"])

_FREE_429 = "The free daily scan limit of this IP address is used up; it resets at midnight UTC."


def free_quota_exhausted(limit: int, now: datetime) -> ApiError:
    resets = day_resets_at(now)
    return ApiError(
        429,
        f"The free scan limit of {counted(limit, 'scan')} per day for your IP address is reached. "
        f"It resets at midnight UTC ({iso(resets)}); a Pro key or a one-time scan token scans without this limit.",
        {"Retry-After": str(max(1, int((resets - now).total_seconds())))},
    )


@router.post(
    "/api/scan",
    summary="Free scan (no key)",
    response_model=None,
    responses={
        200: {
            "description": "Spec 2.1 (free scan). With a valid `one_time_token`: the full spec 2.2 shape, "
            "`pro_locked: false`.",
            "model": FreeScanResult | ProScanResult,
        },
        **errors(
            400,
            403,
            429,
            500,
            502,
            e403="The one-time scan token is unknown, expired (older than 24 hours) or already used.",
            e429=_FREE_429,
        ),
        429: {**errors(429, e429=_FREE_429)[429], "headers": RETRY_AFTER},
        **OVERLOADED,
    },
)
async def free_scan(
    body: ScanRequest,
    request: Request,
    ctx: Context,
    full: Annotated[bool, Query(description="`1` includes the fix values in the response.")] = False,
) -> JSONResponse:
    """Scans a website. Counts against the per-IP daily quota (`WEBSEC_FREE_SCANS_PER_DAY`, reset at midnight
    UTC), unless a valid one-time scan token is given: then it is a full Pro scan that uses up the token.
    A scan that fails (400, 502) consumes nothing."""
    target_of(body.url)
    async with ctx.scan_slot():
        return await _free_or_one_time_scan(ctx, body, request, full)


async def _free_or_one_time_scan(ctx: ApiContext, body: ScanRequest, request: Request, full: bool) -> JSONResponse:
    token = (body.one_time_token or "").strip()
    if token:
        return await _one_time_scan(ctx, body.url, token)
    now = ctx.now()
    client = quota_key(client_address(request, ctx.trusted_proxies))
    limit = ctx.settings.free_scans_per_day
    reservation = await ctx.db(reserve_free_scan, client, now, limit)
    if reservation is None:
        raise free_quota_exhausted(limit, now)
    async with released_on_failure(ctx, refund, reservation):
        report = await ctx.scanner(body.url, ctx.settings)
        content = report.to_dict(pro=False, include_fix=full)
    await save_record(ctx, report, SCAN_FREE, now, client=client)
    return JSONResponse(content)


async def _one_time_scan(ctx: ApiContext, url: str, token: str) -> JSONResponse:
    now = ctx.now()
    try:
        claim = await ctx.db(claim_scan_token, token, now)
    except TokenRejected as exc:
        raise token_error(exc, SCAN_TOKEN_MESSAGES) from None
    async with released_on_failure(ctx, release_scan_token, claim):
        report: ScanReport = await ctx.scanner(url, ctx.settings)
        content = report.to_dict(pro=True, include_fix=True)
    await save_record(ctx, report, SCAN_ONE_TIME, now, scan_token_id=claim.token_id)
    return JSONResponse(content)


@router.post(
    "/api/scan/pro",
    summary="Pro scan (X-API-Key)",
    response_model=None,
    responses={
        200: {"model": ProScanResult, "description": "Spec 2.2.", "headers": SCANS_REMAINING},
        **errors(400, 401, 403, 500, 502),
        429: {**errors(429)[429], "headers": {**SCANS_REMAINING, **RETRY_AFTER}},
        **OVERLOADED,
    },
)
async def pro_scan(
    body: ProScanRequest,
    pro: ProKeyInLine,
    ctx: Context,
) -> JSONResponse:
    """Full scan with fix values, cookies and cross-origin isolation. Consumes one scan of the monthly quota
    (50 for Pro, reset on the 1st, UTC); a scan that fails (400, 502) consumes nothing."""

    async def finish(report: ScanReport) -> dict[str, object]:
        return report.to_dict(pro=True, include_fix=True)

    _, reservation, content = await metered_pro_scan(ctx, pro, body.url, SCAN_PRO, finish)
    return JSONResponse(content, headers={"X-Scans-Remaining": str(reservation.remaining)})
