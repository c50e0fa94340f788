"""What every CI format says of one report item: a stable id, a title, the prose, the fix."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..scanner.report import ReportItem, notes_of

#: A header object of the bare `headers` map has no outcome id of its own: `headers/<Header-Name>`.
HEADER_RULE_PREFIX = "headers/"

_BACKTICKS = re.compile(r"`([^`]*)`")
# A header name and ": " at the start of a fix, as the rule table writes them: "X-Frame-Options: SAMEORIGIN".
_LEADING_HEADER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:\s")


def rule_id(item: ReportItem) -> str:
    return f"{HEADER_RULE_PREFIX}{item.name}" if item.header else item.name


def plain(text: object) -> str:
    """Rule prose uses Markdown backticks for code; formats that are not Markdown drop them."""
    return _BACKTICKS.sub(r"\1", "" if text is None else str(text)).strip()


def rule_name(item: ReportItem) -> str:
    """A readable name beside the opaque id (SARIF 3.49.7): `cookie.session_no_secure` ->
    `CookieSessionNoSecure`, the `Content-Security-Policy` header -> `ContentSecurityPolicyHeader`."""
    words = re.split(r"[^A-Za-z0-9]+", item.name)
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    return f"{name}Header" if item.header else name


def subjects(item: ReportItem) -> list[str]:
    found = item.item.get("subjects")
    return [str(s) for s in found] if isinstance(found, list) else []


def describe(item: ReportItem) -> str:
    """One line: what was found, on what."""
    on = f" ({', '.join(subjects(item))})" if subjects(item) else ""
    return f"{rule_id(item)}{on}"


def fix_of(item: ReportItem) -> str | None:
    fix = item.item.get("fix")
    return str(fix) if isinstance(fix, str) and fix.strip() else None


def fix_note_of(item: ReportItem) -> str | None:
    """How to apply the fix (the CSP proposal's rollout advice), as plain text; only beside a fix."""
    note = item.item.get("fix_note")
    return (plain(note) or None) if fix_of(item) is not None and isinstance(note, str) else None


def header_line(item: ReportItem, fix: str) -> str:
    """A header object's fix as the whole `Name: value` line to send. The rule table writes most of them
    that way already (`Strict-Transport-Security: max-age=...`; X-Frame-Options ALLOW-FROM is fixed by
    `Content-Security-Policy: frame-ancestors 'self'`); only a bare value (the derived CSP) gets the
    object's own name in front. Only a name at the very start counts, in any case: a CSP value copied
    from the site may hold `Name: ` further on. (fixes.actions.header_from_fix finds a name anywhere and
    rewrites the value for server configuration; this line is the fix as the report gives it.)"""
    text = fix.strip()
    return text if _LEADING_HEADER_NAME.match(text) else f"{item.name}: {text}"


def fix_text(item: ReportItem) -> str | None:
    """The fix as plain text: a header object's as its whole header line, kept verbatim (it is code),
    any other's as prose without Markdown backticks."""
    fix = fix_of(item)
    if fix is None:
        return None
    return header_line(item, fix) if item.header else plain(fix)


def detail(item: ReportItem, *, lines: bool = False) -> str:
    """The explanation, then the scan's own notes for this site: joined on one line, or with `lines` (where the
    format keeps line breaks) several notes one a line."""
    parts = [plain(item.item.get("explanation"))]
    notes = notes_of(item.item)
    if lines and len(notes) > 1:
        parts.append("Found:" + "".join(f"\n- {plain(note)}" for note in notes))
    elif item.item.get("note"):  # on one line: the notes as the report joins them
        parts.append(f"Found: {plain(item.item.get('note'))}")
    return " ".join(p for p in parts if p)


def grading(body: Mapping[str, Any]) -> Mapping[str, Any]:
    found = body.get("grading")
    return found if isinstance(found, Mapping) else {}
