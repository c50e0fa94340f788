"""The report's sections: order, title, short label, Pro-only flag and summary, from one table.

`rules/sections.toml` is the only place a section's title, order or Pro-only flag is written (STYLE.md,
"The shape of the house"): the report, the UI, the CLI, the PDFs, the OpenAPI schema and the docs read
`SECTIONS`. It is checked when it loads (every field known, every key once, nothing empty); the rule
table checks that each rule row names one of these sections (rules/__init__.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rule_files import RULES_DIR, RuleFileError, rule_tables

_TABLE = RULES_DIR / "sections.toml"
_FIELDS = {"key": str, "title": str, "label": str, "pro_only": bool, "summary": str}
_KEY = re.compile(r"[a-z][a-z_]*")


class SectionTableError(ValueError):
    """sections.toml is inconsistent (caught at import and by tests)."""


@dataclass(frozen=True)
class Section:
    key: str  # the JSON key of the section in a scan result (spec 2.1/2.2; never changes)
    title: str  # the heading a non-specialist reads
    label: str  # a short name for tight places ("Fix these first" lines)
    pro_only: bool  # hidden from a free result (spec 2.1)
    summary: str  # one sentence: what the section checks

    @property
    def description(self) -> str:
        """ "Title: summary", the one-line description of the schema and the docs."""
        return f"{self.title}: {self.summary}"


def _section(row: Any, where: str) -> Section:
    if not isinstance(row, dict):
        raise SectionTableError(f"{where}: expected a table")
    unknown = sorted(set(row) - set(_FIELDS))
    if unknown:
        raise SectionTableError(f"{where}: unknown fields {unknown}")
    for name, kind in _FIELDS.items():
        if name not in row:
            raise SectionTableError(f"{where}: {name} is missing")
        if not isinstance(row[name], kind):
            raise SectionTableError(f"{where}: {name} must be a {kind.__name__}")
        if kind is str and not row[name].strip():
            raise SectionTableError(f"{where}: {name} is empty")
    if not _KEY.fullmatch(row["key"]):
        raise SectionTableError(f"{where}: key {row['key']!r} is not a JSON key of lower-case words")
    if not row["summary"].rstrip().endswith("."):
        raise SectionTableError(f"{where}: summary must be one sentence ending in a full stop")
    key, title, label, summary = (" ".join(row[name].split()) for name in ("key", "title", "label", "summary"))
    return Section(key=key, title=title, label=label, pro_only=row["pro_only"], summary=summary)


def parse_sections(text: str) -> tuple[Section, ...]:
    """The sections of a sections.toml text, in file order; raises SectionTableError."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SectionTableError(f"sections.toml: {exc}") from exc
    return sections_from_table(data)


def sections_from_table(data: dict[str, Any]) -> tuple[Section, ...]:
    """The sections of a parsed sections.toml, in file order; raises SectionTableError."""
    extra = sorted(set(data) - {"sections"})
    if extra:
        raise SectionTableError(f"sections.toml: unknown top-level keys {extra}")
    rows = data.get("sections")
    if not isinstance(rows, list) or not rows:
        raise SectionTableError("sections.toml: no [[sections]]")
    sections = tuple(_section(row, f"sections.toml entry {n}") for n, row in enumerate(rows, start=1))
    for field in ("key", "title", "label"):
        values = [getattr(s, field) for s in sections]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise SectionTableError(f"sections.toml: {field} listed more than once: {twice}")
    return sections


def load_sections(path: Path = _TABLE) -> tuple[Section, ...]:
    if path.parent == RULES_DIR:  # the package's own table: parsed once, then from the cache
        try:
            return sections_from_table(rule_tables()[path.name])
        except RuleFileError as exc:
            raise SectionTableError(str(exc)) from exc
    return parse_sections(path.read_text("utf-8"))


#: Every section a report can contain, in report order (an immutable constant, like checks.CHECKS).
SECTIONS: tuple[Section, ...] = load_sections()
#: The section keys, in report order.
SECTION_ORDER: tuple[str, ...] = tuple(s.key for s in SECTIONS)
#: The sections only a Pro (or one-time token) scan shows.
PRO_ONLY_SECTIONS: tuple[str, ...] = tuple(s.key for s in SECTIONS if s.pro_only)
_BY_KEY = {s.key: s for s in SECTIONS}


def section(key: str) -> Section:
    """The section of a JSON key; raises KeyError for a key the table does not list."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"section {key!r} is not in rules/sections.toml") from None


__all__ = [
    "PRO_ONLY_SECTIONS",
    "SECTIONS",
    "SECTION_ORDER",
    "Section",
    "SectionTableError",
    "load_sections",
    "parse_sections",
    "section",
]
