# Test cases adapted from mox (https://github.com/mjl-/mox), Copyright 2021 Mechiel Lukkien. Used under the MIT
# licence, reproduced in full in tests/conformance/files/mox.LICENSE.
"""docs/conformance.md states, per Go test of mox's suite, the counts the case data really has, every divergence
with its reason, and every part not ported with its reason."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance._mox import tally
from tests.conformance.test_mox import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
HEADING = "## mox's MTA-STS and TLS-RPT tests"


def mox_part() -> str:
    return DOC.read_text().split(HEADING, 1)[1].split("\n## ", 1)[0]


def test_the_doc_table_matches_the_cases() -> None:
    rows = re.findall(r"^\| `([\w/]+\.go)` \| `(\w+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", mox_part(), re.M)
    stated = {f"{path} {test}": tuple(int(n) for n in counts) for path, test, *counts in rows}
    tests = [*SECTIONS, *(t for t in NOT_PORTED_IN if t not in SECTIONS)]
    assert stated == {t: (*tally(SECTIONS.get(t, [])), len(NOT_PORTED_IN.get(t, []))) for t in tests}
    total = re.search(
        r"^\| \*\*mox total\*\* \| \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
        mox_part(),
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


def test_every_divergence_and_every_part_not_ported_is_listed_with_its_reason() -> None:
    text = mox_part()
    assert _listed(text, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert _listed(text, "Not ported") == NOT_PORTED
