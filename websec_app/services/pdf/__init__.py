"""PDF rendering. Pure: a report dict in, PDF bytes out (sending is someone else's job).

`render_scan_pdf` is the Pro PDF export of `POST /api/report/pdf` (spec 4.3); the
compliance report (issue 5) will live beside it.
"""

from __future__ import annotations

from .scan_report import PdfRenderError, render_scan_pdf

__all__ = ["PdfRenderError", "render_scan_pdf"]
