"""Turn check results into report sections, a score and a grade, using only the rule table.

The model (docs/scoring.md says it in prose):
- every outcome ID carries its status, severity and deduction in the table;
- the same outcome seen on several subjects (five cookies without Secure) deducts once;
- a header's deductions add up to at most what its absence would cost;
- score = 100 - all deductions, floored at 0;
- outcomes with `max_grade` cap the score at the top of that grade's band, so the
  score and the grade always agree.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .checks._shown import shown, stored_length
from .findings import LIST_BUDGET, LIST_LIMIT, SEVERITIES, STATUSES, CheckResult, CountedNote, Finding
from .fixes.snippets import names_subjects, render_snippets
from .report import NOT_CHECKED, count_issues
from .rules import Rule, RuleBook

#: Sections shaped like spec 2.3 header objects, keyed by header name.
HEADER_SHAPED = ("headers", "cross_origin")
#: Header-shaped sections whose JSON is only the header map (no status/deduction/findings).
BARE_HEADER_MAPS = ("headers",)
#: The most subjects a finding's fix snippets edit, listed or not, and the most characters their names add up to:
#: more than the 180 cookies Chromium keeps for a site (records/cookie_jar.DOMAIN_MAX_COOKIES: what the cookie
#: check grades per site), so a site's 60 cookies without Secure get a fix for all 60. A snippet writes each
#: name up to six times a server, so both bound the snippets (180 names of 125 characters would make 1.4 MB);
#: the fix_note says when they leave subjects out. Names count as stored (checks/_shown.stored_length).
SNIPPET_LIMIT = 200
SNIPPET_NAME_BUDGET = 8_192


@dataclass(frozen=True)
class Graded:
    score: int
    grade: str
    uncapped_score: int
    caps: tuple[dict[str, str], ...]  # [{"outcome": ..., "max_grade": ...}]
    sections: dict[str, dict[str, Any]]
    issue_counts: dict[str, int]


class _LeaveUnknown(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render_template(template: str | None, values: Mapping[str, str]) -> str | None:
    """Fill `{host}`-style placeholders; unknown placeholders are left as written."""
    if template is None:
        return None
    return string.Formatter().vformat(template, (), _LeaveUnknown(values))


def _rank(status: str) -> int:
    return STATUSES.index(status)


def _worst(statuses: Sequence[str]) -> str:
    return max(statuses, key=_rank) if statuses else "good"


@dataclass
class _Listing:
    """The first items of one list of a finding (its subjects, its notes on them, its notes on it as a whole):
    at most LIST_LIMIT, together at most LIST_BUDGET characters as stored, the first always; once one does not
    fit, every later one is counted instead. Each is `shown` at most LIST_BUDGET characters: checks cut what
    they quote to 2,048 (checks/_shown.py), so this only catches a string a check left whole."""

    items: list[str] = field(default_factory=list)
    chars: int = 0
    full: bool = False
    more: int = 0  # distinct items past the list: counted, not listed

    def add(self, value: str) -> str | None:
        """Its item when `value` is listed (cut), else None (counted)."""
        if not self.full:
            item = shown(value, LIST_BUDGET)
            size = stored_length(item)
            if not self.items or (len(self.items) < LIST_LIMIT and self.chars + size <= LIST_BUDGET):
                self.items.append(item)
                self.chars += size
                return item
            self.full = True
        # a check's own "and N more" note counts the N it stands for
        self.more += value.stands_for if isinstance(value, CountedNote) else 1
        return None


@dataclass
class _Aggregate:
    rule: Rule
    subjects: list[str]  # its distinct subjects, the first SNIPPET_LIMIT, whole: what its snippets edit
    notes: list[str]  # the notes listed, in the order they came
    fix_vars: dict[str, str]
    fix_notes: list[str]
    families: list[str]
    family_unnamed: bool = False  # one of its findings named no family
    subject_count: int = 0  # its distinct subjects, all of them
    snippet_count: int = 0  # the first of `subjects` its snippets edit: as many as SNIPPET_NAME_BUDGET holds
    snippet_chars: int = 0  # the length of their names, as stored
    #: What the report lists: its first subjects, its first notes on them and on it as a whole (`_Listing`)
    listing: _Listing = field(default_factory=_Listing)
    subject_notes: _Listing = field(default_factory=_Listing)
    whole_notes: _Listing = field(default_factory=_Listing)

    @property
    def listed_subjects(self) -> list[str]:
        return self.listing.items

    @property
    def more_notes(self) -> int:
        """Distinct notes past their lists: counted, not listed."""
        return self.subject_notes.more + self.whole_notes.more

    @property
    def snippet_subjects(self) -> list[str]:
        return self.subjects[: self.snippet_count]

    def add_subject(self, subject: str) -> None:
        """Count a distinct subject, and keep it for the list and the snippets while they have room."""
        self.subject_count += 1
        self.listing.add(subject)
        if len(self.subjects) < SNIPPET_LIMIT:
            size = stored_length(subject)  # as stored: a name of 0xFF bytes is six times its length in the report
            if self.snippet_count == len(self.subjects) and self.snippet_chars + size <= SNIPPET_NAME_BUDGET:
                self.snippet_count += 1
                self.snippet_chars += size
            self.subjects.append(subject)

    @property
    def more_subjects(self) -> int:
        """Distinct subjects past its list: counted, not listed."""
        return self.subject_count - len(self.listed_subjects)

    def add_note(self, note: str, *, on_subject: bool) -> None:
        """Notes on one subject each, and notes on the finding as a whole (a check's own count of what it left
        out), are listed apart, each a `_Listing`: a flood of the one never hides the other."""
        listed = (self.subject_notes if on_subject else self.whole_notes).add(note)
        if listed is not None:
            self.notes.append(listed)

    def notes_json(self) -> list[str]:
        """Its notes, then how many subjects and notes are not listed, so a reader knows the lists are not whole."""
        notes = list(self.notes)
        if self.more_subjects:
            notes.append(f"and {self.more_subjects:,} more subjects like these, not listed")
        if self.more_notes:
            notes.append(f"and {self.more_notes:,} more notes like these, not listed")
        return notes

    def fix_note(self, fix: str | None, plain_http: bool = False) -> str | None:
        """The report's `fix_note`: how to apply the fix, only beside a fix (null exactly where no fix is), and
        which subjects its snippets leave out when they edit the subjects they name."""
        notes = list(self.fix_notes)
        left_out = self.subject_count - self.snippet_count
        if left_out > 0 and names_subjects(self.rule.outcome, plain_http=plain_http):
            notes.append(
                f"The snippets edit the first {self.snippet_count:,} of the {self.subject_count:,} this is about "
                f"(those they name): make the same change for the other {left_out:,}."
            )
        return (" ".join(notes) or None) if fix else None

    def families_json(self) -> list[str] | None:
        """The report's `families`: those its findings named (Finding.families), or null when one named none (so
        that a reader never takes a failure for narrower than it was)."""
        return None if self.family_unnamed or not self.families else list(self.families)


def _first(seen: set[tuple[str, str, str]], key: tuple[str, str, str]) -> bool:
    """True the first time `key` is seen (and remembers it)."""
    if key in seen:
        return False
    seen.add(key)
    return True


def _aggregate(findings: Sequence[Finding], book: RuleBook) -> list[_Aggregate]:
    """Merge findings with the same outcome: one deduction, its distinct subjects and notes listed up to
    LIST_LIMIT and LIST_BUDGET characters each (`_Listing`) and the rest counted."""
    merged: dict[str, _Aggregate] = {}
    # (outcome, field, value) already listed: a set, where `in` on the lists read every earlier value again (a
    # redirect chain's Set-Cookie flood gave one finding 47,300 cookies: 122 s of CPU)
    listed: set[tuple[str, str, str]] = set()
    for finding in findings:
        rule = book.rule(finding.outcome)
        agg = merged.get(finding.outcome)
        if agg is None:
            agg = merged[finding.outcome] = _Aggregate(rule, [], [], {}, [], [])
        if finding.subject and _first(listed, (finding.outcome, "subject", finding.subject)):
            agg.add_subject(finding.subject)
        for note in finding.notes:
            if note and _first(listed, (finding.outcome, "note", note)):
                agg.add_note(note, on_subject=bool(finding.subject))
        for key, value in finding.fix_vars.items():
            agg.fix_vars.setdefault(key, value)
        if finding.fix_note and _first(listed, (finding.outcome, "fix_note", finding.fix_note)):
            agg.fix_notes.append(finding.fix_note)
        if not finding.families:
            agg.family_unnamed = True
        for family in finding.families:
            if family not in agg.families:
                agg.families.append(family)
    return list(merged.values())


def _finding_json(agg: _Aggregate, context: Mapping[str, str], lacking_samesite: Sequence[str] = ()) -> dict[str, Any]:
    rule = agg.rule
    fix = render_template(rule.fix, {**context, **agg.fix_vars})
    # a plain-HTTP final page: no cookie snippet adds Secure, which browsers refuse there (fixes/remedies.toml)
    plain_http = context.get("final_url", "").startswith("http://")
    notes = agg.notes_json()
    return {
        "check": rule.outcome,
        "status": rule.status,
        "severity": rule.severity,
        "deduction": rule.deduction,
        "explanation": rule.explanation,
        "fix": fix,
        # the same fix, written for each server (issue 15); null exactly where `fix` is
        "fix_snippets": render_snippets(
            rule.outcome, fix, subjects=agg.snippet_subjects, lacking_samesite=lacking_samesite, plain_http=plain_http
        ),
        "fix_note": agg.fix_note(fix, plain_http),
        "cwe": rule.cwe,
        "subjects": agg.listed_subjects,
        # how many more distinct subjects it has than `subjects` lists: a subject missing from a list that was
        # cut may be one of them, so the diff and SARIF's fingerprint must not read the list as whole
        "subjects_not_listed": agg.more_subjects,
        "note": "; ".join(notes) or None,
        # the same notes one by one (an addition to the spec): a note may hold a "; " of its own, so the joined
        # `note` cannot be split back, and renderers show one note a line
        "notes": notes,
        "families": agg.families_json(),
    }


def _order(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Worst first: by status, then severity, then deduction."""
    return sorted(
        findings,
        key=lambda f: (-_rank(f["status"]), -SEVERITIES.index(f["severity"]), -f["deduction"]),
    )


def _header_object(
    name: str, aggs: list[_Aggregate], details: Mapping[str, Any], book: RuleBook, context: Mapping[str, str]
) -> dict[str, Any]:
    """Spec 2.3: present, value, status, severity, deduction, explanation, fix, note; and beside the fix its
    `fix_snippets` and `fix_note`, beside the note its `notes` (additions to the spec)."""
    info = details.get(name, {}) if isinstance(details.get(name), Mapping) else {}
    if not aggs:  # the check could not run (check.error or check.crashed): say so, never "good"
        return {
            "present": bool(info.get("present", False)),
            "value": info.get("value"),
            "status": "warn",
            "severity": "minor",
            "deduction": 0,
            "explanation": book.rule("check.error").explanation,
            "fix": None,
            "fix_snippets": None,
            "fix_note": None,
            "note": NOT_CHECKED,
            "notes": [NOT_CHECKED],
        }
    problems = [a for a in aggs if a.rule.status != "good"]
    chosen = max(problems, key=lambda a: (_rank(a.rule.status), a.rule.deduction)) if problems else aggs[0]
    cap = max((r.deduction for r in book.rules.values() if r.subject == name), default=0)
    deduction = min(sum(a.rule.deduction for a in problems), cap)
    notes = [n for a in problems for n in a.notes_json()] or [n for a in aggs for n in a.notes_json()]
    fix = fix_outcome = fix_note = None
    for agg in problems:
        fix = render_template(agg.rule.fix, {**context, **agg.fix_vars})
        if fix:
            fix_outcome, fix_note = agg.rule.outcome, agg.fix_note(fix)
            break
    return {
        "present": bool(info.get("present", False)),
        "value": info.get("value"),
        "status": chosen.rule.status,
        "severity": chosen.rule.severity,
        "deduction": deduction,
        "explanation": chosen.rule.explanation,
        "fix": fix,
        "fix_snippets": render_snippets(fix_outcome, fix, subject=name) if fix_outcome else None,
        "fix_note": fix_note,
        "note": "; ".join(notes) or None,
        "notes": notes,
    }


def _section_json(
    result: CheckResult, book: RuleBook, context: Mapping[str, str]
) -> tuple[dict[str, Any], int, list[_Aggregate]]:
    aggs = _aggregate(result.findings, book)
    if result.section in HEADER_SHAPED:
        body: dict[str, Any] = {}
        total = 0
        subjects = book.header_subjects(result.section)
        for name in subjects:
            header = _header_object(name, [a for a in aggs if a.rule.subject == name], result.details, book, context)
            body[name] = header
            total += header["deduction"]
        loose = [a for a in aggs if a.rule.subject not in subjects]  # e.g. check.error
        total += sum(a.rule.deduction for a in loose if a.rule.status != "good")
        if result.section in BARE_HEADER_MAPS:
            return body, total, aggs
        findings = _order([_finding_json(a, context) for a in aggs])
        statuses = [h["status"] for h in body.values()] + [a.rule.status for a in loose]
        extra = {k: v for k, v in result.details.items() if k not in subjects}
        return {"status": _worst(statuses), "deduction": total, "findings": findings, **body, **extra}, total, aggs
    # the cookies a *no_samesite finding names: every cookie fix for them adds SameSite (fixes/actions.py)
    lacking = [name for a in aggs if a.rule.outcome.endswith("no_samesite") for name in a.snippet_subjects]
    findings = _order([_finding_json(a, context, lacking) for a in aggs])
    total = sum(f["deduction"] for f in findings if f["status"] != "good")
    section = {
        "status": _worst([f["status"] for f in findings]),
        "deduction": total,
        "findings": findings,
        **{k: v for k, v in result.details.items() if k not in ("status", "deduction", "findings")},
    }
    return section, total, aggs


def grade(results: Sequence[CheckResult], book: RuleBook, context: Mapping[str, str]) -> Graded:
    sections: dict[str, dict[str, Any]] = {}
    total_deduction = 0
    all_aggs: list[_Aggregate] = []
    for result in results:
        for finding in result.findings:
            rule = book.rule(finding.outcome)
            if rule.section not in (result.section, "*"):
                raise ValueError(f"outcome {rule.outcome!r} belongs to {rule.section!r}, not {result.section!r}")
        section, deduction, aggs = _section_json(result, book, {**context, **result.fix_context})
        sections[result.section] = section
        total_deduction += deduction
        all_aggs.extend(aggs)
    uncapped = max(0, 100 - total_deduction)
    score = uncapped
    caps: list[dict[str, str]] = []
    for agg in all_aggs:
        cap_grade = agg.rule.max_grade
        if cap_grade and agg.rule.status != "good":
            caps.append({"outcome": agg.rule.outcome, "max_grade": cap_grade})
            score = min(score, book.band(cap_grade).max_score)
    # Counted the way every report body counts them (report.count_issues), so the numbers cannot drift.
    return Graded(score, book.grade_for(score), uncapped, tuple(caps), sections, count_issues(sections))
