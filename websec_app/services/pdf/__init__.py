"""PDF rendering. Pure: a report dict in, PDF bytes out (sending is someone else's job).

`render_scan_pdf` is the Pro PDF export of `POST /api/report/pdf` (spec 4.3);
`render_compliance_pdf` the compliance report of `POST /api/compliance-report/generate` (spec 4.8).
"""

from __future__ import annotations

import re

from ._layout import PdfRenderError
from .compliance_report import render_compliance_pdf
from .scan_report import render_scan_pdf


def report_filename(host: str, *, kind: str = "scan") -> str:
    """`<domain>-websec-report.pdf` (or `-websec-compliance.pdf`), safe in a quoted Content-Disposition."""
    safe = re.sub(r"[^A-Za-z0-9.-]+", "-", host).strip("-.") or "website"
    return f"{safe}-websec-{'compliance' if kind == 'compliance' else 'report'}.pdf"


__all__ = ["PdfRenderError", "render_compliance_pdf", "render_scan_pdf", "report_filename"]
