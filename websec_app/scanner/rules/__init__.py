"""The rule table: every outcome's status, severity, deduction, explanation, fix, CWE and cap.

The table is data (`*.toml` beside this file, one file per report area) so that one
place says what each outcome is worth, docs/scoring.md can be generated from it, and
the compliance mapping reads each outcome's CWE from it.

`grading.toml` holds the version and grade bands; `sections.toml` is the section table
(websec_app/scanner/sections.py), and every rule row must name one of its sections (or "*").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..findings import GRADES, SEVERITIES, STATUSES
from ..rule_files import RULES_DIR, RuleFileError, parse_rule_files, rule_tables
from ..sections import SectionTableError, load_sections

_RULES_DIR = RULES_DIR
#: The files beside the rule rows that are not rule rows.
_NOT_RULES = ("grading.toml", "sections.toml")


class RuleTableError(ValueError):
    """The rule table is inconsistent (caught by tests and at import)."""


@dataclass(frozen=True)
class Rule:
    outcome: str
    section: str
    status: str
    severity: str
    deduction: int
    explanation: str
    fix: str | None = None
    cwe: str | None = None
    max_grade: str | None = None  # the best grade a site can get while this outcome stands
    subject: str | None = None  # header-shaped sections: the header this outcome belongs to


@dataclass(frozen=True)
class GradeBand:
    grade: str
    min_score: int
    max_score: int


@dataclass(frozen=True)
class RuleBook:
    version: str
    bands: tuple[GradeBand, ...]
    rules: dict[str, Rule]

    def rule(self, outcome: str) -> Rule:
        try:
            return self.rules[outcome]
        except KeyError:
            raise RuleTableError(f"outcome {outcome!r} has no row in the rule table") from None

    def grade_for(self, score: int) -> str:
        for band in self.bands:
            if band.min_score <= score <= band.max_score:
                return band.grade
        raise RuleTableError(f"no grade band covers score {score}")

    def band(self, grade: str) -> GradeBand:
        for band in self.bands:
            if band.grade == grade:
                return band
        raise RuleTableError(f"unknown grade {grade!r}")

    def header_subjects(self, section: str) -> list[str]:
        """Header names a header-shaped section reports on, in table order."""
        seen: dict[str, None] = {}
        for rule in self.rules.values():
            if rule.section == section and rule.subject:
                seen.setdefault(rule.subject, None)
        return list(seen)


def _validate(rule: Rule) -> None:
    where = f"outcome {rule.outcome!r}"
    if rule.status not in STATUSES:
        raise RuleTableError(f"{where}: status {rule.status!r} is not one of {STATUSES}")
    if rule.severity not in SEVERITIES:
        raise RuleTableError(f"{where}: severity {rule.severity!r} is not one of {SEVERITIES}")
    if rule.deduction < 0 or (rule.status == "good" and rule.deduction != 0):
        raise RuleTableError(f"{where}: good outcomes deduct 0, others a non-negative number")
    if rule.max_grade is not None and rule.max_grade not in GRADES:
        raise RuleTableError(f"{where}: max_grade {rule.max_grade!r} is not a grade")
    if rule.status == "good" and rule.max_grade is not None:
        raise RuleTableError(f"{where}: a good outcome cannot cap the grade")
    if not rule.explanation.strip():
        raise RuleTableError(f"{where}: explanation is empty")
    if rule.cwe is not None and not rule.cwe.startswith("CWE-"):
        raise RuleTableError(f"{where}: cwe must look like CWE-123")


def _tables(directory: Path) -> dict[str, dict[str, Any]]:
    """The directory's TOML files, parsed; the package's own from the parse cache (rule_files.py)."""
    try:
        if directory == _RULES_DIR:
            return rule_tables()
        return parse_rule_files(sorted(directory.glob("*.toml")))
    except RuleFileError as exc:
        raise RuleTableError(str(exc)) from exc


def load_rulebook(directory: Path = _RULES_DIR) -> RuleBook:
    tables = _tables(directory)
    meta = tables["grading.toml"]
    bands = tuple(GradeBand(b["grade"], b["min"], b["max"]) for b in meta["bands"])
    rules: dict[str, Rule] = {}
    for name, data in sorted(tables.items()):
        if name in _NOT_RULES:
            continue
        section_default = data.get("section")
        for outcome, row in data.get("outcomes", {}).items():
            if outcome in rules:
                raise RuleTableError(f"outcome {outcome!r} is defined twice ({name})")
            known = {"section", "status", "severity", "deduction", "explanation", "fix", "cwe", "max_grade", "subject"}
            unknown = set(row) - known
            if unknown:
                raise RuleTableError(f"outcome {outcome!r} in {name} has unknown fields {sorted(unknown)}")
            rule = Rule(
                outcome=outcome,
                section=row.get("section", section_default),
                status=row["status"],
                severity=row["severity"],
                deduction=int(row.get("deduction", 0)),
                explanation=" ".join(row["explanation"].split()),
                fix=row.get("fix"),
                cwe=row.get("cwe"),
                max_grade=row.get("max_grade"),
                subject=row.get("subject"),
            )
            if not rule.section:
                raise RuleTableError(f"outcome {outcome!r} in {name} has no section")
            _validate(rule)
            rules[outcome] = rule
    _check_sections(directory, rules)
    return RuleBook(version=meta["version"], bands=bands, rules=rules)


def _check_sections(directory: Path, rules: dict[str, Rule]) -> None:
    """Every rule row names a section of sections.toml (or "*"), and every section has rule rows.

    A directory without sections.toml (a test's small table) is not checked.
    """
    table = directory / "sections.toml"
    if not table.exists():
        return
    try:
        keys = {s.key for s in load_sections(table)}
    except SectionTableError as exc:
        raise RuleTableError(str(exc)) from exc
    used = {rule.section for rule in rules.values()}
    stray = sorted(f"{r.outcome} ({r.section})" for r in rules.values() if r.section not in keys | {"*"})
    if stray:
        raise RuleTableError(f"rule rows name sections that sections.toml does not list: {stray}")
    empty = sorted(keys - used)
    if empty:
        raise RuleTableError(f"sections.toml lists sections no rule row belongs to: {empty}")


@lru_cache(maxsize=1)
def default_rulebook() -> RuleBook:
    return load_rulebook()
