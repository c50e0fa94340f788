"""What changed between two reports of one site (issue 17): findings new, fixed and changed, grade and score.

Pure, over report bodies (`ScanReport.to_dict()` or a stored one). A finding is the same finding in both
when it sits in the same section under the same name (the outcome id, or the header's name in the headers
map) about the same subject; it is an issue when `issue_counts` counts it (report.ReportItem.is_issue).

Grading merges the findings of one outcome into one entry with a `subjects` list (two cookies without
Secure are one finding naming both), so the diff compares subject by subject: a subject added to a finding
is a new issue (for that subject: a second cookie shipped without Secure), a subject gone from it is fixed.
A finding without subjects (a header, a TLS check) has the subject None.
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


Key = tuple[str, str, str | None]


def _issues(body: Mapping[str, Any]) -> dict[Key, ReportItem]:
    """Every issue by (section, name, subject): a finding naming several subjects is one issue each."""
    issues: dict[Key, ReportItem] = {}
    for item in report_items(body):
        if not item.is_issue:
            continue
        subjects = item.item.get("subjects")
        named: list[str | None] = [str(s) for s in subjects] if isinstance(subjects, list) and subjects else [None]
        for subject in named:
            issues[(item.section, item.name, subject)] = item
    return issues


def _state(item: ReportItem) -> dict[str, Any]:
    return {"status": item.status, "deduction": item.deduction}


def _points_first(changes: list[FindingChange]) -> tuple[FindingChange, ...]:
    def points(change: FindingChange) -> int:
        return max(int((change.before or {}).get("deduction", 0)), int((change.after or {}).get("deduction", 0)))

    return tuple(sorted(changes, key=lambda c: (-points(c), c.section, c.name, c.subject or "")))


def diff_reports(before: Mapping[str, Any], after: Mapping[str, Any]) -> ReportDiff:
    """`after` compared with `before` (the older scan)."""
    old, new = _issues(before), _issues(after)
    appeared = [
        FindingChange(s, n, item.severity, None, _state(item), x)
        for (s, n, x), item in new.items()
        if (s, n, x) not in old
    ]
    gone = [
        FindingChange(s, n, item.severity, _state(item), None, x)
        for (s, n, x), item in old.items()
        if (s, n, x) not in new
    ]
    moved = [
        FindingChange(s, n, item.severity, _state(old[(s, n, x)]), _state(item), x)
        for (s, n, x), item in new.items()
        if (s, n, x) in old and _state(old[(s, n, x)]) != _state(item)
    ]
    return ReportDiff(
        grade_before=str(before.get("grade", "")),
        grade_after=str(after.get("grade", "")),
        score_before=int(before.get("score") or 0),
        score_after=int(after.get("score") or 0),
        new=_points_first(appeared),
        fixed=_points_first(gone),
        changed=_points_first(moved),
    )
