# Test cases adapted from sectxt 0.9.8 (DigitalTrustCenter, https://github.com/DigitalTrustCenter/sectxt), the
# security.txt validator of internet.nl. Licensed under the EUPL (EUPL-1.2; the licence, copied unchanged:
# tests/conformance/files/sectxt.LICENCE); this file is available under EUPL-1.2.
"""docs/conformance.md states, per group of sectxt's cases, the counts the case data really has, every divergence,
every code websec grades lower than sectxt, and every test not ported."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._sectxt import SECTXT
from tests.conformance._suite import tally
from tests.conformance.test_sectxt import CASES, GROUPS, NOT_PORTED

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def sectxt_part() -> str:
    return DOC.read_text().split("## sectxt (internet.nl's security.txt validator)", 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `([\w.]+\.py)` \| (\d+) \| (\d+) \| (\d+) \|$", sectxt_part(), re.M)
    assert {name: tuple(int(n) for n in counts) for name, *counts in rows} == {
        name: tally(cases) for name, cases in GROUPS.items()
    }
    total = re.search(r"^\| \*\*Total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$", sectxt_part(), re.M)
    assert total is not None and tuple(int(n) for n in total.groups()) == tally(CASES)


def test_every_divergence_graded_code_and_test_not_ported_is_in_the_doc() -> None:
    text = sectxt_part()
    for case in (c for c in CASES if c.why):
        assert case.why in text, case.label
    for code, reason in SECTXT.graded.items():
        assert f"- `{code}`: {reason}" in text, code
    for test, reason in NOT_PORTED.items():
        assert f"`{test}` ({reason})" in text, test


def test_every_code_has_a_case() -> None:
    assert {c.code.removeprefix("!") for c in CASES} == set(SECTXT.codes)
