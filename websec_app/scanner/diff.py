"""What changed between two reports of one site (issue 17): findings new, fixed and changed, grade and score.

Pure, over report bodies (`ScanReport.to_dict()` or a stored one). A finding is the same finding in both
when it sits in the same section under the same name (the outcome id, or the header's name in the headers
map); it is an issue when `issue_counts` counts it (report.ReportItem.is_issue).
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
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


def _issues(body: Mapping[str, Any]) -> dict[tuple[str, str], ReportItem]:
    return {(item.section, item.name): item for item in report_items(body) if item.is_issue}


def _state(item: ReportItem) -> dict[str, Any]:
    return {"status": item.status, "deduction": item.deduction}


def _points_first(changes: list[FindingChange]) -> tuple[FindingChange, ...]:
    def points(change: FindingChange) -> int:
        return max(int((change.before or {}).get("deduction", 0)), int((change.after or {}).get("deduction", 0)))

    return tuple(sorted(changes, key=lambda c: (-points(c), c.section, c.name)))


def diff_reports(before: Mapping[str, Any], after: Mapping[str, Any]) -> ReportDiff:
    """`after` compared with `before` (the older scan)."""
    old, new = _issues(before), _issues(after)
    appeared = [
        FindingChange(s, n, item.severity, None, _state(item)) for (s, n), item in new.items() if (s, n) not in old
    ]
    gone = [FindingChange(s, n, item.severity, _state(item), None) for (s, n), item in old.items() if (s, n) not in new]
    moved = [
        FindingChange(s, n, item.severity, _state(old[(s, n)]), _state(item))
        for (s, n), item in new.items()
        if (s, n) in old and _state(old[(s, n)]) != _state(item)
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
