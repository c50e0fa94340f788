"""The scans: POST /api/scan (free, or with a one-time token), POST /api/scan/pro and POST /api/report/pdf
(spec 4.1, 4.2, 4.3). Each translates the request to one use case (`websec_app.usecases.jobs`: every scan is
a job of the task engine) and its result or refusal back to HTTP."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import Request as StarletteRequest

from websec_app.services.pdf import PdfRenderError
from websec_app.store import TokenRejected
from websec_app.store.clients import Address, Network, quota_key, resolve_client
from websec_app.usecases import jobs

from ..auth import ProKeyInLine
from ..context import Context
from ..errors import SCAN_TOKEN_MESSAGES, ApiError, remaining_told_on_error, token_error
from ..openapi import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from ..schemas import FreeScanResult, PdfRequest, ProScanRequest, ProScanResult, ScanRequest

log = logging.getLogger(__name__)
router = APIRouter(tags=["scans"])

PDF_FAILED = "The PDF report could not be generated, so no scan was counted. Please try again."


def client_address(request: StarletteRequest, proxies: Sequence[Network]) -> Address | None:
    """Whose free quota a request counts against: the socket peer, or X-Forwarded-For from a trusted proxy
    (the rules, shared with the web UI, are websec_app/store/clients.py)."""
    peer = request.client.host if request.client else None
    return resolve_client(peer, request.headers.getlist("x-forwarded-for"), proxies)


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
    full: Annotated[
        Literal["1", "0"] | None,
        # Exactly spec 4.1's `1` (and its `0`): pydantic's bool would also take true/yes/on/off.
        Query(description="`1` includes the fix values in the response; `0` or absent leaves them out."),
    ] = None,
) -> JSONResponse:
    """Scans a website. Counts against the per-IP daily quota (`WEBSEC_FREE_SCANS_PER_DAY`, reset at midnight
    UTC), unless a valid one-time scan token is given: then it is a full Pro scan that uses up the token.
    A scan that fails (400, 502) consumes nothing."""
    token = (body.one_time_token or "").strip()
    if token:
        try:
            scanned = await jobs.token_scan(ctx, body.url, token)
        except TokenRejected as exc:
            raise token_error(exc, SCAN_TOKEN_MESSAGES) from None
        return JSONResponse(scanned.body)
    client = quota_key(client_address(request, ctx.trusted_proxies))
    scanned = await jobs.free_scan(ctx, body.url, client, include_fix=full == "1")
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
    request: Request,
) -> JSONResponse:
    """Full scan with fix values, cookies and cross-origin isolation. Consumes one scan of the monthly quota
    (50 for Pro, reset on the 1st, UTC); a scan that fails (400, 502) consumes nothing."""
    async with remaining_told_on_error(request, ctx, pro.subscriber):
        scanned = await jobs.pro_scan(ctx, pro.subscriber, body.url, place=pro.place)
    return JSONResponse(scanned.body, headers={"X-Scans-Remaining": str(scanned.remaining or 0)})


@router.post(
    "/api/report/pdf",
    summary="PDF report of a Pro scan (X-API-Key)",
    response_class=Response,
    responses={
        200: {
            "description": "The PDF (attachment named `<domain>-websec-report.pdf`).",
            "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
            "headers": {
                **SCANS_REMAINING,
                "Content-Disposition": {
                    "description": 'attachment; filename="<domain>-websec-report.pdf"',
                    "schema": {"type": "string"},
                },
            },
        },
        **errors(400, 401, 403, 502, e500="The PDF could not be generated (no scan is counted)."),
        429: {**errors(429)[429], "headers": {**SCANS_REMAINING, **RETRY_AFTER}},
        500: errors(500, e500="The PDF could not be generated (no scan is counted).")[500],
        **OVERLOADED,
    },
)
async def pdf_report(
    body: PdfRequest,
    pro: ProKeyInLine,
    ctx: Context,
    request: Request,
) -> Response:
    """Runs a full Pro scan and returns it as a PDF, with `name` in the header. Consumes one scan of the monthly
    quota; a failed scan or a failed PDF consumes nothing."""
    async with remaining_told_on_error(request, ctx, pro.subscriber):
        try:
            pdf = await jobs.pro_pdf(ctx, pro.subscriber, body.url, body.name, place=pro.place)
        except PdfRenderError as exc:
            log.exception("PDF rendering failed for %s", body.url)
            raise ApiError(500, PDF_FAILED) from exc
    return Response(
        pdf.data,
        media_type="application/pdf",
        headers={
            "Content-Disposition": f'attachment; filename="{pdf.filename}"',
            "X-Scans-Remaining": str(pdf.remaining),
        },
    )
