# Test cases adapted from the RFC 7208 test suite (openspf.org release 2014.04, rfc7208-tests.yml as shipped in
# pyspf 2.0.14), (C) 2006-2008 Stuart D Gathman, 2007-2008 Julian Mehnle, 2014 Scott Kitterman. All rights
# reserved. Used under its BSD licence, reproduced in full in tests/conformance/files/rfc7208-tests.LICENSE.
"""docs/conformance.md states, per section of the RFC 7208 test suite, the counts the case data really has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._rfc7208 import tally
from tests.conformance.test_rfc7208 import CASES, NOT_PORTED, SECTIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def rfc7208_part() -> str:
    return DOC.read_text().split("## The RFC 7208 test suite", 1)[1]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| ([A-Z][\w ]*?) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", rfc7208_part(), re.M)
    stated = {section: tuple(int(n) for n in counts) for section, *counts in rows}
    assert stated == {section: tally(cases) for section, cases in SECTIONS.items()}
    total = re.search(
        r"^\| \*\*Total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
        rfc7208_part(),
        re.M,
    )
    assert total is not None and tuple(int(n) for n in total.groups()) == tally(CASES)


def test_every_divergence_and_every_test_not_ported_is_listed_in_the_doc() -> None:
    text = rfc7208_part()
    for case in (c for c in CASES if c.why):
        assert case.why in text, case.name
    for name in NOT_PORTED:
        assert f"`{name}`" in text, name
