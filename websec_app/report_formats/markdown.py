"""Markdown for a pull-request comment: the grade, the counts, the problems that cost the most points,
and every check in a collapsed list.

Notes quote what the scanned site sent (header values, page text). In a comment that text must stay
text: no link, image, HTML or @mention may come out of it, so it is escaped character by character, and its
bidirectional controls are shown as `\\u202e`, not obeyed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scanner.report import ReportItem, fixes_by_impact, grade_caps, notes_of, report_items
from ..scanner.sections import section as section_entry
from ..wording import BIDI_CONTROLS, bidi_escaped
from ._items import fix_note_of, fix_of, grading, header_line, plain, rule_id, subjects

TOP_FIXES = 10
_STATUS_ICON = {"good": "✅", "warn": "⚠️", "weak": "🟠", "missing": "❌", "bad": "❌"}
# CommonMark's backslash-escapable ASCII punctuation, plus `@` (mentions) handled below.
_ESCAPED = set("\\`*_{}[]()#+-.!|<>~&\"'=:")


def escape(text: object) -> str:
    """Literal text in Markdown (GitHub flavour): punctuation escaped, HTML and mentions neutralised,
    on one line (a table cell cannot hold a line break)."""
    out: list[str] = []
    for ch in " ".join(("" if text is None else str(text)).split()):
        if ch < " " or ch == "\x7f":  # control characters: nothing a reader should get
            continue
        if ch in BIDI_CONTROLS:
            out.append(bidi_escaped(ch))
        elif ch == "@":
            out.append("&#64;")
        elif ch in _ESCAPED:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def code_span(text: str, *, in_table: bool = False) -> str:
    """An inline code span holding any text: fenced with more backticks than it contains. In a table a
    pipe ends the cell even inside code (GitHub Flavored Markdown 4.10), so there it is escaped."""
    flat = "".join(bidi_escaped(ch) if ch in BIDI_CONTROLS else ch for ch in " ".join(text.split()))
    longest = run = 0
    for ch in flat:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    if in_table:
        flat = flat.replace("|", "\\|")
    fence = "`" * (longest + 1)
    return f"{fence} {flat} {fence}"


def _fix_cell(item: ReportItem) -> str:
    fix = fix_of(item)
    if fix is None:
        return ""
    cell = code_span(header_line(item, fix), in_table=True) if item.header else escape(plain(fix))
    fix_note = fix_note_of(item)
    return f"{cell} {escape(fix_note)}" if fix_note else cell


def _what(item: ReportItem, *, in_table: bool = False) -> str:
    on = f" ({escape(', '.join(subjects(item)))})" if subjects(item) else ""
    return f"{code_span(rule_id(item), in_table=in_table)}{on}"


def render_markdown(body: Mapping[str, Any]) -> str:
    """The report as Markdown text."""
    counts = body.get("issue_counts") if isinstance(body.get("issue_counts"), Mapping) else {}
    assert isinstance(counts, Mapping)
    title = f"grade {escape(body.get('grade'))} ({escape(body.get('score'))}/100)"
    lines = [
        f"### websec: {title} for {code_span(str(body.get('url', '')))}",
        "",
        f"**{counts.get('total', 0)} issues**: {counts.get('critical', 0)} critical, "
        f"{counts.get('important', 0)} important, {counts.get('minor', 0)} minor "
        f"(graded with rules {escape(grading(body).get('algorithm_version'))})",
    ]
    for number, cap in enumerate(grade_caps(body)):
        # one quote, a paragraph a cap: consecutive "> " lines would run on as one paragraph
        lines += [">"] if number else []
        lines.append(f"> Grade {cap.reach} {escape(cap.max_grade)} by {code_span(cap.outcome)}{cap.condition}")
    fixes = fixes_by_impact(body, limit=TOP_FIXES)
    if fixes:
        lines += ["", "| Points | Finding | Severity | Fix |", "|---:|---|---|---|"]
        for item in fixes:
            lines.append(f"| -{item.deduction} | {_what(item, in_table=True)} | {item.severity} | {_fix_cell(item)} |")
    lines += ["", "<details><summary>Every check</summary>", ""]
    current = None
    for item in report_items(body):
        if item.section != current:
            current = item.section
            lines += ["", f"**{escape(section_entry(item.section).title)}**", ""]
        icon = _STATUS_ICON.get(item.status, "")
        notes = notes_of(item.item) if item.status != "good" else []
        said = f": {escape(plain(notes[0]))}" if len(notes) == 1 else ""
        lines.append(f"- {icon} {_what(item)} {item.status}, -{item.deduction}{said}")
        if len(notes) > 1:  # each its own line: a note may hold a "; " of its own
            lines += [f"  - {escape(plain(note))}" for note in notes]
    lines += ["", "</details>", ""]
    return "\n".join(lines)
