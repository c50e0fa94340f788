# Test cases adapted from OpenDMARC's libopendmarc/tests (trusteddomainproject/OpenDMARC), Copyright (c) 2012, The
# Trusted Domain Project. All rights reserved. Used under its BSD-style licence, reproduced in full in
# tests/conformance/files/opendmarc.LICENSE.
"""docs/conformance.md states, per test file of OpenDMARC's suite, the counts the case data really has, every
divergence with its reason, and every test not ported with its reason."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._opendmarc import tally
from tests.conformance.test_opendmarc import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def opendmarc_part() -> str:
    return DOC.read_text().split("## OpenDMARC's tests (DMARC)", 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `(test_\w+\.c)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", opendmarc_part(), re.M)
    stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
    files = [*SECTIONS, *(f for f in NOT_PORTED_IN if f not in SECTIONS)]
    assert stated == {f: (*tally(SECTIONS.get(f, [])), len(NOT_PORTED_IN.get(f, []))) for f in files}
    total = re.search(
        r"^\| \*\*OpenDMARC total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
        opendmarc_part(),
        re.M,
    )
    assert total is not None and tuple(int(n) for n in total.groups()) == (*tally(CASES), len(NOT_PORTED))


def _listed(text: str, heading: str) -> dict[str, str]:
    """Each name of a `- \\`a\\`, \\`b\\`: reason` line under `heading`, with its reason."""
    part = text.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    listed = {}
    for names, reason in re.findall(r"^- ((?:`[\w-]+`(?:, )?)+): (.+)$", part, re.M):
        listed.update({name: reason for name in re.findall(r"`([\w-]+)`", names)})
    return listed


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    text = opendmarc_part()
    assert _listed(text, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert _listed(text, "Not ported") == NOT_PORTED
