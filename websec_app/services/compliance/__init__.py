"""Compliance mapping: scanner outcomes -> OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32, ISO 27001:2022.

`mapping.toml` (versioned data, STYLE.md 5) says which requirements each outcome of the rule table
is evidence about (a control may name none of a framework that does not ask for it; the review is
docs/compliance-mapping.md); the outcome's CWE is read from its rule row (rules/*.toml `cwe`), never restated
here. `assess(report)` applies the mapping to a Pro scan report (the spec 2.2 dict) and gives the
verdict per requirement that the compliance PDF prints:

- fail: a finding mapped to it is bad, missing or weak;
- partial: only warnings (a weakening directive, a minor gap);
- pass: every finding mapped to it is good;
- not tested: nothing in this scan is evidence about it (an external scan sees only so much).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from websec_app.scanner.findings import SEVERITIES, STATUSES
from websec_app.scanner.report import fixes_by_impact, header_outcome, notes_of, report_items
from websec_app.scanner.rules import RuleBook, default_rulebook

_MAPPING = Path(__file__).with_name("mapping.toml")

#: Framework keys in report order.
FRAMEWORKS = ("owasp", "pci_dss", "gdpr", "iso27001")

PASS = "pass"
FAIL = "fail"
PARTIAL = "partial"
NOT_TESTED = "not tested"
_FAILING = ("bad", "missing", "weak")


class MappingError(ValueError):
    """mapping.toml is inconsistent."""


@dataclass(frozen=True)
class Framework:
    key: str
    name: str
    requirements: dict[str, str]  # id -> title, in file order


@dataclass(frozen=True)
class Control:
    id: str
    title: str
    requirements: dict[str, tuple[str, ...]]  # framework key -> requirement ids
    outcomes: tuple[str, ...]  # rule-table outcome ids; each one's CWE is on its rule row


@dataclass(frozen=True)
class ComplianceMapping:
    version: str
    frameworks: dict[str, Framework]
    cwe_names: dict[str, str]
    controls: tuple[Control, ...]
    not_assessed: dict[str, str]

    def control_of(self, outcome: str) -> Control | None:
        for control in self.controls:
            if outcome in control.outcomes:
                return control
        return None

    def outcomes(self) -> tuple[str, ...]:
        """Every mapped outcome, in file order."""
        return tuple(outcome for control in self.controls for outcome in control.outcomes)


def load_mapping(path: Path = _MAPPING, book: RuleBook | None = None) -> ComplianceMapping:
    """Read mapping.toml and check it against the rule table (`book`, by default the scanner's)."""
    book = book or default_rulebook()
    data = tomllib.loads(path.read_text("utf-8"))
    frameworks = {
        key: Framework(key, str(data["frameworks"][key]["name"]), dict(data["frameworks"][key]["requirements"]))
        for key in FRAMEWORKS
    }
    cwe_names = dict(data.get("cwe", {}))
    controls: list[Control] = []
    seen: set[str] = set()
    for row in data.get("controls", []):
        requirements = {key: tuple(row.get(key, ())) for key in FRAMEWORKS}
        if not any(requirements.values()):
            raise MappingError(f"control {row['id']!r} names no requirement of any framework")
        for key, ids in requirements.items():
            unknown = [i for i in ids if i not in frameworks[key].requirements]
            if unknown:
                raise MappingError(f"control {row['id']!r}: {unknown} are not in the {frameworks[key].name} catalogue")
        outcomes = row.get("outcomes", [])
        if not isinstance(outcomes, list) or not all(isinstance(o, str) for o in outcomes):
            raise MappingError(f"control {row['id']!r}: outcomes must be a list of outcome ids")
        for outcome in outcomes:
            if outcome in seen:
                raise MappingError(f"outcome {outcome!r} is mapped twice")
            rule = book.rules.get(outcome)
            if rule is None:
                raise MappingError(f"outcome {outcome!r} has no row in the rule table")
            if rule.cwe is None:
                raise MappingError(f"outcome {outcome!r}: its rule row has no cwe")
            if rule.cwe not in cwe_names:
                raise MappingError(f"outcome {outcome!r}: {rule.cwe} (its rule row's cwe) has no name in [cwe]")
            seen.add(outcome)
        controls.append(Control(str(row["id"]), str(row["title"]), requirements, tuple(outcomes)))
    not_assessed = dict(data["not_assessed"])
    for outcome in not_assessed:
        if outcome in seen:
            raise MappingError(f"outcome {outcome!r} is both mapped and not assessed")
        if outcome not in book.rules:
            raise MappingError(f"not-assessed outcome {outcome!r} has no row in the rule table")
    return ComplianceMapping(str(data["version"]), frameworks, cwe_names, tuple(controls), not_assessed)


@lru_cache(maxsize=1)
def default_mapping() -> ComplianceMapping:
    return load_mapping()


# --- applying it to a report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObservedFinding:
    outcome: str
    section: str
    index: int  # its place in the section (report.ReportItem.index)
    subject: str | None  # header name for header-shaped sections
    status: str
    severity: str
    deduction: int
    explanation: str
    fix: str | None
    notes: tuple[str, ...]  # what the scan found on the site, one note each (report.notes_of)
    cwe: str | None
    cwe_name: str | None
    control: Control | None
    fix_note: str | None = None  # how to apply the fix (the CSP proposal's rollout advice)

    @property
    def failing(self) -> bool:
        return self.status != "good"

    def references(self) -> list[str]:
        """ "OWASP A02:2021", "PCI DSS 4.2.1", ...: where this finding counts."""
        if self.control is None:
            return []
        labels = {"owasp": "OWASP", "pci_dss": "PCI DSS", "gdpr": "GDPR Art.", "iso27001": "ISO 27001"}
        return [f"{labels[key]} {rid}" for key in FRAMEWORKS for rid in self.control.requirements[key]]


@dataclass(frozen=True)
class RequirementResult:
    requirement: str
    title: str
    verdict: str
    findings: tuple[ObservedFinding, ...]  # the evidence, worst first

    @property
    def problems(self) -> tuple[ObservedFinding, ...]:
        return tuple(f for f in self.findings if f.failing)


@dataclass(frozen=True)
class FrameworkResult:
    framework: Framework
    requirements: tuple[RequirementResult, ...]

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.requirements if r.verdict == verdict)


@dataclass(frozen=True)
class Assessment:
    mapping_version: str
    url: str
    final_url: str
    grade: str
    score: int
    scanned_at: str
    algorithm_version: str
    findings: tuple[ObservedFinding, ...]
    frameworks: tuple[FrameworkResult, ...]
    not_assessed: tuple[str, ...]  # sections a check could not run for
    plan: tuple[ObservedFinding, ...] = ()  # the problems in `fixes_by_impact` order

    def remediation(self) -> list[ObservedFinding]:
        """The problems, those that cost the most points first (scanner.report.fixes_by_impact)."""
        return list(self.plan)


def _observe(report: Mapping[str, Any], mapping: ComplianceMapping, book: RuleBook) -> list[ObservedFinding]:
    observed: list[ObservedFinding] = []

    def add(outcome: str, section: str, index: int, item: Mapping[str, Any], subject: str | None) -> None:
        control = mapping.control_of(outcome)
        rule = book.rules.get(outcome)
        cwe = rule.cwe if rule else None
        observed.append(
            ObservedFinding(
                outcome=outcome,
                section=section,
                index=index,
                subject=subject,
                status=str(item.get("status", "good")),
                severity=str(item.get("severity", "minor")),
                deduction=int(item.get("deduction") or 0),
                explanation=str(item.get("explanation") or ""),
                fix=item.get("fix"),
                notes=tuple(notes_of(item)),
                cwe=cwe,
                cwe_name=mapping.cwe_names.get(cwe) if cwe else None,
                control=control,
                fix_note=item.get("fix_note"),
            )
        )

    for entry in report_items(report):
        if entry.header:  # a header object (spec 2.3): its name is the subject
            outcome = header_outcome(entry.name, entry.item, book)
            if outcome is not None:
                add(outcome, entry.section, entry.index, entry.item, entry.name)
        elif entry.name:
            subjects = entry.item.get("subjects") or []
            add(entry.name, entry.section, entry.index, entry.item, ", ".join(map(str, subjects)) or None)
    return observed


def _verdict(findings: list[ObservedFinding]) -> str:
    if not findings:
        return NOT_TESTED
    if any(f.status in _FAILING for f in findings):
        return FAIL
    if any(f.status == "warn" for f in findings):
        return PARTIAL
    return PASS


def assess(
    report: Mapping[str, Any], mapping: ComplianceMapping | None = None, book: RuleBook | None = None
) -> Assessment:
    """The verdict per framework requirement for one Pro scan report (spec 2.2 dict, fixes included)."""
    mapping = mapping or default_mapping()
    book = book or default_rulebook()
    observed = _observe(report, mapping, book)
    assessed = [f for f in observed if f.control is not None]
    frameworks = []
    for key in FRAMEWORKS:
        framework = mapping.frameworks[key]
        results = []
        for requirement, title in framework.requirements.items():
            evidence = [f for f in assessed if requirement in f.control.requirements[key]]  # type: ignore[union-attr]
            evidence.sort(key=lambda f: (-STATUSES.index(f.status), -SEVERITIES.index(f.severity), f.outcome))
            results.append(RequirementResult(requirement, title, _verdict(evidence), tuple(evidence)))
        frameworks.append(FrameworkResult(framework, tuple(results)))
    grading = report.get("grading") if isinstance(report.get("grading"), Mapping) else {}
    findings = tuple(f for f in observed if f.outcome not in mapping.not_assessed)
    by_place = {(f.section, f.index): f for f in findings if f.failing}
    plan = tuple(by_place[p] for fix in fixes_by_impact(report) if (p := (fix.section, fix.index)) in by_place)
    return Assessment(
        mapping_version=mapping.version,
        url=str(report.get("url", "")),
        final_url=str(report.get("final_url") or report.get("url", "")),
        grade=str(report.get("grade", "")),
        score=int(report.get("score") or 0),
        scanned_at=str(report.get("scanned_at") or ""),
        algorithm_version=str((grading or {}).get("algorithm_version", "")),
        findings=findings,
        frameworks=tuple(frameworks),
        not_assessed=tuple(sorted({f.section for f in observed if f.outcome in mapping.not_assessed})),
        plan=plan,
    )


__all__ = [
    "FAIL",
    "FRAMEWORKS",
    "NOT_TESTED",
    "PARTIAL",
    "PASS",
    "Assessment",
    "ComplianceMapping",
    "Control",
    "Framework",
    "FrameworkResult",
    "MappingError",
    "ObservedFinding",
    "RequirementResult",
    "assess",
    "default_mapping",
    "load_mapping",
]
