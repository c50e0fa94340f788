"""POST /api/scan (free, or with a one-time token) and POST /api/scan/pro (spec 4.1, 4.2)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from websec_app.store import TokenRejected
from websec_app.usecases import scans

from .auth import ProKeyInLine
from .client_ip import client_address, quota_key
from .context import Context
from .docs import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from .errors import SCAN_TOKEN_MESSAGES, token_error
from .schemas import FreeScanResult, ProScanRequest, ProScanResult, ScanRequest

router = APIRouter(tags=["scans"])

_FREE_429 = "The free daily scan limit of this IP address is used up; it resets at midnight UTC."


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
    token = (body.one_time_token or "").strip()
    if token:
        try:
            scanned = await scans.token_scan(ctx, body.url, token, keep=False)
        except TokenRejected as exc:
            raise token_error(exc, SCAN_TOKEN_MESSAGES) from None
        return JSONResponse(scanned.body)
    client = quota_key(client_address(request, ctx.trusted_proxies))
    scanned = await scans.free_scan(ctx, body.url, client, include_fix=full, keep=False)
    return JSONResponse(scanned.body)


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
    scanned = await scans.pro_scan(ctx, pro.subscriber, body.url, place=pro.place, keep=False)
    return JSONResponse(scanned.body, headers={"X-Scans-Remaining": str(scanned.remaining)})
