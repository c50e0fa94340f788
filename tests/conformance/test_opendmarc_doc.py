# Test cases adapted from OpenDMARC's libopendmarc/tests (trusteddomainproject/OpenDMARC), Copyright (c) 2012, The
# Trusted Domain Project. All rights reserved. Used under its BSD-style licence, reproduced in full in
# tests/conformance/files/opendmarc.LICENSE.
"""docs/conformance.md states, per test file of OpenDMARC's suite, the counts the case data really has, every
divergence with its reason, and every test not ported with its reason."""

from __future__ import annotations

import re

from tests.conformance._suite import doc_part, expected_rows, listed_under, stated_total, tally
from tests.conformance.test_opendmarc import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

HEADING = "OpenDMARC's tests (DMARC)"


def test_the_doc_table_matches_the_cases() -> None:
    part = doc_part(HEADING)
    rows = re.findall(r"^\| `(test_\w+\.c)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
    assert stated == expected_rows(SECTIONS, NOT_PORTED_IN, tally)
    assert stated_total(part, "OpenDMARC total") == (*tally(CASES), len(NOT_PORTED))


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    part = doc_part(HEADING)
    assert listed_under(part, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert listed_under(part, "Not ported") == NOT_PORTED
