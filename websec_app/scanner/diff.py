"""What changed between two reports of one site (issue 17): findings new, fixed and changed, grade and score.

Pure, over report bodies (`ScanReport.to_dict()` or a stored one). A finding is the same finding in both
when it sits in the same section under the same name (the outcome id, or the header's name in the headers
map) about the same subject; it is an issue when `issue_counts` counts it (report.ReportItem.is_issue).

Grading merges the findings of one outcome into one entry with a `subjects` list (two cookies without
Secure are one finding naming both), so the diff compares subject by subject: a subject added to a finding
is a new issue (for that subject: a second cookie shipped without Secure), a subject gone from it is fixed.
A finding without subjects (a header, a TLS check) has the subject None.

Points are the finding's, counted once: each change's `before`/`after` deduction is what that entry accounts
for, so the points of one diff add up to what changed. A finding that appeared, went or changed carries its
deduction on its first subject's entry (in the report's order; a `changed` entry before `new`/`fixed`); its
other subjects' entries show deduction 0. A subject that only joined or left a finding that is there before
and after with the same status and deduction shows deduction 0 too: the score did not move for it. Those
entries are `shared` (not in `to_dict`, the JSON keeps its shape), so a reader can say "no points of its own".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .report import ReportItem, report_items


@dataclass(frozen=True)
class FindingChange:
    section: str
    name: str
    severity: str
    before: Mapping[str, Any] | None  # {"status", "deduction"}; None: not an issue before
    after: Mapping[str, Any] | None  # None: not an issue now
    subject: str | None = None  # the finding's subject (a cookie's name) when it names subjects
    #: True when this entry's points are 0 because the finding's are counted on another entry or did not
    #: change (a subject joined or left a finding that stayed as it was); not part of the JSON.
    shared: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "subject": self.subject,
            "severity": self.severity,
            "before": dict(self.before) if self.before else None,
            "after": dict(self.after) if self.after else None,
        }


@dataclass(frozen=True)
class ReportDiff:
    grade_before: str
    grade_after: str
    score_before: int
    score_after: int
    new: tuple[FindingChange, ...] = field(default=())
    fixed: tuple[FindingChange, ...] = field(default=())
    changed: tuple[FindingChange, ...] = field(default=())

    @property
    def score_change(self) -> int:
        return self.score_after - self.score_before

    @property
    def unchanged(self) -> bool:
        return not (self.new or self.fixed or self.changed) and self.score_change == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "grade": {"before": self.grade_before, "after": self.grade_after},
            "score": {"before": self.score_before, "after": self.score_after, "change": self.score_change},
            "new": [c.to_dict() for c in self.new],
            "fixed": [c.to_dict() for c in self.fixed],
            "changed": [c.to_dict() for c in self.changed],
        }


Finding = tuple[str, str]  # (section, name)
State = tuple[str, int]  # (status, deduction)


def _issues(body: Mapping[str, Any]) -> dict[Finding, dict[str | None, ReportItem]]:
    """Every issue by (section, name), then by subject in the report's order: a finding naming several
    subjects is one issue each."""
    issues: dict[Finding, dict[str | None, ReportItem]] = {}
    for item in report_items(body):
        if not item.is_issue:
            continue
        subjects = item.item.get("subjects")
        named: list[str | None] = [str(s) for s in subjects] if isinstance(subjects, list) and subjects else [None]
        for subject in named:
            issues.setdefault((item.section, item.name), {})[subject] = item
    return issues


def _key(item: ReportItem) -> State:
    return (item.status, item.deduction)


class _Points:
    """Hands out one side's deductions of one finding: each report item's once, and none for an item that
    stayed as it was (the other side has an item of the same finding with the same status and deduction)."""

    def __init__(self, items: Mapping[str | None, ReportItem], other: Mapping[str | None, ReportItem]) -> None:
        kept = {_key(i) for i in other.values()}
        self._spent = {i.index for i in items.values() if _key(i) in kept}

    def state(self, item: ReportItem) -> tuple[dict[str, Any], bool]:
        """The entry's state, and whether its points were left out (counted elsewhere, or unchanged)."""
        if item.index in self._spent:
            return {"status": item.status, "deduction": 0}, True
        self._spent.add(item.index)
        return {"status": item.status, "deduction": item.deduction}, False


def _changes(
    finding: Finding, old: Mapping[str | None, ReportItem], new: Mapping[str | None, ReportItem]
) -> tuple[list[FindingChange], list[FindingChange], list[FindingChange]]:
    """(new, fixed, changed) of one finding, subject by subject, its points counted once."""
    section, name = finding
    before, after = _Points(old, new), _Points(new, old)
    moved: list[FindingChange] = []
    for subject, item in new.items():
        was = old.get(subject)
        if was is None or _key(was) == _key(item):
            continue
        (b, b_shared), (a, a_shared) = before.state(was), after.state(item)
        moved.append(FindingChange(section, name, item.severity, b, a, subject, b_shared and a_shared))
    appeared: list[FindingChange] = []
    for subject, item in new.items():
        if subject not in old:
            state, shared = after.state(item)
            appeared.append(FindingChange(section, name, item.severity, None, state, subject, shared))
    gone: list[FindingChange] = []
    for subject, item in old.items():
        if subject not in new:
            state, shared = before.state(item)
            gone.append(FindingChange(section, name, item.severity, state, None, subject, shared))
    return appeared, gone, moved


def _points_first(changes: list[FindingChange]) -> tuple[FindingChange, ...]:
    """Costliest finding first; within one finding the entry carrying its points, then the others."""

    def points(change: FindingChange) -> int:
        return max(int((change.before or {}).get("deduction", 0)), int((change.after or {}).get("deduction", 0)))

    costs: dict[Finding, int] = {}
    for change in changes:
        costs[(change.section, change.name)] = max(costs.get((change.section, change.name), 0), points(change))
    return tuple(
        sorted(
            changes,
            key=lambda c: (-costs[(c.section, c.name)], c.section, c.name, c.shared, -points(c), c.subject or ""),
        )
    )


def diff_reports(before: Mapping[str, Any], after: Mapping[str, Any]) -> ReportDiff:
    """`after` compared with `before` (the older scan)."""
    old, new = _issues(before), _issues(after)
    appeared: list[FindingChange] = []
    gone: list[FindingChange] = []
    moved: list[FindingChange] = []
    for finding in [*new, *(f for f in old if f not in new)]:
        added, removed, changed = _changes(finding, old.get(finding, {}), new.get(finding, {}))
        appeared += added
        gone += removed
        moved += changed
    return ReportDiff(
        grade_before=str(before.get("grade", "")),
        grade_after=str(after.get("grade", "")),
        score_before=int(before.get("score") or 0),
        score_after=int(after.get("score") or 0),
        new=_points_first(appeared),
        fixed=_points_first(gone),
        changed=_points_first(moved),
    )
