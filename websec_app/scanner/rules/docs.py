"""Render the rule table and the section table into the docs.

`python -m websec_app.scanner.rules.docs` rewrites the generated parts of docs/scoring.md (every
outcome, by section) and docs/api.md (the report's sections); tests fail when a file and the tables
disagree.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..sections import SECTIONS, Section
from . import Rule, RuleBook, default_rulebook

BEGIN = "<!-- BEGIN GENERATED OUTCOMES: python -m websec_app.scanner.rules.docs -->"
END = "<!-- END GENERATED OUTCOMES -->"
SECTIONS_BEGIN = "<!-- BEGIN GENERATED SECTIONS: python -m websec_app.scanner.rules.docs -->"
SECTIONS_END = "<!-- END GENERATED SECTIONS -->"
_DOCS = Path(__file__).resolve().parents[3] / "docs"
DOC_PATH = _DOCS / "scoring.md"
API_DOC_PATH = _DOCS / "api.md"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def render_outcomes(book: RuleBook, sections: tuple[Section, ...] = SECTIONS) -> str:
    """Every outcome, one table per section in report order, then the outcomes any section can carry."""
    lines = [BEGIN, "", f"Grading algorithm version **{book.version}**.", ""]
    by_section: dict[str, list[Rule]] = {}
    for rule in book.rules.values():
        by_section.setdefault(rule.section, []).append(rule)
    order = [(s.key, f"{s.title} (`{s.key}`)", s.summary) for s in sections]
    order += [(key, f"`{key}`", "") for key in sorted(set(by_section) - {s.key for s in sections} - {"*"})]
    order.append(("*", "Any section", "Outcomes a check of any section can report."))
    for key, title, summary in order:
        if key not in by_section:
            continue
        lines += [f"### {title}", ""]
        if summary:
            lines += [summary, ""]
        lines += [
            "| outcome | subject | status | severity | deduction | cap | CWE | why |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for rule in sorted(by_section[key], key=lambda r: (r.subject or "", -r.deduction, r.outcome)):
            lines.append(
                f"| `{rule.outcome}` | {_cell(rule.subject)} | {rule.status} | {rule.severity} | {rule.deduction} "
                f"| {rule.max_grade or ''} | {rule.cwe or ''} | {_cell(rule.explanation)} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def render_sections(sections: tuple[Section, ...] = SECTIONS) -> str:
    """The report's sections in report order: JSON key, title, whether a free result has it, what it checks."""
    lines = [
        SECTIONS_BEGIN,
        "",
        "| JSON key | Section | Free result | What it checks |",
        "|---|---|---|---|",
    ]
    for s in sections:
        free = "omitted (Pro only)" if s.pro_only else "yes"
        lines.append(f"| `{s.key}` | {_cell(s.title)} | {free} | {_cell(s.summary)} |")
    lines += ["", SECTIONS_END]
    return "\n".join(lines)


def _replace(current: str, begin: str, end: str, block: str) -> str:
    head, found, rest = current.partition(begin)
    if not found or end not in rest:
        raise ValueError(f"the document has no {begin!r} ... {end!r} block")
    _, _, tail = rest.partition(end)
    return head + block + tail


def updated_document(current: str, book: RuleBook) -> str:
    """docs/scoring.md with its outcome list regenerated."""
    return _replace(current, BEGIN, END, render_outcomes(book))


def updated_api_document(current: str) -> str:
    """docs/api.md with its section table regenerated."""
    return _replace(current, SECTIONS_BEGIN, SECTIONS_END, render_sections())


def main() -> int:
    book = default_rulebook()
    updates: list[tuple[Path, Callable[[str], str]]] = [
        (DOC_PATH, lambda text: updated_document(text, book)),
        (API_DOC_PATH, updated_api_document),
    ]
    for path, update in updates:
        path.write_text(update(path.read_text("utf-8")), "utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
