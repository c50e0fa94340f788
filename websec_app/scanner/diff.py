"""What changed between two reports of one site (issue 17): findings new, fixed and changed, grade and score.

Pure, over report bodies (`ScanReport.to_dict()` or a stored one). A finding is the same finding in both
when it sits in the same section under the same name (the outcome id, or the header's name in the headers
map) about the same subject; it is an issue when `issue_counts` counts it (report.ReportItem.is_issue).

Grading merges the findings of one outcome into one entry with a `subjects` list (two cookies without
Secure are one finding naming both), so the diff compares subject by subject: a subject added to a finding
is a new issue (for that subject: a second cookie shipped without Secure), a subject gone from it is fixed.
A finding without subjects (a header, a TLS check) has the subject None. A finding lists at most 50 subjects
and counts the others (`subjects_not_listed`, findings.LIST_LIMIT), so a subject missing from a list that was
cut is neither new nor fixed (it may be one counted there), and is compared with the finding as that side
graded it.

Points are the finding's, counted once: each change's `before`/`after` deduction is what that entry accounts
for, so the points of one diff add up to what changed. A finding that appeared, went or changed carries its
deduction on its first subject's entry (in the report's order; a `changed` entry before `new`/`fixed`); its
other subjects' entries show deduction 0. A subject that only joined or left a finding that is there before
and after with the same status and deduction shows deduction 0 too: the score did not move for it. Those
entries are `shared` (not in `to_dict`, the JSON keeps its shape), so a reader can say "no points of its own".

A check that could not run (`check.error`, `check.crashed`, a header left "not checked", a section read off a
bot challenge: report.left_not_checked, checks/blocked.py) says nothing of what it would have found, so a
finding missing from the side where its check did not run is neither new nor fixed: a scan blocked once, or
one DMARC lookup that timed out, must not report the site's missing CSP or DMARC as fixed, then as new on the
next scan (a false alert). A section whose checks are many lookups apart (dns) says which families of lookups
decide each finding, and each failure the family of the lookup that failed (the report's `families`, set by
checks/dns.py; a lookup asked and not answered in time is a failure too, fetch/dns.py, so a family without
findings was checked), so there a failure hides only the findings that name its family: a DMARC lookup that
timed out leaves out DMARC alone, SPF turned to +all in the next scan is still new, and so is www turned into a
dangling CNAME though the scan before had no CNAME finding at all. A failure that names no family (any other section, a
crashed check, or a report stored before `families`) may have hidden any finding of its section, so every
finding missing from it is left out; one present on both sides is still compared. The score's change still
counts what the unchecked part did to it.

Such a finding is not lost for good: given `earlier` reports of the site (older than `before`, newest first), a
finding `after` holds that `before` could not have seen is compared with the newest of them whose check did
run. A monitor's run after a blocked one (or one whose DMARC lookup timed out) finds the CSP removed meanwhile
as new, and the site's CSP missing all along as nothing. Only `after`'s findings are looked up there (new and
changed, never fixed: a finding gone after the gap stays unsaid, as a two-report diff leaves it), and the
earlier reports are read only as far as a finding needs them. An entry compared with an earlier report takes
its `before` from that report, its points counted once as above.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .records.header_text import as_utf8
from .report import ReportItem, notes_of, report_items


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
    #: `before` could not check part of the site (a check.error, a header left "not checked", a block page):
    #: its grade stood higher for what it did not see. Not part of the JSON.
    before_checked_less: bool = False
    #: The grading versions the two reports were graded with (`grading.algorithm_version`; "" when a report has
    #: none). Not part of the JSON.
    rules_before: str = ""
    rules_after: str = ""

    @property
    def score_change(self) -> int:
        return self.score_after - self.score_before

    @property
    def unchanged(self) -> bool:
        return not (self.new or self.fixed or self.changed) and self.score_change == 0

    @property
    def rules_note(self) -> str | None:
        """A sentence for a reader of the diff when the two scans were graded by different rules: a check added
        (or a deduction changed) between them makes a finding new, or moves the score, with nothing changed on the
        site. None when the rules are the same (or a report does not say)."""
        if not self.rules_before or not self.rules_after or self.rules_before == self.rules_after:
            return None
        return (
            f"The two scans were graded with different rules ({self.rules_before}, then {self.rules_after}): part of "
            "this change may come from what websec checks now, not from the site."
        )

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


def _cookie_names_as_now(old: _Side, new: _Side) -> None:
    """Reports graded before the cookies check named a cookie set in UTF-8 by its characters (`Jürgen`) named it by
    the latin-1 text of its bytes (`JÃ¼rgen`): in `old`, such a subject that `new` lacks is renamed to the name `new`
    gives it, decoded once and that way only, so the same cookie is not one fixed and one new (a false alert after
    the deploy). Subjects both sides name alike are left as they are."""
    for finding, before in old.issues.items():
        after = new.issues.get(finding)
        if finding[0] != "cookies" or not after:
            continue
        for subject in [s for s in before if s is not None and s not in after]:
            now = as_utf8(subject)
            if now != subject and now in after and now not in before:
                before[now] = before.pop(subject)


def _families(item: ReportItem) -> frozenset[str] | None:
    """The families a finding names (the report's `families`); None when it names none."""
    named = item.item.get("families")
    return frozenset(str(f) for f in named) if isinstance(named, list) and named else None


@dataclass(frozen=True)
class _Side:
    """One report as the diff reads it: its issues by (section, name), then by subject in the report's order
    (a finding naming several subjects is one issue each), and what it could not check."""

    issues: dict[Finding, dict[str | None, ReportItem]]
    unchecked_sections: frozenset[str]  # a check of the section could not run, or read a block page
    unchecked_headers: frozenset[Finding]  # header objects left "not checked"
    #: sections whose every failure named the families it left unchecked, and those (section, family)
    partly_checked: frozenset[str]
    unchecked_families: frozenset[tuple[str, str]]

    def could_miss(self, finding: Finding, families: frozenset[str] | None) -> bool:
        """Whether this report may lack `finding` only because its check did not run; `families`: the ones
        the finding names where a report holds it (None: none, so any failure of its section may hide it)."""
        section, _ = finding
        if section in self.partly_checked:
            return families is None or any((section, family) in self.unchecked_families for family in families)
        return section in self.unchecked_sections or finding in self.unchecked_headers


def _side(body: Mapping[str, Any]) -> _Side:
    issues: dict[Finding, dict[str | None, ReportItem]] = {}
    sections: set[str] = set()
    headers: set[Finding] = set()
    failed_families: set[tuple[str, str]] = set()
    unnamed: set[str] = set()  # sections with a failure that names no family
    for item in report_items(body):
        if item.not_checked and item.header:
            headers.add((item.section, item.name))
        elif item.not_checked:
            sections.add(item.section)
            failed = _families(item)
            if failed is None:
                unnamed.add(item.section)
            failed_families |= {(item.section, family) for family in failed or ()}
        if not item.is_issue:
            continue
        subjects = item.item.get("subjects")
        named: list[str | None] = [str(s) for s in subjects] if isinstance(subjects, list) and subjects else [None]
        for subject in named:
            issues.setdefault((item.section, item.name), {})[subject] = item
    # page_analysis under a block page carries scan.blocked alone, not check.error (checks/blocked.py)
    blocked = {name for name, section in body.items() if isinstance(section, Mapping) and section.get("blocked")}
    sections |= blocked
    partly = sections - unnamed - blocked
    return _Side(
        issues,
        frozenset(sections - partly),
        frozenset(headers),
        frozenset(partly),
        frozenset(failed_families),
    )


def _key(item: ReportItem) -> State:
    return (item.status, item.deduction)


class _Points:
    """Hands out one side's deductions of one finding: each report item's once, and none for an item that
    stayed as it was (the other side has an item of the same finding with the same status and deduction)."""

    def __init__(self, items: Mapping[str | None, ReportItem], other: Mapping[str | None, ReportItem]) -> None:
        kept = {_key(i) for i in other.values()}
        # by identity: the items of one side may come from two reports (`before` and an earlier one), whose
        # positions in the section can be the same
        self._spent = {id(i) for i in items.values() if _key(i) in kept}

    def state(self, item: ReportItem) -> tuple[dict[str, Any], bool]:
        """The entry's state, and whether its points were left out (counted elsewhere, or unchanged)."""
        if id(item) in self._spent:
            return {"status": item.status, "deduction": 0}, True
        self._spent.add(id(item))
        return {"status": item.status, "deduction": item.deduction}, False


class _Earlier:
    """The reports before `before`, newest first, each parsed when a finding first needs it."""

    def __init__(self, bodies: Iterable[Mapping[str, Any]]) -> None:
        self._bodies: Iterator[Mapping[str, Any]] = iter(bodies)
        self._read: list[_Side] = []

    def checked(self, finding: Finding, families: frozenset[str] | None) -> _Side | None:
        """The newest earlier report whose check of `finding` ran; None when none of them did."""
        for side in self._read:
            if not side.could_miss(finding, families):
                return side
        for body in self._bodies:
            side = _side(body)
            self._read.append(side)
            if not side.could_miss(finding, families):
                return side
        return None


def _list_cut(items: Mapping[str | None, ReportItem]) -> bool:
    """Whether a side's `subjects` of the finding leave some out (`subjects_not_listed`: grading lists 50), so
    a subject missing from them may be one it counted and did not list."""
    return any(int(item.item.get("subjects_not_listed") or 0) > 0 for item in items.values())


def _changes(
    finding: Finding, before_side: _Side, after_side: _Side, earlier: _Earlier
) -> tuple[list[FindingChange], list[FindingChange], list[FindingChange]]:
    """(new, fixed, changed) of one finding, subject by subject, its points counted once; a subject missing
    from a side that could not check it is neither new nor fixed, unless an earlier report checked it, nor is
    one missing from a side whose list was cut (`_list_cut`): the site's 60 cookies sent in another order
    must not make 10 of them new and 10 fixed."""
    section, name = finding
    old, new = before_side.issues.get(finding, {}), after_side.issues.get(finding, {})
    # the finding's families as a report holding it names them (the same on both sides, but for a report
    # stored before `families`)
    families = next((f for f in map(_families, [*new.values(), *old.values()]) if f is not None), None)
    baseline, seen = old, not before_side.could_miss(finding, families)
    if not seen and any(subject not in old for subject in new):
        reference = earlier.checked(finding, families)
        if reference is not None:  # what `before` could not see, as the last report that could saw it
            baseline, seen = {**reference.issues.get(finding, {}), **old}, True
    before, after = _Points(baseline, new), _Points(new, baseline)
    baseline_cut, after_cut = _list_cut(baseline), _list_cut(new)
    # the finding as the baseline graded it, for a subject its cut list may hold unlisted (every subject of a
    # finding shares its status and deduction)
    graded_before = next(iter(baseline.values()), None) if baseline_cut else None
    moved: list[FindingChange] = []
    for subject, item in new.items():
        was = baseline.get(subject, graded_before)
        if was is None or _key(was) == _key(item):
            continue
        (b, b_shared), (a, a_shared) = before.state(was), after.state(item)
        moved.append(FindingChange(section, name, item.severity, b, a, subject, b_shared and a_shared))
    appeared: list[FindingChange] = []
    for subject, item in new.items():
        if subject not in baseline and seen and not baseline_cut:
            state, shared = after.state(item)
            appeared.append(FindingChange(section, name, item.severity, None, state, subject, shared))
    gone: list[FindingChange] = []
    for subject, item in old.items():
        if subject not in new and not after_cut and not after_side.could_miss(finding, families):
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


def diff_reports(
    before: Mapping[str, Any], after: Mapping[str, Any], earlier: Iterable[Mapping[str, Any]] = ()
) -> ReportDiff:
    """`after` compared with `before` (the older scan); `earlier`: the site's reports before `before`, newest
    first, read lazily and only for what `before` could not check (the module's docstring)."""
    old, new, reports_before = _side(before), _side(after), _Earlier(earlier)
    _cookie_names_as_now(old, new)
    appeared: list[FindingChange] = []
    gone: list[FindingChange] = []
    moved: list[FindingChange] = []
    for finding in [*new.issues, *(f for f in old.issues if f not in new.issues)]:
        added, removed, changed = _changes(finding, old, new, reports_before)
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
        before_checked_less=bool(old.unchecked_sections or old.unchecked_headers or old.partly_checked),
        rules_before=_rules(before),
        rules_after=_rules(after),
    )


def _rules(body: Mapping[str, Any]) -> str:
    grading = body.get("grading")
    version = grading.get("algorithm_version") if isinstance(grading, Mapping) else None
    return version if isinstance(version, str) else ""


#: How many of a new finding's notes the alert email and the site page quote (`found_of`), each at most so long.
QUOTED_NOTES = 3
QUOTED_NOTE_CHARS = 300


@dataclass(frozen=True)
class Found:
    """What a report says it found of one changed finding: its first notes, each cut, and how many more it has."""

    notes: tuple[str, ...] = ()
    more: int = 0


def found_of(
    report: Mapping[str, Any] | None,
    changes: Iterable[FindingChange],
    first: int = QUOTED_NOTES,
    chars: int = QUOTED_NOTE_CHARS,
) -> list[Found]:
    """For each of `changes` (findings new in `report`), in order, its first `first` notes in `report`, each at most
    `chars` characters. A finding on several subjects (cookies) is one change per subject, and its notes are not told
    apart by subject: such a change gets none; without the report, none does."""
    items = {(item.section, item.name): item.item for item in report_items(report or {})}
    found: list[Found] = []
    for change in changes:
        item = items.get((change.section, change.name))
        if item is None or (change.subject is not None and item.get("subjects") != [change.subject]):
            found.append(Found())
            continue
        notes = notes_of(item)
        cut = tuple(note if len(note) <= chars else note[: chars - 1] + "…" for note in notes[:first])
        found.append(Found(cut, max(len(notes) - first, 0)))
    return found
