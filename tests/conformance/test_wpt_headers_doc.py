# Test cases adapted from web-platform-tests (https://github.com/web-platform-tests/wpt, BSD 3-Clause licence:
# tests/conformance/files/wpt.LICENSE).
"""docs/conformance.md states, per web-platform-tests folder, the counts the case data really has, every
divergence's reason and every test left out with its reason."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._suite import tally
from tests.conformance.test_wpt_headers import CASES, GROUPS, NOT_PORTED

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def wpt_part() -> str:
    return DOC.read_text().split("## Security headers in web-platform-tests", 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `([\w/-]+)` \| (\d+) \| (\d+) \| (\d+) \|$", wpt_part(), re.M)
    assert {folder: tuple(int(n) for n in counts) for folder, *counts in rows} == {
        folder: tally(cases) for folder, cases in GROUPS.items()
    }
    total = re.search(r"^\| \*\*WPT total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$", wpt_part(), re.M)
    assert total is not None and tuple(int(n) for n in total.groups()) == tally(CASES)


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    text = wpt_part()
    for case in (c for c in CASES if c.why):
        assert case.why in text, case.label
    for what, why in NOT_PORTED.items():
        assert what in text and why in text, what
