"""The report as the UI shows it: a scan result dict (spec 2.1/2.2) in, plain display rows out.

Pure functions, no Reflex: the report page, the Pro area and the tests all read the same
view. Within a section the worst findings come first (status, then severity, then points lost);
"Fix these first" is `fixes_by_impact`, the ranking by points lost every renderer shares. Section
titles, summaries and order come from the one section table (websec_app.scanner.SECTIONS).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from websec_app.scanner import SECTIONS, Section
from websec_app.scanner.findings import SEVERITIES, STATUSES
from websec_app.scanner.report import (
    fixes_by_impact,
    grade_caps,
    left_not_checked,
    notes_of,
    score_floor_sentence,
    section_points,
)
from websec_app.wording import counted

from .evidence import Evidence, HiddenPoints, Snippet, evidence, fix_snippets

#: What a locked (Pro-only) section gives once unlocked.
LOCKED_PITCH = "Included in Pro and in a one-time scan, with the exact fix for every finding."


def _lower_first(title: str) -> str:
    return title[:1].lower() + title[1:]


def _and(names: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


#: The Pro-only sections in a sentence ("cookies and cross-origin isolation"), from the section table.
PRO_ONLY_NAMES = _and([_lower_first(s.title) for s in SECTIONS if s.pro_only])

_STATUS_RANK = {status: rank for rank, status in enumerate(STATUSES)}  # good=0 ... bad=4
_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}  # minor=0 ... critical=2
#: How a header's status reads after its name in a headline: "Content-Security-Policy not set".
_HEADER_STATUS_WORDS = {
    "good": "set correctly",
    "missing": "not set",
    "weak": "too weak",
    "warn": "weakened",
    "bad": "unsafe",
}
#: Header objects carry no outcome id; a grade cap names one ("hsts.missing"): its prefix names the header.
_HEADER_OF_OUTCOME = {
    "csp": "Content-Security-Policy",
    "hsts": "Strict-Transport-Security",
    "xfo": "X-Frame-Options",
    "xcto": "X-Content-Type-Options",
    "referrer": "Referrer-Policy",
    "permissions": "Permissions-Policy",
}
#: "The server also accepts CBC-mode cipher suites. Browsers ..." -> the first sentence is the headline.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


@dataclass(frozen=True)
class FindingView:
    key: str  # unique within the report, for test ids and anchors
    title: str
    check: str  # the stable outcome id (what the API calls `check`), or the header name
    status: str
    severity: str
    deduction: int
    detail: str  # the rest of the explanation
    note: str  # what was found on the site: its notes joined, as the report's `note`
    fix: str
    cwe: str
    subjects: str
    section: str
    problem: bool  # anything but "good"
    points: str = ""  # "−15 pts", "−1 pt"; "" when nothing is deducted
    snippets: list[Snippet] = field(default_factory=list)  # the fix per server, the site's own first
    first_server: str = ""  # the snippet tab open at first
    checked: bool = True  # False: its check could not run (no finding, so no fix to unlock)
    fix_note: str = ""  # how to apply the fix (the CSP proposal's rollout advice), shown with it
    notes: list[str] = field(default_factory=list)  # the same notes one by one: several are shown one a line
    many_notes: bool = False


@dataclass(frozen=True)
class SectionView:
    key: str
    title: str
    about: str
    status: str
    deduction: int
    locked: bool
    problems: list[FindingView] = field(default_factory=list)
    passed: list[FindingView] = field(default_factory=list)
    points: str = ""  # as FindingView.points


@dataclass(frozen=True)
class ReportView:
    url: str
    final_url: str
    grade: str
    score: int
    pro: bool  # full report: fixes, cookies and cross-origin
    scanned_at: str
    critical: int
    important: int
    minor: int
    total: int
    locked: int  # findings in the sections a free report hides (issue_counts.locked)
    locked_text: str  # "6 more findings in cookies and cross-origin isolation: ..." ("" when none)
    clear_text: str  # what "Fix these first" says when the report shows nothing to fix
    floor_text: str  # past 100 points lost in all: that one fix may not move the score ("" otherwise)
    caps: list[str]
    top: list[FindingView]
    sections: list[SectionView]
    evidence: Evidence = field(default_factory=Evidence)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _prose(value: Any) -> str:
    """Rule texts mark code with `backticks` (Markdown); the page shows plain text."""
    return _text(value).replace("`", "")


def _when(iso: str) -> str:
    """'2026-11-22T13:34:43Z' -> '22 Nov 2026, 13:34 UTC' (unparseable input is shown as it is)."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def _points(deduction: int) -> str:
    return f"−{counted(deduction, 'pt')}" if deduction > 0 else ""


def _headline(explanation: str) -> tuple[str, str]:
    parts = _SENTENCE_END.split(explanation.strip(), maxsplit=1)
    if len(parts) == 1:
        return parts[0], ""
    return parts[0], parts[1]


def _worst_first(finding: FindingView) -> tuple[int, int, int]:
    return (-_STATUS_RANK.get(finding.status, 0), -_SEVERITY_RANK.get(finding.severity, 0), -finding.deduction)


#: A finding's `fix_snippets` field -> its snippets in the report's server order.
_Snippets = Callable[[Any], list[Snippet]]


def _finding(
    section: str,
    index: int,
    raw: Mapping[str, Any],
    snippets: _Snippets,
    title: str | None = None,
    *,
    header: bool = False,  # `raw` is a header object (spec 2.3), not a finding
) -> FindingView:
    status = _text(raw.get("status")) or "good"
    explanation = _prose(raw.get("explanation"))
    if title is None:
        title, detail = _headline(explanation)
    else:
        detail = explanation
    subjects = raw.get("subjects") or []
    deduction = int(raw.get("deduction") or 0)
    fix = _prose(raw.get("fix"))
    per_server = snippets(raw.get("fix_snippets")) if fix else []
    notes = [_prose(note) for note in notes_of(raw)]
    return FindingView(
        key=f"{section}-{index}",
        title=title,
        check=_text(raw.get("check")),
        status=status,
        severity=_text(raw.get("severity")) or "minor",
        deduction=deduction,
        detail=detail,
        note=_prose(raw.get("note")),
        notes=notes,
        many_notes=len(notes) > 1,
        fix=fix,
        cwe=_text(raw.get("cwe")),
        subjects=", ".join(str(s) for s in subjects) if isinstance(subjects, list) else _text(subjects),
        section=section,
        problem=status != "good",
        points=_points(deduction),
        snippets=per_server,
        first_server=per_server[0].server if per_server else "",
        checked=not left_not_checked(raw, header=header),
        fix_note=_prose(raw.get("fix_note")) if fix else "",
    )


def _findings(name: str, section: Mapping[str, Any], snippets: _Snippets) -> list[FindingView]:
    if name == "headers":  # a bare map header name -> header object (spec 2.3)
        return [
            _finding(
                name,
                i,
                header,
                snippets,
                header=True,
                title=f"{header_name} not checked"
                if left_not_checked(header, header=True)
                else f"{header_name} {_HEADER_STATUS_WORDS.get(header['status'], '')}".strip(),
            )
            for i, (header_name, header) in enumerate(section.items())
            if isinstance(header, Mapping) and "status" in header
        ]
    return [
        _finding(name, i, f, snippets) for i, f in enumerate(section.get("findings") or []) if isinstance(f, Mapping)
    ]


def _section(
    entry: Section, section: Mapping[str, Any] | None, pro_locked: bool, snippets: _Snippets
) -> SectionView | None:
    name, title, about = entry.key, entry.title, entry.summary
    if section is None:
        if pro_locked and entry.pro_only:
            return SectionView(name, title, about, status="locked", deduction=0, locked=True)
        return None
    findings = sorted(_findings(name, section, snippets), key=_worst_first)
    problems = [f for f in findings if f.problem]
    status = problems[0].status if problems else "good"
    deduction = section_points(name, section)
    passed = [f for f in findings if not f.problem]
    return SectionView(name, title, about, status, deduction, False, problems, passed, _points(deduction))


def _cap_reason(outcome: str, problems: list[FindingView]) -> str:
    """The headline of the finding that capped the grade (header findings are found by header name)."""
    header = _HEADER_OF_OUTCOME.get(outcome.split(".")[0])
    for finding in problems:
        if finding.check == outcome or (header and finding.section == "headers" and finding.title.startswith(header)):
            return finding.title
    return outcome


def _locked_text(locked: int, sections: list[SectionView]) -> str:
    """What the locked sections hold: "3 more findings in cookies and cross-origin isolation: ..."."""
    names = [_lower_first(s.title) for s in sections if s.locked]
    if not locked or not names:
        return ""
    return f"{counted(locked, 'more finding')} in {_and(names)}: Pro or a one-time scan shows them."


def _clear_text(locked_text: str) -> str:
    """With nothing to fix in what is shown: "every check passed" only when nothing is hidden either."""
    if not locked_text:
        return "No problems found: every check passed."
    return f"No problems in the sections shown; {locked_text}"


def _hidden_points(report: Mapping[str, Any], sections: list[SectionView]) -> HiddenPoints | None:
    """What the locked sections lost, together. The free body holds no figure for it, but the score does:
    score = 100 - every section's points (grading.py), so the locked ones lost what the score lost beyond
    the shown sections' points. Read from the score before any grade cap (caps only lower it); at 0 the
    floor may hide more, so the figure is then a lower bound."""
    locked = [s for s in sections if s.locked]
    if not locked:
        return None
    score = int(report.get("score") or 0)
    uncapped = max(score, int((report.get("grading") or {}).get("uncapped_score") or 0))
    shown = sum(s.deduction for s in sections if not s.locked)
    names = _and([locked[0].title, *(_lower_first(s.title) for s in locked[1:])])
    return HiddenPoints(f"{names} (full report only)", max(0, 100 - uncapped - shown), at_least=uncapped == 0)


def _floor_text(shown: list[SectionView], hidden: HiddenPoints | None) -> str:
    """What "Fix these first" says of the score's floor (`score_floor_sentence`), counting the locked sections'
    points, a lower bound when the floor may hide more of them."""
    total = sum(s.deduction for s in shown if not s.locked) + (hidden.points if hidden else 0)
    return score_floor_sentence(total, at_least=hidden is not None and hidden.at_least)


def report_view(report: Mapping[str, Any], *, top: int = 5) -> ReportView:
    """The display rows of one report (either shape: free, or Pro / one-time)."""
    pro_locked = bool(report.get("pro_locked", False))

    def snippets(raw: Any) -> list[Snippet]:
        return fix_snippets(report, raw)

    sections = [
        view for entry in SECTIONS if (view := _section(entry, report.get(entry.key), pro_locked, snippets)) is not None
    ]
    problems = sorted((f for s in sections for f in s.problems), key=_worst_first)
    by_key = {f.key: f for s in sections for f in s.problems}
    ranked = [by_key[k] for fix in fixes_by_impact(report) if (k := f"{fix.section}-{fix.index}") in by_key]
    counts = report.get("issue_counts") or {}
    if not counts:  # spec 2.2 does not promise issue_counts: count what is shown
        counts = {severity: sum(1 for f in problems if f.severity == severity) for severity in SEVERITIES}
        counts["total"] = len(problems)
    grade = _text(report.get("grade"))
    # Only the caps that set the grade are worth a line: a cap above the score's own grade changed nothing.
    # The chart lists every cap applied, the strictest first.
    applied = grade_caps(report)
    caps = [
        f"Grade capped at {cap.max_grade}: {_cap_reason(cap.outcome, problems)}" for cap in applied if cap.sets_grade
    ]
    all_caps = [f"Grade at most {cap.max_grade}: {_cap_reason(cap.outcome, problems)}" for cap in applied]
    locked_text = _locked_text(int(counts.get("locked", 0)), sections)
    hidden = _hidden_points(report, sections)
    return ReportView(
        url=_text(report.get("url")),
        final_url=_text(report.get("final_url") or report.get("url")),
        grade=grade,
        score=int(report.get("score") or 0),
        pro=not pro_locked,
        scanned_at=_when(_text(report.get("scanned_at"))),
        critical=int(counts.get("critical", 0)),
        important=int(counts.get("important", 0)),
        minor=int(counts.get("minor", 0)),
        total=int(counts.get("total", 0)),
        locked=int(counts.get("locked", 0)),
        locked_text=locked_text,
        clear_text=_clear_text(locked_text),
        floor_text=_floor_text(sections, hidden),
        caps=caps,
        top=ranked[:top],
        sections=sections,
        evidence=evidence(
            report,
            [(s.key, s.title, s.deduction) for s in sections if not s.locked],
            all_caps,
            hidden,
        ),
    )


def grade_tone(grade: str) -> str:
    """Radix colour of a grade badge."""
    return {"A+": "green", "A": "green", "B": "lime", "C": "amber", "D": "orange"}.get(grade, "red")
