# Test cases adapted from Let's Encrypt's Boulder (va/caa_test.go, MPL-2.0, https://github.com/letsencrypt/boulder);
# this file is available under MPL-2.0.
"""docs/conformance.md states, per test function of Boulder's va/caa_test.go, the counts the case data really has,
every divergence with its reason, and every test (or case) not ported with its reason."""

from __future__ import annotations

import re

from tests.conformance._suite import doc_part, expected_rows, listed_under, stated_total, tally
from tests.conformance.test_boulder_caa import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

HEADING = "Boulder's CAA tests (Let's Encrypt)"


def test_the_doc_table_matches_the_cases() -> None:
    part = doc_part(HEADING)
    rows = re.findall(r"^\| `(Test\w+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    stated = {name: tuple(int(n) for n in counts) for name, *counts in rows}
    assert stated == expected_rows(SECTIONS, NOT_PORTED_IN, tally)
    assert stated_total(part, "Boulder total") == (*tally(CASES), len(NOT_PORTED))


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    part = doc_part(HEADING)
    assert listed_under(part, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert listed_under(part, "Not ported") == NOT_PORTED
