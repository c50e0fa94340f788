# Test cases adapted from x509-limbo (https://github.com/C2SP/x509-limbo), the C2SP suite of X.509 path validation
# test vectors. Used under the Apache License 2.0, reproduced in full in tests/conformance/files/x509-limbo.LICENSE.
"""docs/conformance.md states, per module of limbo's CRL cases, the counts the case data really has, every
divergence with its reason, and every case not ported with its reason."""

from __future__ import annotations

import re

from tests.conformance._suite import doc_part, expected_rows, listed_under, stated_total, tally
from tests.conformance.test_limbo_crl import CASES, NOT_PORTED, NOT_PORTED_IN, SECTIONS

HEADING = "x509-limbo's CRL cases"


def test_the_doc_table_matches_the_cases() -> None:
    part = doc_part(HEADING)
    rows = re.findall(r"^\| `limbo/testcases/([\w/]+)\.py` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    stated = {path.replace("/__init__", "").replace("/", "."): tuple(int(n) for n in counts) for path, *counts in rows}
    assert stated == expected_rows(SECTIONS, NOT_PORTED_IN, tally)
    assert stated_total(part, "x509-limbo CRL total") == (*tally(CASES), len(NOT_PORTED))


def test_every_divergence_and_every_case_not_ported_is_listed_with_its_reason() -> None:
    part = doc_part(HEADING)
    assert listed_under(part, "Divergences") == {c.name: c.why for c in CASES if c.why}
    assert listed_under(part, "Not ported") == NOT_PORTED
