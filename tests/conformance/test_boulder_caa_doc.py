# Test cases adapted from Let's Encrypt's Boulder (va/caa_test.go, MPL-2.0, https://github.com/letsencrypt/boulder);
# this file is available under MPL-2.0.
"""docs/conformance.md states, per test function of Boulder's va/caa_test.go, the counts the case data really has,
every divergence with its reason, and every test (or case) not ported with its reason."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._boulder import tally
from tests.conformance.test_boulder_caa import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def boulder_part() -> str:
    return DOC.read_text().split("## Boulder's CAA tests (Let's Encrypt)", 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `(Test\w+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", boulder_part(), re.M)
    stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
    functions = [*SECTIONS, *(f for f in NOT_PORTED_IN if f not in SECTIONS)]
    assert stated == {f: (*tally(SECTIONS.get(f, [])), len(NOT_PORTED_IN.get(f, []))) for f in functions}
    total = re.search(
        r"^\| \*\*Boulder total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
        boulder_part(),
        re.M,
    )
    assert total is not None and tuple(int(n) for n in total.groups()) == (*tally(CASES), len(NOT_PORTED))


def _listed(text: str, heading: str) -> dict[str, str]:
    """Each name of a `- \\`a\\`, \\`b\\`: reason` line under `heading`, with its reason."""
    part = text.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    listed = {}
    for names, reason in re.findall(r"^- ((?:`[\w.*-]+`(?:, )?)+): (.+)$", part, re.M):
        listed.update({name: reason for name in re.findall(r"`([\w.*-]+)`", names)})
    return listed


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    text = boulder_part()
    assert _listed(text, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert _listed(text, "Not ported") == NOT_PORTED
