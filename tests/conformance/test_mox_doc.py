# Test cases adapted from mox (https://github.com/mjl-/mox), Copyright 2021 Mechiel Lukkien. Used under the MIT
# licence, reproduced in full in tests/conformance/files/mox.LICENSE.
"""docs/conformance.md states, per Go test of mox's suite, the counts the case data really has, every divergence
with its reason, and every part not ported with its reason."""

from __future__ import annotations

import re

from tests.conformance._suite import doc_part, expected_rows, listed_under, stated_total, tally
from tests.conformance.test_mox import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

HEADING = "mox's MTA-STS and TLS-RPT tests"


def test_the_doc_table_matches_the_cases() -> None:
    part = doc_part(HEADING)
    rows = re.findall(r"^\| `([\w/]+\.go)` \| `(\w+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    stated = {f"{path} {test}": tuple(int(n) for n in counts) for path, test, *counts in rows}
    assert stated == expected_rows(SECTIONS, NOT_PORTED_IN, tally)
    assert stated_total(part, "mox total") == (*tally(CASES), len(NOT_PORTED))


def test_every_divergence_and_every_part_not_ported_is_listed_with_its_reason() -> None:
    part = doc_part(HEADING)
    assert listed_under(part, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert listed_under(part, "Not ported") == NOT_PORTED
