"""The ScanReport that the API, UI, CLI and PDFs all render."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..wording import counted
from .findings import GRADES, SEVERITIES
from .sections import PRO_ONLY_SECTIONS, SECTION_ORDER

if TYPE_CHECKING:
    from .rules import RuleBook

# Section order and the Pro-only sections (spec 2.1: "cookies and cross_origin omitted") come from the
# one section table, rules/sections.toml (websec_app/scanner/sections.py).


@dataclass(frozen=True)
class ScanReport:
    url: str
    final_url: str
    status_code: int
    score: int
    grade: str
    algorithm_version: str
    scanned_at: str  # ISO 8601, UTC
    duration_ms: int
    issue_counts: dict[str, int]
    sections: dict[str, dict[str, Any]]
    caps: tuple[dict[str, str], ...] = ()
    uncapped_score: int = 0
    timings: tuple[dict[str, Any], ...] = field(default=())

    def to_dict(self, *, pro: bool = True, include_fix: bool = True) -> dict[str, Any]:
        """The JSON body: spec 2.2 when `pro`, spec 2.1 otherwise (fixes only with `include_fix`).

        `issue_counts` counts what this body shows; `locked` counts what the free body hides (issue 11).
        """
        shown = {n: s for n, s in self.sections.items() if pro or n not in PRO_ONLY_SECTIONS}
        hidden = {n: s for n, s in self.sections.items() if n not in shown}
        body: dict[str, Any] = {
            "url": self.url,
            "final_url": self.final_url,
            "status_code": self.status_code,
            "grade": self.grade,
            "score": self.score,
            "pro_locked": not pro,
            "issue_counts": {**count_issues(shown), "locked": count_issues(hidden)["total"]},
        }
        for name in SECTION_ORDER:
            if name not in self.sections or (not pro and name in PRO_ONLY_SECTIONS):
                continue
            body[name] = _json_copy(self.sections[name], strip_fixes=not include_fix)
        body["grading"] = {
            "algorithm_version": self.algorithm_version,
            "uncapped_score": self.uncapped_score,
            "caps": [dict(c) for c in self.caps],
        }
        body["scanned_at"] = self.scanned_at
        body["duration_ms"] = self.duration_ms
        return body


#: A fix and what is shown only with it: its snippets, and its note (how to apply it, which speaks of the fix).
_FIX_KEYS = frozenset({"fix", "fix_snippets", "fix_note"})
_IMMUTABLE = (str, int, float, bool, type(None))


def _json_copy(node: Any, *, strip_fixes: bool) -> Any:
    """A deep copy of a section's JSON tree (dicts, lists, tuples, scalars), with every `fix` value, its
    `fix_snippets` and its `fix_note` nulled at any depth when `strip_fixes` (header objects and findings alike).

    In one pass, without copy.deepcopy's memo and dispatch: this was ~1 ms of every report served (issue 14).
    Anything else in the tree is deep-copied and stripped as before."""
    kind = type(node)
    if kind is dict:
        if strip_fixes:
            return {
                key: None if key in _FIX_KEYS else _json_copy(value, strip_fixes=True) for key, value in node.items()
            }
        return {key: _json_copy(value, strip_fixes=False) for key, value in node.items()}
    if kind is list:
        return [_json_copy(item, strip_fixes=strip_fixes) for item in node]
    if isinstance(node, _IMMUTABLE):
        return node
    copied = copy.deepcopy(node)  # not plain JSON (a tuple, a dict subclass): copied and stripped as before
    if strip_fixes:
        _strip_fixes(copied)
    return copied


def _strip_fixes(node: Any) -> None:
    """Null every `fix` value, in header objects and in findings alike, and its `fix_snippets` and `fix_note`."""
    if isinstance(node, dict):
        for key in _FIX_KEYS & node.keys():
            node[key] = None
        for value in node.values():
            _strip_fixes(value)
    elif isinstance(node, list):
        for item in node:
            _strip_fixes(item)


# --- what the renderers share: the report's items, the issue counts, the fixes in order ------------------


#: The note of a header object whose check could not run (grading.py writes it).
NOT_CHECKED = "not checked"


def notes_of(item: Mapping[str, Any]) -> list[str]:
    """A header object's or finding's notes, one by one: its `notes`, or its joined `note` as one (a report made
    before `notes` was added, where the join cannot be split back)."""
    notes = item.get("notes")
    if isinstance(notes, list) and all(isinstance(note, str) for note in notes):
        return [note for note in notes if note]
    note = item.get("note")
    return [str(note)] if note else []


@dataclass(frozen=True)
class GradeCap:
    """A grade cap applied (spec 2.2, `grading.caps`): while `outcome` stands the grade is `max_grade` at best."""

    outcome: str
    max_grade: str
    sets_grade: bool  # the report's grade is this cap's: the score alone would have given a better one

    @property
    def reach(self) -> str:
        """How a summary says it: "capped at" the grade it set, "at most" one the score is below already."""
        return "capped at" if self.sets_grade else "at most"

    @property
    def condition(self) -> str:
        """What a summary adds to a cap that set nothing today: it holds once the score rises."""
        return "" if self.sets_grade else ", whatever the score"


def grade_caps(body: Mapping[str, Any]) -> list[GradeCap]:
    """The report body's grade caps, the strictest first. One above the report's grade changed nothing today (the
    score set a worse grade) but still holds once the score rises: renderers say which is which."""
    grading = body.get("grading")
    caps = grading.get("caps") if isinstance(grading, Mapping) else None
    found = [
        GradeCap(str(cap["outcome"]), cap["max_grade"], cap["max_grade"] == body.get("grade"))
        for cap in caps or []
        if isinstance(cap, Mapping) and cap.get("max_grade") in GRADES
    ]
    return sorted(found, key=lambda cap: -GRADES.index(cap.max_grade))


def left_not_checked(item: Mapping[str, Any], *, header: bool) -> bool:
    """Whether a header object (spec 2.3) or a finding stands for a check that could not run: a `check.error`
    or `check.crashed` finding, or a header object its check left "not checked" (grading.py)."""
    if header:
        return str(item.get("note") or "").startswith(NOT_CHECKED)
    return item.get("check") in ("check.error", "check.crashed")


@dataclass(frozen=True)
class ReportItem:
    """One header object (spec 2.3) or one finding of a report, where it sits, and the dict itself."""

    section: str
    name: str  # the header name for a header object, the outcome id (`check`) for a finding
    index: int  # its position in the section (the header map's order, or the findings list's)
    item: Mapping[str, Any]
    header: bool = False  # a header object of the bare `headers` map, not a finding

    @property
    def status(self) -> str:
        return str(self.item.get("status") or "good")

    @property
    def severity(self) -> str:
        return str(self.item.get("severity") or "minor")

    @property
    def deduction(self) -> int:
        return int(self.item.get("deduction") or 0)

    @property
    def not_checked(self) -> bool:
        return left_not_checked(self.item, header=self.header)

    @property
    def is_issue(self) -> bool:
        """What `issue_counts` counts: every status but good; a check that could not run is no issue (a
        blocked scan's unread headers are not six things to fix)."""
        return self.status != "good" and not self.not_checked


def _sections(report: ScanReport | Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    source = report.sections if isinstance(report, ScanReport) else report
    return {name: source[name] for name in SECTION_ORDER if isinstance(source.get(name), Mapping)}


def report_items(report: ScanReport | Mapping[str, Any]) -> list[ReportItem]:
    """Every header object and finding, in section order.

    A section with a `findings` list is read from it (cross_origin's header objects beside it restate
    those findings); the bare `headers` map (spec 2.3) is read header by header, each object carrying
    its own deduction (its findings', capped at what absence costs: grading.py).
    """
    items: list[ReportItem] = []
    for section, body in _sections(report).items():
        if "findings" in body:
            listed = body["findings"] if isinstance(body["findings"], list) else []
            items += [
                ReportItem(section, str(f.get("check") or ""), i, f)
                for i, f in enumerate(listed)
                if isinstance(f, Mapping)
            ]
        else:
            items += [
                ReportItem(section, str(name), i, h, header=True)
                for i, (name, h) in enumerate(body.items())
                if isinstance(h, Mapping) and "status" in h
            ]
    return items


def header_outcome(name: str, header: Mapping[str, Any], book: RuleBook | None = None) -> str | None:
    """The rule a header object (spec 2.3, which carries no outcome id) came from: `check.error` for one its
    check left not checked (whose "warn" matches no rule of the header: the first warn rule would describe a
    finding nobody made, e.g. a blocked scan's "allows inline scripts"); else the rule of that header with the
    same status and explanation; else the first rule of that header and status."""
    if left_not_checked(header, header=True):
        return "check.error"
    from .rules import default_rulebook

    rules = [
        r for r in (book or default_rulebook()).rules.values() if r.subject == name and r.status == header.get("status")
    ]
    for rule in rules:
        if rule.explanation == header.get("explanation"):
            return rule.outcome
    return rules[0].outcome if rules else None


def count_issues(report: ScanReport | Mapping[str, Any]) -> dict[str, int]:
    """`issue_counts` (spec 2.1) of the sections given: critical, important, minor, total."""
    counts = {severity: 0 for severity in reversed(SEVERITIES)}
    for item in report_items(report):
        if item.is_issue:
            counts[item.severity if item.severity in counts else "minor"] += 1
    return {**counts, "total": sum(counts.values())}


def fixes_by_impact(report: ScanReport | Mapping[str, Any], *, limit: int | None = None) -> list[ReportItem]:
    """The issues, the ones that cost the most points first; then the more severe; then in section order.

    Every "Fix these first" list (web report, CLI, scan PDF, compliance plan) reads this, so a site owner
    who fixes from the top gains the most score first (issue 11: a -15 `warn` CSP was ranked after -3
    `missing` headers, because lists went by status first). Give it the body that is shown (a free body
    has no cookies or cross_origin), or a ScanReport for everything.
    """
    sections = list(SECTION_ORDER)
    ranked = sorted(
        (item for item in report_items(report) if item.is_issue),
        key=lambda f: (
            -f.deduction,
            -(SEVERITIES.index(f.severity) if f.severity in SEVERITIES else 0),
            sections.index(f.section),
            f.index,
        ),
    )
    return ranked if limit is None else ranked[:limit]


def section_points(key: str, body: Mapping[str, Any]) -> int:
    """What a section lost, as the summary table, the chart and the totals all say it: the bare header map's
    header objects' (each capped at what the header's absence costs: grading.py), any other section's own."""
    if key == "headers":
        return sum(int(h.get("deduction") or 0) for h in body.values() if isinstance(h, Mapping))
    return int(body.get("deduction") or 0)


def score_floor_sentence(points_lost: int, *, at_least: bool = False) -> str:
    """Why fixing the first of "Fix these first" may not move the score: it is floored at 0 (grading.py), so
    when the problems cost more than 100 points in all, the sentence that says so; "" otherwise. `at_least`
    when `points_lost` is a lower bound (a free report sees only that of its locked sections' points)."""
    if points_lost <= 100:
        return ""
    if at_least:
        return (
            f"All the problems found cost at least {counted(points_lost, 'point')} together, more than the 100 a "
            "score starts from: the score stays at 0 until several are fixed."
        )
    return (
        f"All the problems found cost {counted(points_lost, 'point')} together, more than the 100 a score starts "
        f"from, so the score stays at 0 until fixes take back more than {counted(points_lost - 100, 'point')}."
    )
