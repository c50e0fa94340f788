# Test cases adapted from x509-limbo (https://github.com/C2SP/x509-limbo), the C2SP suite of X.509 path validation
# test vectors. Used under the Apache License 2.0, reproduced in full in tests/conformance/files/x509-limbo.LICENSE.
"""docs/conformance.md states, per source module of limbo's CRL and server name cases, the counts the case data
really has, every divergence with its reason, and every case not ported with its reason."""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from tests.conformance import test_limbo_crl, test_limbo_names
from tests.conformance._suite import doc_part, expected_rows, listed_under, stated_total, tally

SUITES = [
    ("x509-limbo's CRL cases", "x509-limbo CRL total", test_limbo_crl),
    ("x509-limbo's server name cases", "x509-limbo name total", test_limbo_names),
]


@pytest.mark.parametrize(("heading", "total", "suite"), SUITES, ids=["crl", "names"])
def test_the_doc_table_matches_the_cases(heading: str, total: str, suite: ModuleType) -> None:
    part = doc_part(heading)
    rows = re.findall(r"^\| `limbo/testcases/([\w/]+)\.py` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    stated = {path.replace("/__init__", "").replace("/", "."): tuple(int(n) for n in counts) for path, *counts in rows}
    assert stated == expected_rows(suite.SECTIONS, suite.NOT_PORTED_IN, tally)
    assert stated_total(part, total) == (*tally(suite.CASES), len(suite.NOT_PORTED))


@pytest.mark.parametrize(("heading", "total", "suite"), SUITES, ids=["crl", "names"])
def test_every_divergence_and_every_case_not_ported_is_listed_with_its_reason(
    heading: str, total: str, suite: ModuleType
) -> None:
    part = doc_part(heading)
    assert listed_under(part, "Divergences") == {c.name: c.why for c in suite.CASES if c.why}
    if suite.NOT_PORTED:
        assert listed_under(part, "Not ported") == suite.NOT_PORTED
