# Test cases adapted from Mozilla's http-observatory (httpobs 0.9.3, MPL-2.0,
# https://github.com/mozilla/http-observatory); this file is available under MPL-2.0.
"""docs/conformance.md states, per Observatory test group, the counts the case data really has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance import test_observatory_content, test_observatory_headers, test_observatory_misc
from tests.conformance._suite import tally

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
MODULES = (test_observatory_headers, test_observatory_content, test_observatory_misc)


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| test_\w+\.py \| (\w+) \| (\d+) \| (\d+) \| (\d+) \|$", DOC.read_text(), re.M)
    stated = {group: tuple(int(n) for n in counts) for group, *counts in rows}
    actual = {group: tally(cases) for module in MODULES for group, cases in module.GROUPS.items()}
    assert stated == actual


def test_every_divergence_is_listed_in_the_doc() -> None:
    text = DOC.read_text()
    for module in MODULES:
        for case in (c for cases in module.GROUPS.values() for c in cases if c.why):
            assert case.why in text, case.label
