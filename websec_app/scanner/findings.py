"""What a check returns: stable outcome IDs plus the natural data of its section.

Checks never decide status, severity or points: they name an outcome, and the rule
table (`rules/*.toml`) says what that outcome is worth. See docs/scoring.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .snapshot import SiteSnapshot

#: Status values, best first (spec 2.3). The order is used to find a section's worst status.
STATUSES = ("good", "warn", "weak", "missing", "bad")
#: Severity values, least first (spec 2.3).
SEVERITIES = ("minor", "important", "critical")
#: Grades, best first (spec 2.2).
GRADES = ("A+", "A", "B", "C", "D", "F")
#: The most items of one kind a report lists (a finding's subjects and notes, a page's URLs, cookies, server
#: products); past it a count says how many more: a hostile site's thousands made reports of megabytes.
LIST_LIMIT = 50
#: The most characters the items of one such list take together, counted as the report stores them (JSON:
#: checks/_shown.stored_length); past it the rest are counted too. 50 URLs cut at 2,048 characters are 100 KB,
#: and a page's URLs sit in a dozen lists (a finding's subjects and notes, the details' lists): 300 distinct long
#: URLs made a 1.8 MB page section, twelve times that in emoji. 50 items of 80 characters fit.
LIST_BUDGET = 4_096


class CountedNote(str):
    """A note that stands for notes a check left out ("and 9,950 more notes like these, not listed"): grading,
    when it has no room to list it, counts the notes it `stands_for`, not one, so that the report's own "and N
    more" stays the whole count."""

    stands_for: int

    def __new__(cls, text: str, stands_for: int) -> CountedNote:
        note = super().__new__(cls, text)
        note.stands_for = stands_for
        return note

    def __getnewargs__(self) -> tuple[str, int]:  # type: ignore[override]  # copied and pickled whole
        return str(self), self.stands_for


@dataclass(frozen=True)
class Finding:
    """One observation: `outcome` is a key of the rule table."""

    outcome: str
    subject: str | None = None  # what it is about: a header, cookie or origin name
    note: str | None = None  # the specifics, shown to the user ("max-age=300 is under 6 months")
    fix_vars: Mapping[str, str] = field(default_factory=dict)  # values for the rule's fix template
    #: How to apply this site's fix (the CSP proposal's rollout advice): the report's `fix_note`, shown and
    #: stripped with the fix, since it speaks of a fix and snippets a free report does not show
    fix_note: str | None = None
    #: Where a section is checked by families apart (dns: lookups), every family whose lookup decides it, its own
    #: first ("dkim", "mx", "spf": DKIM is needed unless the MX or SPF record says the domain handles no mail);
    #: on a check.error, the family of the lookup that failed. The report's `families`, which diff.py reads: a
    #: failure hides the findings that name its family, and no others. Empty where the section has no families.
    families: tuple[str, ...] = ()
    #: Notes of their own after `note` (an origin echoed as well, the response that set a cookie): the report lists
    #: each apart (`notes`), one a line, where joined into `note` with "; " they read as one run-on list
    more_notes: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """`note`, then `more_notes`."""
        return (self.note, *self.more_notes) if self.note else self.more_notes


def noted(outcome: str, notes: Sequence[str], subject: str | None = None, **fields: Any) -> Finding:
    """A finding that says each of `notes` apart: the first its `note`, the others its `more_notes`."""
    return Finding(outcome, subject, notes[0] if notes else None, more_notes=tuple(notes[1:]), **fields)


@dataclass(frozen=True)
class CheckResult:
    """A check's findings for one report section, plus that section's natural fields."""

    section: str
    findings: tuple[Finding, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    #: The fix templates' variables ({host}, {domain}) of what this section read, where it is not the final page
    #: the report's own are about: the redirection and DNS checks judge the host scanned, which a site redirecting
    #: to www or to a new domain leaves behind.
    fix_context: Mapping[str, str] = field(default_factory=dict)


Check = Callable[[SiteSnapshot], CheckResult]
