"""The Pro scan PDF: cover lines, grade and score, issue counts, then every section with its findings.

Everything that comes from the scanned site or the user (header values, notes, the
client `name`) is escaped before it reaches reportlab's mini-markup, so a hostile
header value cannot inject markup into the document.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

#: Section titles, in report order (keys of the spec 2.2 body).
SECTION_TITLES = {
    "headers": "HTTP security headers",
    "tls": "TLS / SSL certificate",
    "dns": "DNS configuration",
    "cookies": "Cookies",
    "cross_origin": "Cross-origin isolation",
    "security_txt": "security.txt",
    "cors": "CORS policy",
    "server_fingerprint": "Server version disclosure",
    "page_analysis": "Page content",
    "redirection": "HTTP to HTTPS redirection",
}
_STATUS_COLOURS = {
    "good": colors.HexColor("#1a7f37"),
    "missing": colors.HexColor("#cf222e"),
    "bad": colors.HexColor("#cf222e"),
    "weak": colors.HexColor("#bc4c00"),
    "warn": colors.HexColor("#9a6700"),
}
_MAX_VALUE_CHARS = 300


class PdfRenderError(Exception):
    """The PDF could not be produced (the API answers 500 and counts no scan)."""


def _text(value: Any, limit: int = _MAX_VALUE_CHARS) -> str:
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return escape(text)


def _styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    return {
        "title": ParagraphStyle("title", parent=base["Title"]),
        "h2": ParagraphStyle("h2", parent=base["Heading2"]),
        "body": ParagraphStyle("body", parent=base["BodyText"]),
        "small": ParagraphStyle("small", parent=base["BodyText"], fontSize=8, leading=10),
        "grade": ParagraphStyle("grade", parent=base["Title"], fontSize=40, leading=46),
    }


def _status(status: Any) -> str:
    colour = _STATUS_COLOURS.get(str(status), colors.black)
    return f'<font color="{colour.hexval()}"><b>{_text(status)}</b></font>'


def _header_table(headers: Mapping[str, Any], styles: dict[str, ParagraphStyle]) -> Flowable:
    small = styles["small"]
    rows: list[list[Any]] = [
        [
            Paragraph("<b>Header</b>", small),
            Paragraph("<b>Status</b>", small),
            Paragraph("<b>Value / recommendation</b>", small),
        ]
    ]
    for name, header in headers.items():
        if not isinstance(header, Mapping):
            continue
        detail = f"<b>Value:</b> {_text(header.get('value') or 'not sent')}"
        if header.get("note"):
            detail += f"<br/><b>Note:</b> {_text(header.get('note'))}"
        if header.get("explanation"):
            detail += f"<br/>{_text(header.get('explanation'))}"
        if header.get("fix"):
            detail += f"<br/><b>Fix:</b> <font face='Courier'>{_text(header.get('fix'))}</font>"
        status = (
            f"{_status(header.get('status'))}<br/>{_text(header.get('severity'))}, -{_text(header.get('deduction'))}"
        )
        rows.append([Paragraph(_text(name), small), Paragraph(status, small), Paragraph(detail, small)])
    table = Table(rows, colWidths=[45 * mm, 25 * mm, 100 * mm], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def _findings(findings: Any, styles: dict[str, ParagraphStyle]) -> list[Flowable]:
    flow: list[Flowable] = []
    if not isinstance(findings, list) or not findings:
        return [Paragraph("No findings.", styles["small"])]
    for finding in findings:
        if not isinstance(finding, Mapping):
            continue
        line = (
            f"{_status(finding.get('status'))} <b>{_text(finding.get('check'))}</b> "
            f"({_text(finding.get('severity'))}, -{_text(finding.get('deduction'))})"
        )
        if finding.get("cwe"):
            line += f" {_text(finding.get('cwe'))}"
        if finding.get("explanation"):
            line += f"<br/>{_text(finding.get('explanation'))}"
        if finding.get("subjects"):
            line += f"<br/><b>Affects:</b> {_text(', '.join(map(str, finding['subjects'])))}"
        if finding.get("note"):
            line += f"<br/><b>Note:</b> {_text(finding.get('note'))}"
        if finding.get("fix"):
            line += f"<br/><b>Fix:</b> <font face='Courier'>{_text(finding.get('fix'))}</font>"
        flow.append(Paragraph(line, styles["small"]))
        flow.append(Spacer(1, 2 * mm))
    return flow


def _story(report: Mapping[str, Any], name: str | None) -> list[Flowable]:
    styles = _styles()
    story: list[Flowable] = [Paragraph("Website security report", styles["title"])]
    if name:
        story.append(Paragraph(f"Prepared for <b>{_text(name, 80)}</b>", styles["body"]))
    story.append(Paragraph(f"Target: {_text(report.get('url'))}", styles["body"]))
    if report.get("final_url") and report.get("final_url") != report.get("url"):
        story.append(Paragraph(f"Final URL: {_text(report.get('final_url'))}", styles["body"]))
    if report.get("scanned_at"):
        story.append(Paragraph(f"Scanned at: {_text(report.get('scanned_at'))}", styles["body"]))
    story.append(Spacer(1, 4 * mm))
    story.append(Paragraph(f"Grade {_text(report.get('grade'))}", styles["grade"]))
    story.append(Paragraph(f"Score: <b>{_text(report.get('score'))}</b> / 100", styles["body"]))
    counts = report.get("issue_counts")
    if isinstance(counts, Mapping):
        story.append(
            Paragraph(
                f"Issues: {_text(counts.get('critical', 0))} critical, {_text(counts.get('important', 0))} important, "
                f"{_text(counts.get('minor', 0))} minor",
                styles["body"],
            )
        )
    for key, title in SECTION_TITLES.items():
        section = report.get(key)
        if not isinstance(section, Mapping):
            continue
        story.append(Spacer(1, 4 * mm))
        if key == "headers":
            story.append(Paragraph(title, styles["h2"]))
            story.append(_header_table(section, styles))
            continue
        heading = f"{title}: {_status(section.get('status'))}"
        if section.get("deduction"):
            heading += f" (-{_text(section.get('deduction'))})"
        story.append(Paragraph(heading, styles["h2"]))
        story.extend(_findings(section.get("findings"), styles))
    grading = report.get("grading")
    if isinstance(grading, Mapping) and grading.get("algorithm_version"):
        story.append(Spacer(1, 6 * mm))
        story.append(Paragraph(f"Scoring algorithm version {_text(grading['algorithm_version'])}.", styles["small"]))
    return story


def render_scan_pdf(report: Mapping[str, Any], name: str | None = None) -> bytes:
    """A PDF of a Pro scan report (the spec 2.2 dict). Raises PdfRenderError."""
    buffer = io.BytesIO()
    title = f"Website security report: {report.get('url', '')}"
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        title=title,
        author="websec",
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
    )
    try:
        document.build(_story(report, name))
    except Exception as exc:  # noqa: BLE001 - reportlab raises many types; the API needs one
        raise PdfRenderError(f"{type(exc).__name__}: {exc}") from exc
    return buffer.getvalue()
