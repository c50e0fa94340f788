"""What every CI format says of one report item: a stable id, a title, the prose, the fix."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..scanner.report import ReportItem

#: A header object of the bare `headers` map has no outcome id of its own: `headers/<Header-Name>`.
HEADER_RULE_PREFIX = "headers/"

_BACKTICKS = re.compile(r"`([^`]*)`")


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


def detail(item: ReportItem) -> str:
    """The explanation, then the scan's own note for this site."""
    parts = [plain(item.item.get("explanation"))]
    note = item.item.get("note")
    if note:
        parts.append(f"Found: {plain(note)}")
    return " ".join(p for p in parts if p)


def grading(body: Mapping[str, Any]) -> Mapping[str, Any]:
    found = body.get("grading")
    return found if isinstance(found, Mapping) else {}
