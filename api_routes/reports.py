"""POST /api/report/pdf (spec 4.3): a Pro scan rendered as a PDF; counts as one scan."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import Response

from websec_app.services.pdf import PdfRenderError
from websec_app.usecases import scans

from .auth import ProKeyInLine
from .context import Context
from .docs import OVERLOADED, RETRY_AFTER, SCANS_REMAINING, errors
from .errors import ApiError
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
    try:
        pdf = await scans.pro_pdf(ctx, pro.subscriber, body.url, body.name, place=pro.place, keep=False)
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
