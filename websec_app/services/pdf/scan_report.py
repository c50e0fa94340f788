"""The Pro scan PDF (`POST /api/report/pdf`, spec 4.3).

Page one: who it is for, the grade and score in large type, the scan's facts, the issue counts, the
fixes that gain the most points (`fixes_by_impact`, the ranking every renderer shares) and a summary of
every section. Then one part per section with every finding: status, severity,
deduction, explanation, what it affects, and the fix. Section titles, summaries and order come from
the one section table (websec_app.scanner.SECTIONS). A running header names the site and the
client; every page says "Page n of N".

Everything that comes from the scanned site or the user (header values, notes, the client `name`)
goes through `_layout.text` before reportlab's mini-markup sees it, so `<b>`, `&` or a control
character in a header value or a name prints as itself and cannot change the document.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, KeepTogether, Paragraph, SimpleDocTemplate, Spacer

from websec_app.scanner import SECTIONS, section
from websec_app.scanner.report import count_issues, fixes_by_impact
from websec_app.wording import counted

from ._layout import (
    CONTENT_WIDTH,
    MARGIN,
    SEVERITY_COLOURS,
    PdfRenderError,
    badge,
    code,
    grade_box,
    numbered_canvas,
    styles,
    table,
    text,
)

_HIDDEN_DETAILS = {"status", "deduction", "findings"}


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0] or url


def _finding_rows(findings: Any, st: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = [[Paragraph("<b>Status</b>", st["cell"]), Paragraph("<b>Finding and fix</b>", st["cell"])]]
    for finding in findings if isinstance(findings, list) else []:
        if not isinstance(finding, Mapping):
            continue
        status = f"{badge(finding.get('status'))}<br/>{badge(finding.get('severity'), SEVERITY_COLOURS)}" + (
            f"<br/>{_points(finding.get('deduction'))}" if finding.get("deduction") else ""
        )
        detail = f"<b>{text(finding.get('check'))}</b>"
        if finding.get("cwe"):
            detail += f"  <font color='#656d76'>{text(finding.get('cwe'))}</font>"
        if finding.get("explanation"):
            detail += f"<br/>{text(finding.get('explanation'))}"
        if finding.get("subjects"):
            detail += f"<br/><b>Affects:</b> {text(', '.join(map(str, finding['subjects'])))}"
        if finding.get("note"):
            detail += f"<br/><b>Note:</b> {text(finding.get('note'))}"
        if finding.get("fix"):
            detail += f"<br/><b>Fix:</b> {code(finding.get('fix'))}"
        rows.append([Paragraph(status, st["cell"]), Paragraph(detail, st["cell"])])
    return rows


def _headers_part(headers: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    rows: list[list[Any]] = [
        [
            Paragraph("<b>Header</b>", st["cell"]),
            Paragraph("<b>Status</b>", st["cell"]),
            Paragraph("<b>Details</b>", st["cell"]),
        ]
    ]
    for name, header in headers.items():
        if not isinstance(header, Mapping):
            continue
        detail = f"<b>Value:</b> {code(header.get('value')) if header.get('value') else 'not sent'}"
        if header.get("explanation"):
            detail += f"<br/>{text(header.get('explanation'))}"
        if header.get("note"):
            detail += f"<br/><b>Note:</b> {text(header.get('note'))}"
        if header.get("fix"):
            detail += f"<br/><b>Fix:</b> {code(header.get('fix'))}"
        status = f"{badge(header.get('status'))}<br/>{badge(header.get('severity'), SEVERITY_COLOURS)}"
        if header.get("deduction"):
            status += f"<br/>{_points(header.get('deduction'))}"
        rows.append(
            [
                Paragraph(f"<b>{text(name)}</b>", st["cell"]),
                Paragraph(status, st["cell"]),
                Paragraph(detail, st["cell"]),
            ]
        )
    if len(rows) == 1:
        return [Paragraph("No headers were analysed.", st["body"])]
    return [table(rows, [42 * mm, 24 * mm, CONTENT_WIDTH - 66 * mm])]


def _details(section: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    """The section's own short facts (protocol, issuer, expiry...): scalars only, lists joined."""
    rows = []
    for key, value in section.items():
        if key in _HIDDEN_DETAILS or isinstance(value, Mapping):
            continue
        if isinstance(value, list):
            if not value or not all(isinstance(v, str | int | float) for v in value):
                continue
            value = ", ".join(map(str, value))
        if value is None or value == "":
            continue
        rows.append([Paragraph(text(key.replace("_", " ")), st["cellbold"]), Paragraph(text(value, 300), st["cell"])])
    if not rows:
        return []
    return [table(rows[:20], [45 * mm, CONTENT_WIDTH - 45 * mm], header=False), Spacer(1, 3 * mm)]


#: How many fixes page one lists; every one is in its section's part too.
TOP_FIXES = 10


def _points(deduction: Any) -> str:
    """ "-15 pts", "-1 pt" (a malformed value prints as itself)."""
    return f"-{counted(deduction, 'pt')}" if isinstance(deduction, int) else f"-{text(deduction)} pts"


def _top_fixes(report: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    fixes = fixes_by_impact(report, limit=TOP_FIXES)
    if not fixes:
        return []
    rows: list[list[Any]] = [[Paragraph(f"<b>{h}</b>", st["cell"]) for h in ("#", "Points", "Finding", "Status")]]
    for number, fix in enumerate(fixes, start=1):
        subjects = fix.item.get("subjects")
        on = f"<br/><font color='#656d76'>{text(', '.join(map(str, subjects)))}</font>" if subjects else ""
        rows.append(
            [
                Paragraph(str(number), st["cell"]),
                Paragraph(_points(fix.deduction), st["cell"]),
                Paragraph(f"<b>{text(fix.name)}</b> ({text(section(fix.section).label)}){on}", st["cell"]),
                Paragraph(f"{badge(fix.status)} {badge(fix.severity, SEVERITY_COLOURS)}", st["cell"]),
            ]
        )
    return [
        Paragraph("Fix these first", st["h1"]),
        Paragraph(
            "The fixes that gain the most points, largest first; equal points, the more severe first.", st["small"]
        ),
        table(rows, [10 * mm, 20 * mm, CONTENT_WIDTH - 75 * mm, 45 * mm]),
    ]


def _summary(report: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    rows: list[list[Any]] = [
        [Paragraph(f"<b>{h}</b>", st["cell"]) for h in ("Section", "Status", "Deduction", "Problems")]
    ]
    for entry in SECTIONS:
        key, body = entry.key, report.get(entry.key)
        if not isinstance(body, Mapping):
            continue
        if key == "headers":
            items = [h for h in body.values() if isinstance(h, Mapping)]
            statuses = [str(h.get("status")) for h in items]
            worst = next((s for s in ("bad", "missing", "weak", "warn") if s in statuses), "good")
            deduction = sum(int(h.get("deduction") or 0) for h in items)
        else:
            worst = str(body.get("status", "good"))
            deduction = int(body.get("deduction") or 0)
        problems = count_issues({key: body})["total"]  # as issue_counts counts them
        rows.append(
            [
                Paragraph(text(entry.title), st["cell"]),
                Paragraph(badge(worst), st["cell"]),
                Paragraph(f"-{deduction}" if deduction else "0", st["cell"]),
                Paragraph(str(problems), st["cell"]),
            ]
        )
    return [table(rows, [70 * mm, 35 * mm, 30 * mm, CONTENT_WIDTH - 135 * mm])]


def _story(report: Mapping[str, Any], name: str | None) -> list[Flowable]:
    st = styles()
    url = str(report.get("url", ""))
    story: list[Flowable] = [
        Paragraph("Website security report", st["title"]),
        Paragraph(text(_host(url)), st["subtitle"]),
    ]
    if name:
        story.append(Paragraph(f"Prepared for <b>{text(name, 80)}</b>", st["subtitle"]))
    story += [
        Spacer(1, 6 * mm),
        grade_box(str(report.get("grade", "")), report.get("score", ""), st),
        Spacer(1, 3 * mm),
    ]
    story.append(
        Paragraph(f"<b>Grade {text(report.get('grade'))}</b>, score {text(report.get('score'))} / 100", st["body"])
    )
    counts = report.get("issue_counts")
    if isinstance(counts, Mapping):
        story.append(
            Paragraph(
                f"Issues: <b>{text(counts.get('critical', 0))}</b> critical, "
                f"<b>{text(counts.get('important', 0))}</b> important, <b>{text(counts.get('minor', 0))}</b> minor",
                st["body"],
            )
        )
    facts = [("Target", url), ("Final URL", report.get("final_url")), ("HTTP status", report.get("status_code"))]
    facts.append(("Scanned at", report.get("scanned_at")))
    graded = report.get("grading")
    grading: Mapping[str, Any] = graded if isinstance(graded, Mapping) else {}
    if grading.get("algorithm_version"):
        facts.append(("Scoring algorithm", grading.get("algorithm_version")))
    story.append(Spacer(1, 3 * mm))
    story.append(
        table(
            [[Paragraph(f"<b>{k}</b>", st["cell"]), Paragraph(text(v), st["cell"])] for k, v in facts if v],
            [35 * mm, CONTENT_WIDTH - 35 * mm],
            header=False,
        )
    )
    for cap in grading.get("caps") or []:
        if isinstance(cap, Mapping):
            story.append(
                Paragraph(
                    f"The grade is capped at <b>{text(cap.get('max_grade'))}</b> by {text(cap.get('outcome'))}.",
                    st["small"],
                )
            )
    story += _top_fixes(report, st)
    story += [Paragraph("Summary", st["h1"]), *_summary(report, st)]
    number = 0
    for entry in SECTIONS:
        section = report.get(entry.key)
        if not isinstance(section, Mapping):
            continue
        number += 1
        story.append(CondPageBreak(40 * mm))
        about = Paragraph(text(entry.summary), st["small"])
        if entry.key == "headers":
            story += [Paragraph(f"{number}. {text(entry.title)}", st["h1"]), about]
            story.extend(_headers_part(section, st))
            continue
        heading = f"{number}. {text(entry.title)}: {badge(section.get('status'))}"
        if section.get("deduction"):
            heading += f" <font size='10'>({_points(section.get('deduction'))})</font>"
        story += [Paragraph(heading, st["h1"]), about]
        story.extend(_details(section, st))
        rows = _finding_rows(section.get("findings"), st)
        if len(rows) == 1:
            story.append(Paragraph("No findings.", st["body"]))
        else:
            story.append(table(rows, [24 * mm, CONTENT_WIDTH - 24 * mm]))
    story.append(Spacer(1, 6 * mm))
    story.append(
        KeepTogether(
            Paragraph(
                "This report describes what a remote scan observed at the time shown. It does not test the "
                "application's own logic or authenticated areas. How scores are computed: docs/scoring.md.",
                st["muted"],
            )
        )
    )
    return story


def render_scan_pdf(report: Mapping[str, Any], name: str | None = None) -> bytes:
    """A PDF of a Pro scan report (the spec 2.2 dict). Raises PdfRenderError."""
    buffer = io.BytesIO()
    url = str(report.get("url", ""))
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        title=f"Website security report: {url}",
        author="websec",
        subject=f"Prepared for {name}" if name else "Website security report",
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN + 4 * mm,
        bottomMargin=MARGIN,
    )
    canvas = numbered_canvas(
        f"websec security report: {_host(url)}",
        f"Prepared for {name}" if name else str(report.get("scanned_at") or ""),
        f"Grade {report.get('grade', '')}, score {report.get('score', '')}/100",
    )
    try:
        document.build(_story(report, name), canvasmaker=canvas)
    except Exception as exc:  # noqa: BLE001 - reportlab raises many types; the API needs one
        raise PdfRenderError(f"{type(exc).__name__}: {exc}") from exc
    return buffer.getvalue()


__all__ = ["PdfRenderError", "render_scan_pdf"]
