"""What the site page shows of a subscriber's history of one URL (issue 17): rows, the score chart, the diff.

Pure: use case results in, plain dataclasses out (Reflex state vars). The chart's geometry is computed here,
so the page draws it without a chart library and a test can check each point against its scan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from websec_app.scanner.diff import FindingChange, Found, ReportDiff, found_of
from websec_app.scanner.rules.titles import plain_title
from websec_app.usecases.history import HistoryEntry
from websec_app.wording import counted

#: The chart's plot area is 0..100 on both axes (an SVG viewBox stretched to the box): x is time, y is the score.
PLOT_SIZE = 100
#: The scores the chart labels on its y axis.
SCORE_TICKS = (100, 75, 50, 25, 0)

_KIND_LABELS = {"pro": "Pro scan", "pdf": "PDF report", "monitor": "Monitor run", "api": "API scan"}
_SECTION_HEADERS = ("headers", "cross_origin")


def site_path(url: str) -> str:
    """The site page of `url` (the monitor alert emails link to the same: services/email/monitor_alerts.py)."""
    return f"/site?{urlencode({'url': url})}"


def day(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d}"


def minute(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True)
class HistoryRow:
    report_id: str
    when: str
    grade: str
    score: int
    kind: str
    link: str


def history_rows(entries: Sequence[HistoryEntry]) -> list[HistoryRow]:
    return [
        HistoryRow(
            e.report_id,
            minute(e.scanned_at),
            e.grade,
            e.score,
            _KIND_LABELS.get(e.kind, e.kind),
            f"/report/{e.report_id}",
        )
        for e in entries
    ]


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    score: int
    grade: str
    when: str
    #: The SVG path of the point: a zero-length stroke with round caps, drawn as a dot whatever the stretch.
    dot: str


@dataclass(frozen=True)
class ScoreChart:
    points: list[ChartPoint] = field(default_factory=list)
    line: str = ""  # the SVG polyline's points
    first_day: str = ""
    last_day: str = ""
    summary: str = ""  # the chart in words: its text alternative


def _round(value: float) -> float:
    return float(round(value, 2))


def score_chart(entries: Sequence[HistoryEntry]) -> ScoreChart:
    """Oldest scan on the left, newest on the right, spaced by time; score 100 at the top."""
    if not entries:
        return ScoreChart(summary="No scans yet.")
    oldest_first = sorted(entries, key=lambda e: e.scanned_at)
    start, end = oldest_first[0].scanned_at, oldest_first[-1].scanned_at
    span = (end - start).total_seconds()
    points: list[ChartPoint] = []
    for index, entry in enumerate(oldest_first):
        x: float
        if span > 0:
            x = PLOT_SIZE * (entry.scanned_at - start).total_seconds() / span
        elif len(oldest_first) > 1:  # all at one moment: evenly spaced, in order
            x = PLOT_SIZE * index / (len(oldest_first) - 1)
        else:
            x = PLOT_SIZE / 2
        x, y = _round(x), _round(PLOT_SIZE - max(0, min(PLOT_SIZE, entry.score)))
        points.append(ChartPoint(x, y, entry.score, entry.grade, minute(entry.scanned_at), f"M{x:g} {y:g}h0"))
    scores = [e.score for e in oldest_first]
    latest = oldest_first[-1]
    summary = (
        f"{counted(len(oldest_first), 'scan')} from {day(start)} to {day(end)}; "
        f"lowest {min(scores)}, highest {max(scores)}; latest {latest.score} (grade {latest.grade})."
    )
    return ScoreChart(
        points=points,
        line=" ".join(f"{p.x:g},{p.y:g}" for p in points),
        first_day=day(start),
        last_day=day(end),
        summary=summary,
    )


@dataclass(frozen=True)
class DiffRow:
    title: str
    severity: str
    detail: str  # "-20 points", "Weak, -5 → Missing, -20"
    found: list[str] = field(default_factory=list)  # a new finding's first notes: what the scan found
    more_found: str = ""  # "and 2 more notes in the report", or ""


@dataclass(frozen=True)
class DiffView:
    shown: bool = False  # False: fewer than two kept scans, nothing to compare
    before_when: str = ""
    after_when: str = ""
    grade_before: str = ""
    grade_after: str = ""
    score_before: int = 0
    score_after: int = 0
    score_change: str = ""  # "+12", "-5", "no change"
    summary: str = ""  # one sentence: what changed
    rules_note: str = ""  # the two scans were graded with different rules (ReportDiff.rules_note), or ""
    new: list[DiffRow] = field(default_factory=list)
    fixed: list[DiffRow] = field(default_factory=list)
    changed: list[DiffRow] = field(default_factory=list)


def finding_title(change: FindingChange) -> str:
    """A plain title: the header's name for a header-map entry, else the outcome's plain title; and its
    subject (a cookie's name) when it names one."""
    if change.section in _SECTION_HEADERS and "." not in change.name:
        title = f"{change.name} header"
    else:
        title = plain_title(change.name)
    return f"{title}: {change.subject}" if change.subject else title


_STATUS_WORDS = {"good": "Good", "warn": "Warning", "weak": "Weak", "missing": "Missing", "bad": "Bad"}


#: A subject's row whose finding's points are on another row, or did not change (a cookie joined a finding
#: that was already there): no "-N points" that would count them twice.
NO_POINTS = "no points of its own"


def _status(state: Mapping[str, Any] | None) -> str:
    return _STATUS_WORDS.get(str(state.get("status")), str(state.get("status"))) if state else "not an issue"


def _state(state: Mapping[str, Any] | None) -> str:
    return f"{_status(state)}, -{int(state.get('deduction') or 0)}" if state else _status(state)


def _points(change: FindingChange) -> str:
    if change.shared:
        return NO_POINTS
    state = change.after or change.before or {}
    return f"-{int(state.get('deduction') or 0)} points"


def _row(change: FindingChange, *, moved: bool = False, found: Found | None = None) -> DiffRow:
    if moved and change.shared:
        detail = f"{_status(change.before)} → {_status(change.after)}, {NO_POINTS}"
    elif moved:
        detail = f"{_state(change.before)} → {_state(change.after)}"
    else:
        detail = _points(change)
    found = found or Found()
    more = f"and {counted(found.more, 'more note')} in the report" if found.more else ""
    return DiffRow(finding_title(change), change.severity, detail, list(found.notes), more)


def _signed(change: int) -> str:
    return "no change" if change == 0 else f"{change:+d}"


def diff_view(
    diff: ReportDiff | None, before: datetime | None, after: datetime, report: Mapping[str, Any] | None = None
) -> DiffView:
    """`report`: the later scan's, whose notes say what was found of each new finding."""
    if diff is None or before is None:
        return DiffView()
    parts = [
        counted(len(diff.new), "new finding"),
        counted(len(diff.fixed), "fixed finding"),
        counted(len(diff.changed), "changed finding"),
    ]
    grade = (
        f"grade {diff.grade_before} → {diff.grade_after}"
        if diff.grade_before != diff.grade_after
        else f"grade {diff.grade_after} (no change)"
    )
    summary = (
        "Nothing changed since the scan before."
        if diff.unchanged
        else f"{', '.join(parts)}; {grade}, score {diff.score_before} → {diff.score_after}."
    )
    return DiffView(
        shown=True,
        before_when=minute(before),
        after_when=minute(after),
        grade_before=diff.grade_before,
        grade_after=diff.grade_after,
        score_before=diff.score_before,
        score_after=diff.score_after,
        score_change=_signed(diff.score_change),
        summary=summary,
        rules_note=diff.rules_note or "",
        new=[_row(change, found=found) for change, found in zip(diff.new, found_of(report, diff.new), strict=True)],
        fixed=[_row(c) for c in diff.fixed],
        changed=[_row(c, moved=True) for c in diff.changed],
    )


__all__ = [
    "PLOT_SIZE",
    "SCORE_TICKS",
    "ChartPoint",
    "DiffRow",
    "DiffView",
    "HistoryRow",
    "ScoreChart",
    "diff_view",
    "finding_title",
    "history_rows",
    "score_chart",
    "site_path",
]
