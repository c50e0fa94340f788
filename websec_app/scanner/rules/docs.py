"""Render the rule table as the outcome list in docs/scoring.md.

`python -m websec_app.scanner.rules.docs` rewrites the generated part of docs/scoring.md;
a test fails when the file and the table disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import RuleBook, default_rulebook

BEGIN = "<!-- BEGIN GENERATED OUTCOMES: python -m websec_app.scanner.rules.docs -->"
END = "<!-- END GENERATED OUTCOMES -->"
DOC_PATH = Path(__file__).resolve().parents[3] / "docs" / "scoring.md"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def render_outcomes(book: RuleBook) -> str:
    lines = [BEGIN, "", f"Grading algorithm version **{book.version}**.", ""]
    sections: dict[str, list] = {}
    for rule in book.rules.values():
        sections.setdefault(rule.section, []).append(rule)
    for section in sorted(sections, key=lambda s: (s == "*", s)):
        title = "Any section" if section == "*" else f"`{section}`"
        lines += [f"### {title}", "", "| outcome | subject | status | severity | deduction | cap | CWE | why |"]
        lines.append("|---|---|---|---|---|---|---|---|")
        for rule in sorted(sections[section], key=lambda r: (r.subject or "", -r.deduction, r.outcome)):
            lines.append(
                f"| `{rule.outcome}` | {_cell(rule.subject)} | {rule.status} | {rule.severity} | {rule.deduction} "
                f"| {rule.max_grade or ''} | {rule.cwe or ''} | {_cell(rule.explanation)} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def updated_document(current: str, book: RuleBook) -> str:
    head, _, rest = current.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + render_outcomes(book) + tail


def main() -> int:
    DOC_PATH.write_text(updated_document(DOC_PATH.read_text("utf-8"), default_rulebook()), "utf-8")
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
