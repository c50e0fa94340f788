"""POST /api/report/pdf (spec 4.3): a Pro scan rendered as a PDF; counts as one scan."""

from __future__ import annotations

import logging

import anyio.to_thread
from fastapi import APIRouter
from fastapi.responses import Response

from websec_app.scanner import ScanReport
from websec_app.services.pdf import report_filename
from websec_app.store import SCAN_PDF

from .auth import ProKeyInLine
from .context import Context
from .docs import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from .errors import ApiError
from .metering import metered_pro_scan, target_of
from .schemas import PdfRequest

log = logging.getLogger(__name__)
router = APIRouter(tags=["reports"])

PDF_FAILED = "The PDF report could not be generated, so no scan was counted. Please try again."


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
) -> Response:
    """Runs a full Pro scan and returns it as a PDF, with `name` in the header. Consumes one scan of the monthly
    quota; a failed scan or a failed PDF consumes nothing."""
    name = (body.name or "").strip() or None
    host = target_of(body.url).host

    async def render(report: ScanReport) -> bytes:
        content = report.to_dict(pro=True, include_fix=True)
        try:
            return await anyio.to_thread.run_sync(ctx.render_pdf, content, name)
        except Exception as exc:  # noqa: BLE001 - any renderer failure is the spec's 500
            log.exception("PDF rendering failed for %s", report.url)
            raise ApiError(500, PDF_FAILED) from exc

    _, reservation, pdf = await metered_pro_scan(ctx, pro, body.url, SCAN_PDF, render)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={
            "Content-Disposition": f'attachment; filename="{report_filename(host)}"',
            "X-Scans-Remaining": str(reservation.remaining),
        },
    )
