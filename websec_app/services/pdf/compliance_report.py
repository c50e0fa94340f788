"""The compliance report PDF (`POST /api/compliance-report/generate`, spec 1 and 4.8).

1. Cover: the site, the date, grade and score, and the verdict counts per framework.
2. Assessment summary: every problem found, with its CWE and the requirements it bears on.
3-6. One pass/fail table per framework (OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32,
   ISO/IEC 27001:2022 Annex A): each requirement, its verdict and the evidence.
7. Remediation plan: the problems that cost the most points first (`fixes_by_impact`), each item with its fix.
8. Disclaimer: what an external scan can and cannot show.

The verdicts come from `websec_app.services.compliance.assess` and the mapping file it loads;
this module only lays them out.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, PageBreak, SimpleDocTemplate, Spacer

from websec_app.scanner import section
from websec_app.wording import counted

from ..compliance import FAIL, NOT_TESTED, PARTIAL, PASS, Assessment, ObservedFinding, assess
from ..compliance.reasons import finding_label, verdict_sentence
from ._layout import (
    CONTENT_WIDTH,
    MARGIN,
    SEVERITY_COLOURS,
    PdfRenderError,
    badge,
    code,
    grade_box,
    numbered_canvas,
    observed,
    observed_list,
    para,
    prose,
    styles,
    table,
    text,
    when,
)

_VERDICT_LABELS = {PASS: "pass", FAIL: "fail", PARTIAL: "partial", NOT_TESTED: "not tested"}

DISCLAIMER = (
    "This report is the result of an automated, external, non-intrusive scan of the public website named on the "
    "cover, at the time shown. It records what the site presented to an anonymous visitor on the internet: HTTP "
    "response headers, the TLS configuration and certificate, DNS records, cookies and page content. It does not "
    "test authenticated areas, application logic, back-end systems, internal networks, or any organisational, "
    "physical or procedural measure. "
    "A requirement marked PASS means that the evidence this scan can collect raised no problem; it does not mean "
    "that the requirement is met in full, and requirements marked NOT TESTED are outside what an external scan can "
    "observe. The mapping of findings to OWASP Top 10 2021, PCI DSS v4.0, GDPR Article 32 and ISO/IEC 27001:2022 "
    "Annex A is websec's interpretation, provided to support (not replace) an assessment by a qualified "
    "assessor. This report is not a PCI DSS Report on Compliance, not an Approved Scanning Vendor (ASV) scan "
    "under PCI DSS requirement 11.3.2, not an ISO/IEC 27001 certification and not legal advice on GDPR "
    "compliance. Results may change as soon as the site's configuration changes. websec accepts no liability for "
    "decisions taken on the basis of this report."
)


def _host(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0] or url


def _finding_title(finding: ObservedFinding) -> str:
    return finding_label(finding)


def _cwe(finding: ObservedFinding) -> str:
    if not finding.cwe:
        return ""
    return f"<b>{text(finding.cwe)}</b> {text(finding.cwe_name or '')}"


def _cover(assessment: Assessment, st: dict[str, Any], now: datetime) -> list[Flowable]:
    story: list[Flowable] = [
        Spacer(1, 18 * mm),
        para("Security compliance assessment", st["title"]),
        para(text(_host(assessment.url)), st["subtitle"]),
        Spacer(1, 8 * mm),
        grade_box(assessment.grade, assessment.score, st),
        Spacer(1, 8 * mm),
    ]
    facts = [
        ("Website", assessment.url),
        ("Scanned at", when(assessment.scanned_at)),
        ("Report date", when(now.isoformat())),
        ("Frameworks", "OWASP Top 10 2021, PCI DSS v4.0, GDPR Article 32, ISO/IEC 27001:2022 Annex A"),
        ("Mapping version", assessment.mapping_version),
        ("Scoring algorithm", assessment.algorithm_version),
    ]
    story.append(
        table(
            [[para(f"<b>{k}</b>", st["cell"]), para(text(v), st["cell"])] for k, v in facts if v],
            [38 * mm, CONTENT_WIDTH - 38 * mm],
            header=False,
        )
    )
    story += [Spacer(1, 8 * mm), para("Results by framework", st["h2"])]
    rows: list[list[Any]] = [
        [para(f"<b>{h}</b>", st["cell"]) for h in ("Framework", "Pass", "Partial", "Fail", "Not tested")]
    ]
    for result in assessment.frameworks:
        rows.append(
            [para(text(result.framework.name), st["cell"])]
            + [para(str(result.count(v)), st["cell"]) for v in (PASS, PARTIAL, FAIL, NOT_TESTED)]
        )
    story.append(table(rows, [70 * mm] + [(CONTENT_WIDTH - 70 * mm) / 4] * 4))
    story += [
        Spacer(1, 8 * mm),
        para(
            "Automated external assessment. Read the disclaimer at the end of this report before relying on it.",
            st["muted"],
        ),
        PageBreak(),
    ]
    return story


def _bold_counted(count: int, noun: str) -> str:
    """ "<b>1</b> problem", "<b>3</b> problems": `counted`, its number in bold."""
    number, words = counted(count, noun).split(" ", 1)
    return f"<b>{number}</b> {words}"


def _summary(assessment: Assessment, st: dict[str, Any]) -> list[Flowable]:
    problems = [f for f in assessment.findings if f.failing]
    counts = {s: sum(1 for f in problems if f.severity == s) for s in ("critical", "important", "minor")}
    passed = sum(1 for f in assessment.findings if not f.failing)
    story: list[Flowable] = [
        para("1. Assessment summary", st["h1"]),
        para(
            f"The scan made {_bold_counted(len(assessment.findings), 'observation')}: "
            f"{_bold_counted(passed, 'control')} in place and {_bold_counted(len(problems), 'problem')} "
            f"({counts['critical']} critical, {counts['important']} important, {counts['minor']} minor). Each problem "
            "is listed with the CWE weakness it corresponds to and the requirements it is evidence about.",
            st["body"],
        ),
        Spacer(1, 3 * mm),
    ]
    if assessment.not_assessed:
        story.append(
            para(
                "Some checks could not run, so their requirements are not assessed: "
                + text(", ".join(section(key).title for key in assessment.not_assessed))
                + ".",
                st["small"],
            )
        )
    if not problems:
        story.append(para("No problems were found.", st["body"]))
        return story
    rows: list[list[Any]] = [[para(f"<b>{h}</b>", st["cell"]) for h in ("Finding", "Severity", "CWE", "Requirements")]]
    order = {"critical": 0, "important": 1, "minor": 2}
    for finding in sorted(problems, key=lambda f: (order.get(f.severity, 3), -f.deduction, f.outcome)):
        rows.append(
            [
                para(
                    f"<b>{text(_finding_title(finding))}</b><br/><font color='#656d76'>"
                    f"{text(finding.control.title if finding.control else section(finding.section).title)}</font>",
                    st["cell"],
                ),
                para(f"{badge(finding.severity, SEVERITY_COLOURS)}<br/>{badge(finding.status)}", st["cell"]),
                para(_cwe(finding), st["cell"]),
                para(text(", ".join(finding.references())), st["cell"]),
            ]
        )
    story.append(table(rows, [55 * mm, 22 * mm, 45 * mm, CONTENT_WIDTH - 122 * mm]))
    return story


def _framework(number: int, result: Any, st: dict[str, Any]) -> list[Flowable]:
    story: list[Flowable] = [
        CondPageBreak(50 * mm),
        para(f"{number}. {text(result.framework.name)}", st["h1"]),
        para(
            f"{result.count(PASS)} pass, {result.count(PARTIAL)} partial, {result.count(FAIL)} fail, "
            f"{result.count(NOT_TESTED)} not tested by an external scan.",
            st["body"],
        ),
        Spacer(1, 2 * mm),
    ]
    rows: list[list[Any]] = [
        [para(f"<b>{h}</b>", st["cell"]) for h in ("Requirement", "Result", "Why, from this scan")]
    ]
    for requirement in result.requirements:
        evidence = text(verdict_sentence(requirement), 1200)
        rows.append(
            [
                para(f"<b>{text(requirement.requirement)}</b><br/>{text(requirement.title)}", st["cell"]),
                para(badge(_VERDICT_LABELS[requirement.verdict]), st["cell"]),
                para(evidence, st["cell"]),
            ]
        )
    story.append(table(rows, [58 * mm, 24 * mm, CONTENT_WIDTH - 82 * mm]))
    return story


def _remediation(number: int, assessment: Assessment, st: dict[str, Any]) -> list[Flowable]:
    story: list[Flowable] = [
        CondPageBreak(50 * mm),
        para(f"{number}. Remediation plan", st["h1"]),
        para(
            # By the points each costs, not by how fast the score rises: it is floored at 0, so on a site whose
            # problems cost more than 100 points in all the first fixes may not move it.
            "Problems by the points they cost: the largest score deduction first; equal deductions, the more "
            "severe first.",
            st["body"],
        ),
    ]
    plan = assessment.remediation()
    if not plan:
        story.append(para("Nothing to fix: the scan found no problems.", st["body"]))
        return story
    for item, finding in enumerate(plan, start=1):
        points = f"-{counted(finding.deduction, 'pt')}" if finding.deduction else "no points"
        lines = [
            f"<b>{item}. {text(_finding_title(finding))}</b>  {badge(finding.status)} "
            f"{badge(finding.severity, SEVERITY_COLOURS)}  {points}"
        ]
        lines.append(prose(finding.explanation))
        listed = len(finding.notes) > 1  # several notes: a list between the item's two parts
        if listed:
            story += [para("<br/>".join([*lines, "<b>Observed:</b>"]), st["item_head"])]
            story += observed_list(finding.notes, st)
            lines = []
        elif finding.notes:
            lines.append(observed(finding.notes[0]))
        if finding.fix and finding.section in ("headers", "cross_origin"):  # a header line: code
            fix = code(finding.fix)
        else:
            fix = prose(finding.fix) if finding.fix else "see the explanation above."
        lines.append(f"<b>How to fix:</b> {fix}")
        if finding.fix and finding.fix_note:  # how to apply it (the CSP proposal's rollout advice)
            lines.append(prose(finding.fix_note, 4000))
        refs = [f"{finding.cwe} {finding.cwe_name or ''}".strip()] if finding.cwe else []
        refs += finding.references()
        if refs:
            lines.append(f"<font color='#656d76'>{text('; '.join(refs))}</font>")
        story.append(para("<br/>".join(lines), st["item_tail" if listed else "item"]))
    return story


def _story(assessment: Assessment, now: datetime) -> list[Flowable]:
    st = styles()
    story = _cover(assessment, st, now)
    story += _summary(assessment, st)
    number = 1
    for result in assessment.frameworks:
        number += 1
        story += _framework(number, result, st)
    number += 1
    story += _remediation(number, assessment, st)
    number += 1
    story += [
        CondPageBreak(60 * mm),
        para(f"{number}. Disclaimer", st["h1"]),
        para(text(DISCLAIMER, 4000), st["body"]),
    ]
    return story


def render_compliance_pdf(report: Mapping[str, Any], *, now: datetime | None = None) -> bytes:
    """The compliance PDF for a Pro scan report (spec 2.2 dict). Raises PdfRenderError."""
    now = now or datetime.now(UTC)
    try:
        assessment = assess(report)
    except Exception as exc:  # noqa: BLE001 - a malformed report is a render failure for the caller
        raise PdfRenderError(f"{type(exc).__name__}: {exc}") from exc
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        title=f"Security compliance assessment: {assessment.url}",
        author="websec",
        subject="OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32, ISO/IEC 27001:2022",
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN + 4 * mm,
        bottomMargin=MARGIN,
    )
    canvas = numbered_canvas(
        f"websec compliance assessment: {_host(assessment.url)}",
        f"Scanned {when(assessment.scanned_at)}",
        f"Mapping {assessment.mapping_version}. Automated external assessment; see the disclaimer.",
    )
    try:
        document.build(_story(assessment, now), canvasmaker=canvas)
    except Exception as exc:  # noqa: BLE001 - reportlab raises many types
        raise PdfRenderError(f"{type(exc).__name__}: {exc}") from exc
    return buffer.getvalue()


__all__ = ["DISCLAIMER", "render_compliance_pdf"]
