# Test cases adapted from the http-state cookie parser suite (Adam Barth, IETF http-state working group), as
# web-platform-tests carries it (cookies/http-state/, BSD-3-Clause) and tough-cookie ships it in one file
# (test/ietf_data/parser.json, MIT: (C) GoInstant, Inc. and other contributors), copied unchanged to
# files/http-state-parser.json, with its licence in files/http-state-parser.LICENSE.
"""docs/conformance.md states, per group of the http-state suite, the counts the case data really has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance.test_http_state import CASES, DIVERGES, GROUPS, NOT_PORTED, tally

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def http_state_part() -> str:
    return DOC.read_text().split("## The http-state cookie parser suite", 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `([A-Z]+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", http_state_part(), re.M)
    assert {group: tuple(int(n) for n in counts) for group, *counts in rows} == {
        group: tally(names) for group, names in GROUPS.items()
    }
    total = re.search(
        r"^\| \*\*http-state total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
        http_state_part(),
        re.M,
    )
    assert total is not None and tuple(int(n) for n in total.groups()) == tally(list(CASES))


def test_every_divergence_and_every_case_not_ported_is_listed_with_its_reason() -> None:
    text = http_state_part()
    for name, why in {**DIVERGES, **NOT_PORTED}.items():
        assert f"`{name}`" in text and why in text, name
