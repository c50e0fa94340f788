"""The snippets of a real scan of https://worst.test/ (everything wrong), shared by the real-server tests."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import pytest

from websec_app.scanner import scan

#: Sections whose fixes are response headers or cookie attributes: what the servers are checked to send.
HEADER_SECTIONS = ("headers", "cross_origin")
FINDING_SECTIONS = ("cookies", "server_fingerprint")


@dataclass(frozen=True)
class Fix:
    where: str  # "headers/Strict-Transport-Security" or "cookies/cookie.session_no_secure"
    snippets: dict[str, str]


def _fixes(body: dict[str, Any]) -> list[Fix]:
    found: list[Fix] = []
    for section in HEADER_SECTIONS:
        for name, item in body.get(section, {}).items():
            if isinstance(item, dict) and item.get("fix_snippets"):
                found.append(Fix(f"{section}/{name}", item["fix_snippets"]))
    # (cross_origin's findings repeat its header objects' fixes: pasting both would send each header twice)
    for section in FINDING_SECTIONS:
        for finding in body.get(section, {}).get("findings", []):
            if finding.get("fix_snippets"):
                found.append(Fix(f"{section}/{finding['check']}", finding["fix_snippets"]))
    return found


@pytest.fixture(scope="session")
def worst_scan(worst_site, scan_settings) -> dict[str, Any]:
    return asyncio.run(scan(worst_site.url, scan_settings)).to_dict()


@pytest.fixture(scope="session")
def worst_fixes(worst_scan) -> list[Fix]:
    fixes = _fixes(worst_scan)
    kinds = {fix.where.split("/")[0] for fix in fixes}
    assert {"headers", "cross_origin", "cookies", "server_fingerprint"} <= kinds, kinds
    return fixes


def expected_headers(fixes: list[Fix]) -> list[tuple[str, str]]:
    """(name, value) every header fix sets, read from its Netlify `_headers` snippet (the plainest form)."""
    wanted = []
    for fix in fixes:
        netlify = fix.snippets["netlify"]
        if netlify.startswith("/*\n"):
            for line in netlify.splitlines()[1:]:
                name, _, value = line.strip().partition(": ")
                wanted.append((name, value))
    return wanted


def cookie_attributes(fixes: list[Fix]) -> dict[str, set[str]]:
    """cookie -> the attributes the cookie fixes add (read from the Express snippet's options)."""
    wanted: dict[str, set[str]] = {}
    for fix in fixes:
        for name, options in re.findall(r'res\.cookie\("([^"]+)", value, \{ (.*) \}\);', fix.snippets["express"]):
            attributes = wanted.setdefault(name, set())
            if "secure: true" in options:
                attributes.add("secure")
            if "httpOnly: true" in options:
                attributes.add("httponly")
            if match := re.search(r'sameSite: "(\w+)"', options):
                attributes.add(f"samesite={match.group(1)}")
    return wanted
