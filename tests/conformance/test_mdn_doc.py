# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
"""docs/conformance.md states, per MDN Observatory test file, the counts the case data really has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance import test_mdn_content, test_mdn_cross_origin, test_mdn_headers, test_mdn_misc
from tests.conformance._suite import tally

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
MODULES = (test_mdn_cross_origin, test_mdn_headers, test_mdn_content, test_mdn_misc)
GROUPS = {name: cases for module in MODULES for name, cases in module.GROUPS.items()}


def test_the_doc_table_matches_the_cases() -> None:
    text = DOC.read_text()
    rows = re.findall(r"^\| ([\w.-]+\.test\.js) \| (\d+) \| (\d+) \| (\d+) \|$", text, re.M)
    stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
    assert stated == {name: tally(cases) for name, cases in GROUPS.items()}
    total = re.search(r"^\| \*\*MDN total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$", text, re.M)
    assert total is not None
    assert tuple(int(n) for n in total.groups()) == tally(c for cases in GROUPS.values() for c in cases)


def test_every_divergence_is_listed_in_the_doc() -> None:
    text = DOC.read_text()
    for case in (c for cases in GROUPS.values() for c in cases if c.why):
        assert case.why in text, case.label
