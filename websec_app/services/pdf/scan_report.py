"""The Pro scan PDF (`POST /api/report/pdf`, spec 4.3), written for the site owner's client.

Page one is the summary a manager reads in a minute: the grade and score, what they mean, a chart of
issues by severity and points lost by area, and the five problems that cost the most points
(`fixes_by_impact`, the ranking every renderer shares), each in plain words. Then one part per
section (titles, summaries and order from websec_app.scanner.SECTIONS) with every finding under its
plain title (scanner/rules/titles.toml), values and fixes in wrapping monospace boxes, the server's
own fix snippet, and for TLS the protocol/cipher table and the certificate chain. An appendix holds
the redirect chain and the raw response headers. The client `name` is in every page's footer.

Everything that comes from the scanned site or the user goes through `_layout.text`/`code`/`mono_box`
before reportlab's mini-markup sees it, so `<b>`, `&` or a control character prints as itself.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, KeepTogether, PageBreak, SimpleDocTemplate, Spacer

from websec_app.scanner import SECTIONS, section
from websec_app.scanner.fixes import detected_server
from websec_app.scanner.report import (
    count_issues,
    fixes_by_impact,
    grade_caps,
    notes_of,
    score_floor_sentence,
    section_points,
)
from websec_app.wording import counted, heartbeat_words, revocation_words, transparency_words

from ._charts import summary_chart
from ._evidence import redirect_appendix, snippet_part, tls_tables
from ._layout import (
    CONTENT_WIDTH,
    MARGIN,
    SEVERITY_COLOURS,
    PdfRenderError,
    badge,
    grade_box,
    mono_box,
    numbered_canvas,
    observed,
    observed_list,
    para,
    plain,
    prose,
    styles,
    table,
    text,
    when,
)
from ._wording import DNS_WORDED, connection_error, dns_words, entry_certificate_words, item_title, label, verify_reason

#: How many fixes page one lists; every one is in its section's part too.
TOP_FIXES = 5
# Detail fields shown elsewhere (TLS tables, appendix) or not meant for a reader.
_HIDDEN_DETAILS = {"status", "deduction", "findings", "main_chain", "http_chain", "count"}
_TLS_SHOWN = {"protocols", "weak_cipher_families", "chain", "not_testable", "cipher", "cipher_bits", "protocol"}
_TLS_SHOWN |= {"key_exchange_group", "forward_secrecy", "aead", "chain_complete"}
_GRADE_WORDS = {
    "A+": "Excellent: the site uses every protection this scan checks.",
    "A": "Very good: only small improvements remain.",
    "B": "Good, with a few gaps worth closing.",
    "C": "Fair: several important protections are missing.",
    "D": "Poor: visitors are exposed to well-known attacks.",
    "F": "Failing: serious problems need fixing now.",
}


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0] or url


def _points(deduction: Any) -> str:
    """ "-15 pts", "-1 pt", "0 pts" for a problem worth none (a malformed value prints as itself)."""
    if deduction == 0:
        return "0 pts"
    return f"-{counted(deduction, 'pt')}" if isinstance(deduction, int) else f"-{text(deduction)} pts"


def _first_sentence(value: Any) -> str:
    raw = str(value or "")
    cut = raw.find(". ")
    return raw if cut < 0 else raw[: cut + 1]


def _status_cell(item: Mapping[str, Any]) -> str:
    if item.get("status") == "good":  # a severity beside "Good" only confuses
        return badge("good")
    status = f"{badge(item.get('status'))}<br/>{badge(item.get('severity'), SEVERITY_COLOURS)}"
    if item.get("deduction"):
        status += f"<br/>{_points(item.get('deduction'))}"
    return status


def _finding_block(
    title: str, item: Mapping[str, Any], server: str | None, st: dict[str, Any], *, value: Any = None, header: bool
) -> list[Any]:
    """The right-hand cell of a finding: title, explanation, what it affects, the fix and the snippet."""
    width = CONTENT_WIDTH - 24 * mm - 12
    cell: list[Any] = [para(f"<b>{text(title)}</b>", st["cell"])]
    if header:
        if item.get("value"):
            cell.append(mono_box(value, st, width, label="Value sent by the site:"))
        else:
            cell.append(para("<i>Not sent by the site.</i>", st["cell"]))
    if item.get("explanation"):
        cell.append(para(prose(item.get("explanation")), st["cell"]))
    if item.get("subjects"):
        cell.append(para(f"<b>Affects:</b> {text(', '.join(map(str, item['subjects'])))}", st["cell"]))
    notes = notes_of(item)
    if len(notes) > 1:
        cell += [para("<b>Observed:</b>", st["cell"]), *observed_list(notes, st)]
    elif notes:
        cell.append(para(observed(notes[0]), st["cell"]))
    if item.get("fix") and item.get("status") != "good":
        if header:  # a header object's fix is the header line itself: code, shown whole
            cell.append(mono_box(item.get("fix"), st, width, label="<b>How to fix</b>: send this header"))
        else:
            cell.append(para(f"<b>How to fix:</b> {prose(item.get('fix'))}", st["cell"]))
        if item.get("fix_note"):  # how to apply this fix (the CSP proposal's rollout advice)
            cell.append(para(prose(item.get("fix_note"), 4000), st["cell"]))
        cell += snippet_part(item, server, st, width)
    return cell


def _findings_table(rows: list[list[Any]], st: dict[str, Any]) -> Flowable:
    header = [para("<b>Status</b>", st["cell"]), para("<b>Finding and fix</b>", st["cell"])]
    return table([header, *rows], [24 * mm, CONTENT_WIDTH - 24 * mm])


def _finding_rows(findings: Any, server: str | None, st: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for finding in findings if isinstance(findings, list) else []:
        if not isinstance(finding, Mapping):
            continue
        title = item_title(str(finding.get("check") or ""), finding, header=False)
        rows.append([para(_status_cell(finding), st["cell"]), _finding_block(title, finding, server, st, header=False)])
    return rows


def _header_rows(headers: Mapping[str, Any], server: str | None, st: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for name, header in headers.items():
        if not isinstance(header, Mapping) or "status" not in header:
            continue
        title = f"{name}: {item_title(str(name), header, header=True)}"
        block = _finding_block(title, header, server, st, value=header.get("value"), header=True)
        rows.append([para(_status_cell(header), st["cell"]), block])
    return rows


#: Section facts said in a sentence (websec_app/wording.py, shared with the UI) instead of as "Label: value" pairs:
#: the CA's answer (its note names the URL asked), the SCTs by where they came from (not log ids), heartbeats.
_SAID_IN_WORDS: dict[str, Callable[[Any], str]] = {
    "revocation": lambda value: revocation_words(value, with_note=True),
    "certificate_transparency": transparency_words,
    "heartbeat": heartbeat_words,
}


def _detail_rows(body: Mapping[str, Any], st: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    """A section's own facts as "Label | value" rows: scalars and lists of scalars; one level of nested
    objects under their parent's label; lists of objects only where a reader needs them (cookies,
    disclosed software, third-party origins)."""
    rows: list[list[Any]] = []
    for key, value in body.items():
        name = f"{prefix}{label(key)}"
        if key in _HIDDEN_DETAILS or value is None or value == "" or value == []:
            continue
        if key in _SAID_IN_WORDS and not prefix:
            rows.append([para(text(name), st["cellbold"]), para(text(_SAID_IN_WORDS[key](value)), st["cell"])])
            continue
        if isinstance(value, Mapping):
            if "present" in value and "status" in value:
                continue  # a header object (cross-origin isolation): shown with the findings
            if not prefix:
                facts = _facts(value)
                if facts:
                    rows.append([para(text(name), st["cellbold"]), para(text(facts, 800), st["cell"])])
            continue
        if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
            summary = _objects(key, value)
            if summary:
                rows.append([para(text(name), st["cellbold"]), para(summary, st["cell"])])
            continue
        rows.append([para(text(name), st["cellbold"]), para(text(plain(value), 600), st["cell"])])
    return rows


def _dns_rows(body: Mapping[str, Any], st: dict[str, Any]) -> list[list[Any]]:
    """The DNS section's facts: its records in words (`dns_words`: a null MX, a CAA ";", a stopped SPF evaluation
    as what they mean), the other fields as every section's, in the report's order."""
    worded = dns_words(body)
    rows: list[list[Any]] = []
    for key, value in body.items():
        if key in worded:
            lines = "<br/>".join(text(line, 600) for line in worded[key])
            rows.append([para(text(label(key)), st["cellbold"]), para(lines, st["cell"])])
        elif key not in DNS_WORDED:
            rows += _detail_rows({key: value}, st)
    return rows


def _facts(body: Mapping[str, Any]) -> str:
    """A nested object on one line: "Origin sent: https://x; HTTP status: 200; Login data allowed: Yes"."""
    parts = []
    for key, value in body.items():
        if isinstance(value, Mapping) or (isinstance(value, list) and any(isinstance(v, Mapping) for v in value)):
            continue
        if value in ("true", "false"):  # a header's literal true/false, said as a reader would
            value = value == "true"
        shown = plain(value)
        if shown:
            parts.append(f"{label(key)}: {shown}")
    return "; ".join(parts)


def _objects(key: str, values: list[Any]) -> str:
    items = [v for v in values if isinstance(v, Mapping)][:30]
    if key == "cookies":
        lines = []
        for cookie in items:
            flags = [f for f, on in (("Secure", cookie.get("secure")), ("HttpOnly", cookie.get("httponly"))) if on]
            if cookie.get("samesite"):
                flags.append(f"SameSite={cookie.get('samesite')}")
            kind = str(cookie.get("kind") or "other").replace("_", " ")
            line = f"<b>{text(cookie.get('name'))}</b> ({text(kind)}): {text(', '.join(flags) or 'no protections')}"
            # A cookie the http:// redirect sets is listed apart from the page's own of the same name.
            if cookie.get("final_response") is False and cookie.get("set_by"):
                line += f" (set by {text(cookie.get('set_by'))})"
            lines.append(line)
        return "<br/>".join(lines)
    if key == "disclosures":
        return "<br/>".join(f"{text(d.get('header'))}: {text(d.get('value'))}" for d in items)
    if key == "external_origins":
        return "<br/>".join(
            f"{text(o.get('origin'))} ({text(', '.join(map(str, o.get('types') or [])))})" for o in items
        )
    return ""


def _section_part(
    number: int, key: str, body: Mapping[str, Any], server: str | None, st: dict[str, Any]
) -> list[Flowable]:
    entry = section(key)
    story: list[Flowable] = [CondPageBreak(40 * mm)]
    about = para(text(entry.summary), st["small"])
    if key == "headers":
        story += [para(f"{number}. {text(entry.title)}", st["h1"]), about, Spacer(1, 2 * mm)]
        rows = _header_rows(body, server, st)
        story.append(_findings_table(rows, st) if rows else para("No headers were analysed.", st["body"]))
        return story
    heading = f"{number}. {text(entry.title)}: {badge(body.get('status'))}"
    if body.get("deduction"):
        heading += f" <font size='10'>({_points(body.get('deduction'))})</font>"
    story += [para(heading, st["h1"]), about, Spacer(1, 2 * mm)]
    details = {k: v for k, v in body.items() if not (key == "tls" and k in _TLS_SHOWN)}
    if key == "tls":
        details.pop("certificate", None)  # the chain table shows it, first row
        if isinstance(entry := details.pop("entry_certificate", None), Mapping):
            details["entry_certificate"] = entry_certificate_words(entry)
        if details.get("verify_error"):
            details["verify_error"] = verify_reason(details["verify_error"])
        if details.get("error"):
            details["error"] = connection_error(details["error"])
    detail_rows = _dns_rows(details, st) if key == "dns" else _detail_rows(details, st)
    if detail_rows:
        story += [table(detail_rows[:30], [55 * mm, CONTENT_WIDTH - 55 * mm], header=False), Spacer(1, 2 * mm)]
    if key == "tls":
        story += tls_tables(body, st)
        story.append(Spacer(1, 3 * mm))
    rows = _finding_rows(body.get("findings"), server, st)
    if key == "cross_origin":
        rows += _header_rows(body, server, st) if not rows else []
    story.append(_findings_table(rows, st) if rows else para("No findings.", st["body"]))
    return story


def _top_fixes(report: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    fixes = fixes_by_impact(report, limit=TOP_FIXES)
    if not fixes:
        return [para("Nothing to fix: the scan found no problems.", st["body"])]
    # The points each problem costs, not a gain: the score is floored at 0, so on a site whose problems cost
    # more than 100 points in all, fixing one alone may not move it.
    rows: list[list[Any]] = [[para(f"<b>{h}</b>", st["cell"]) for h in ("#", "Points lost", "What to fix and why")]]
    for number, fix in enumerate(fixes, start=1):
        title = item_title(fix.name, fix.item, header=fix.header)
        subjects = fix.item.get("subjects")
        on = f" ({text(', '.join(map(str, subjects)))})" if subjects else ""
        why = prose(_first_sentence(fix.item.get("explanation")), 400)
        rows.append(
            [
                para(str(number), st["cell"]),
                para(f"<b>{_points(fix.deduction)}</b>", st["cell"]),
                para(
                    f"<b>{text(title)}</b>{on} <font color='#656d76'>({text(section(fix.section).label)})</font>"
                    f"<br/>{why}",
                    st["cell"],
                ),
            ]
        )
    intro = (
        "The problems that cost the most points, largest first. Each is explained, with the exact fix, in the "
        "sections that follow."
    )
    total = sum(section_points(e.key, body) for e in SECTIONS if isinstance(body := report.get(e.key), Mapping))
    if floor := score_floor_sentence(total):
        intro += f" {floor}"
    return [
        para("Fix these first", st["h2"]),
        para(intro, st["small"]),
        Spacer(1, 1 * mm),
        table(rows, [8 * mm, 20 * mm, CONTENT_WIDTH - 28 * mm]),
    ]


def _points_by_area(report: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Every area that lost points, the most first (all ten fit the chart)."""
    lost = [
        (entry.label, points)
        for entry in SECTIONS
        if isinstance(body := report.get(entry.key), Mapping) and (points := section_points(entry.key, body)) > 0
    ]
    return sorted(lost, key=lambda pair: -pair[1])


def _first_page(report: Mapping[str, Any], name: str | None, st: dict[str, Any]) -> list[Flowable]:
    url = str(report.get("url", ""))
    grade = str(report.get("grade", ""))
    story: list[Flowable] = [
        para("Website security report", st["title"]),
        para(text(_host(url)), st["subtitle"]),
    ]
    if name:
        story.append(para(f"Prepared for <b>{text(name, 80)}</b>", st["subtitle"]))
    final = str(report.get("final_url") or "")
    facts = f"Scanned {text(when(report.get('scanned_at')))}"
    if final and final.rstrip("/") != url.rstrip("/"):
        facts += f" · the address led to {text(final)}"
    story.append(para(facts, st["muted"]))
    counts = count_issues(report)
    verdict = para(
        f"<b>Grade {text(grade)}, score {text(report.get('score'))} / 100.</b> {text(_GRADE_WORDS.get(grade, ''))}"
        f"<br/>The scan found <b>{counted(counts['total'], 'issue')}</b>: {counts['critical']} critical, "
        f"{counts['important']} important and {counts['minor']} minor.",
        st["body"],
    )
    story += [Spacer(1, 4 * mm), grade_box(grade, report.get("score", ""), st), Spacer(1, 3 * mm), verdict]
    caps = grade_caps(report)
    if caps:
        worst = caps[0]
        story.append(
            para(
                f"Whatever the score, the grade cannot be better than <b>{text(worst.max_grade)}</b> while "
                f"this remains: {text(item_title(worst.outcome, {}, header=False))}.",
                st["small"],
            )
        )
    story += [
        Spacer(1, 4 * mm),
        summary_chart(
            {s: counts[s] for s in ("critical", "important", "minor")}, _points_by_area(report), CONTENT_WIDTH
        ),
        Spacer(1, 2 * mm),
    ]
    story += _top_fixes(report, st)
    story.append(PageBreak())
    return story


def _overview(report: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    rows: list[list[Any]] = [[para(f"<b>{h}</b>", st["cell"]) for h in ("Area", "Status", "Points lost", "Issues")]]
    for entry in SECTIONS:
        key, body = entry.key, report.get(entry.key)
        if not isinstance(body, Mapping):
            continue
        if key == "headers":
            statuses = [str(h.get("status")) for h in body.values() if isinstance(h, Mapping)]
            worst = next((s for s in ("bad", "missing", "weak", "warn") if s in statuses), "good")
        else:
            worst = str(body.get("status", "good"))
        deduction = section_points(key, body)
        problems = count_issues({key: body})["total"]  # as issue_counts counts them
        rows.append(
            [
                para(text(entry.title), st["cell"]),
                para(badge(worst), st["cell"]),
                para(f"-{deduction}" if deduction else "0", st["cell"]),
                para(str(problems), st["cell"]),
            ]
        )
    return [para("Summary by area", st["h1"]), table(rows, [80 * mm, 35 * mm, 30 * mm, CONTENT_WIDTH - 145 * mm])]


def _story(report: Mapping[str, Any], name: str | None) -> list[Flowable]:
    st = styles()
    server = detected_server(report)
    story = _first_page(report, name, st)
    story += _overview(report, st)
    number = 0
    for entry in SECTIONS:
        body = report.get(entry.key)
        if not isinstance(body, Mapping):
            continue
        number += 1
        story += _section_part(number, entry.key, body, server, st)
    appendix = redirect_appendix(report, st)
    if appendix:
        story += [PageBreak(), *appendix]
    story.append(Spacer(1, 6 * mm))
    story.append(
        KeepTogether(
            para(
                "This report describes what a remote scan observed at the time shown. It does not test the "
                "application's own logic or areas behind a login. The score starts at 100 and each problem "
                "deducts the points shown beside it; some problems also cap the grade.",
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
        bottomMargin=MARGIN + 2 * mm,
    )
    scanned_at = report.get("scanned_at")
    canvas = numbered_canvas(
        f"Website security report: {_host(url)}",
        f"Grade {report.get('grade', '')}, score {report.get('score', '')}/100",
        f"Prepared for {name}" if name else (f"Scanned {when(scanned_at)}" if scanned_at else ""),
    )
    try:
        document.build(_story(report, name), canvasmaker=canvas)
    except Exception as exc:  # noqa: BLE001 - reportlab raises many types; the API needs one
        raise PdfRenderError(f"{type(exc).__name__}: {exc}") from exc
    return buffer.getvalue()


__all__ = ["PdfRenderError", "render_scan_pdf"]
