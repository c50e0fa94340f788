# Test cases adapted from Chromium's net/http/http_security_headers_unittest.cc (Copyright 2012 The Chromium Authors,
# BSD-style licence: tests/conformance/files/chromium.LICENSE) and chromium/hstspreload's header_test.go
# (Copyright The Chromium Authors, BSD 3-clause licence).
"""docs/conformance.md states, per Chromium and hstspreload test, the counts the case data really has, every
divergence's reason, and every hstspreload issue websec does not state."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance import test_chromium_hsts, test_hstspreload
from tests.conformance._hsts import MAP
from tests.conformance._suite import tally

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
SUITES = {"Chromium": test_chromium_hsts.GROUPS, "hstspreload": test_hstspreload.GROUPS}


def test_the_doc_tables_match_the_cases() -> None:
    text = DOC.read_text()
    for suite, groups in SUITES.items():
        names = "|".join(re.escape(name) for name in groups)
        rows = re.findall(rf"^\| ({names}) \| (\d+) \| (\d+) \| (\d+) \|$", text, re.M)
        stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
        assert stated == {name: tally(cases) for name, cases in groups.items()}, suite
        total = re.search(
            rf"^\| \*\*{suite} total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$", text, re.M
        )
        assert total is not None, suite
        assert tuple(int(n) for n in total.groups()) == tally(c for cases in groups.values() for c in cases)


def test_every_divergence_is_listed_in_the_doc() -> None:
    text = DOC.read_text()
    for groups in SUITES.values():
        for case in (c for cases in groups.values() for c in cases if c.why):
            assert case.why in text, case.label


def test_every_issue_websec_does_not_state_is_named_in_the_doc() -> None:
    text = DOC.read_text()
    silent = [
        code
        for code, way in MAP["hstspreload"].items()
        if not any(way.get(k) for k in ("outcomes", "notes", "eligibility"))
    ]
    assert silent
    for code in silent:
        assert f"`{code}`" in text, code
