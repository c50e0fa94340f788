"""The header line a reader copies from a CI format is one valid header: the report's `fix` is already a whole
`Name: value` line for most header objects (only the derived CSP is a bare value), so no format puts the name
in front a second time. From a real scan of a fixture site that gets those fixes."""

from __future__ import annotations

import asyncio
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import SiteFactory
from websec_app.report_formats import render_junit, render_markdown, render_sarif
from websec_app.report_formats.markdown import escape
from websec_app.scanner import scan
from websec_app.settings import Settings

# A field name and its colon, as a header line starts.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*:\s")


@pytest.fixture(scope="module")
def header_fix_body(site_factory: SiteFactory, scan_settings: Settings) -> dict[str, Any]:
    """A good site without CSP, HSTS and Referrer-Policy, framing "allowed" with the obsolete ALLOW-FROM."""
    site = site_factory(
        catalog.best_practices(
            site_factory.unique_host("fixlines"),
            remove_headers=["Content-Security-Policy", "Strict-Transport-Security", "Referrer-Policy"],
            replace_headers=[("X-Frame-Options", "ALLOW-FROM https://partner.test/")],
        )
    )
    return asyncio.run(scan(site.url, scan_settings)).to_dict()


def _expected_lines(body: dict[str, Any]) -> dict[str, str]:
    """Header object -> the line to send, from the report itself."""
    return {
        name: (info["fix"] if _NAME.match(info["fix"]) else f"{name}: {info['fix']}")
        for name, info in body["headers"].items()
        if info.get("fix") and info["status"] != "good"
    }


def _after_the_line(body: dict[str, Any], name: str, separator: str = " ") -> str:
    """What follows a header's fix line: its `fix_note` (the CSP proposal's advice), or nothing."""
    note = body["headers"][name].get("fix_note")
    return f"{separator}{note}" if note else ""


def _assert_one_header(line: str) -> None:
    name, value = line.split(": ", 1)
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", name), line
    assert not _NAME.match(value), f"the header name is repeated: {line!r}"


def test_the_scan_gives_the_fixes_these_tests_are_about(header_fix_body) -> None:
    headers = header_fix_body["headers"]
    assert headers["Strict-Transport-Security"]["fix"].startswith("Strict-Transport-Security: max-age=")
    assert headers["X-Frame-Options"]["fix"].startswith("Content-Security-Policy: frame-ancestors")
    assert headers["Referrer-Policy"]["fix"].startswith("Referrer-Policy: ")
    assert not _NAME.match(headers["Content-Security-Policy"]["fix"])  # the derived policy: a bare value


def test_the_sarif_help_sends_one_valid_header_line(header_fix_body) -> None:
    rules = json.loads(render_sarif(header_fix_body))["runs"][0]["tool"]["driver"]["rules"]
    helps = {rule["id"].removeprefix("headers/"): rule["help"] for rule in rules if rule["id"].startswith("headers/")}
    expected = _expected_lines(header_fix_body)
    assert set(expected) <= set(helps)
    for name, line in expected.items():
        assert helps[name]["text"] == f"Send the response header {line}"
        assert helps[name]["markdown"] == f"Send: ` {line} `"
        _assert_one_header(line)
    assert expected["Strict-Transport-Security"] == "Strict-Transport-Security: max-age=63072000; includeSubDomains"
    assert expected["X-Frame-Options"] == "Content-Security-Policy: frame-ancestors 'self' https://partner.test/"
    assert expected["Content-Security-Policy"].startswith("Content-Security-Policy: default-src ")


def test_the_sarif_and_junit_messages_name_the_header_once(header_fix_body) -> None:
    expected = _expected_lines(header_fix_body)
    results = json.loads(render_sarif(header_fix_body))["runs"][0]["results"]
    for result in results:
        name = result["ruleId"].removeprefix("headers/")
        if name in expected:
            assert result["message"]["text"].endswith(f" Fix: {expected[name]}{_after_the_line(header_fix_body, name)}")
    failures = {
        case.get("name", "").removeprefix("headers/"): case.find("failure")
        for case in ET.fromstring(render_junit(header_fix_body)).iter("testcase")
    }
    for name, line in expected.items():
        failure = failures[name]
        after = _after_the_line(header_fix_body, name, "\n")
        assert failure is not None and (failure.text or "").endswith(f"\nFix: {line}{after}")
    assert header_fix_body["headers"]["Content-Security-Policy"]["fix_note"]  # the derived CSP's advice follows


def test_the_markdown_fix_cell_is_one_valid_header_line(header_fix_body) -> None:
    rows = [line for line in render_markdown(header_fix_body).splitlines() if line.startswith("| -")]
    cells = {}
    for row in rows:
        what, fix = row.split(" | ")[1], row.split(" | ")[3].removesuffix(" |")
        if what.startswith("` headers/"):
            cells[what.removeprefix("` headers/").removesuffix(" `")] = fix
    expected = _expected_lines(header_fix_body)
    assert set(expected) <= set(cells)
    for name, line in expected.items():
        note = header_fix_body["headers"][name].get("fix_note")
        assert cells[name] == f"` {line.replace('|', chr(92) + '|')} `" + (f" {escape(note)}" if note else "")
        _assert_one_header(line)
