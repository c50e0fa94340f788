# Test cases adapted from Google's CSP Evaluator (https://github.com/google/csp-evaluator): Copyright 2016 Google
# Inc. All rights reserved. Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0);
# distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND.
"""docs/conformance.md states, per CSP Evaluator test file, the counts the case data really has (and how many of its
tests are not ported), every divergence with its reason and every test left out with its reason."""

from __future__ import annotations

import re

from tests.conformance._suite import doc_part, stated_total, tally
from tests.conformance.test_csp_evaluator import CASES, GROUPS, NOT_PORTED

HEADING = "Google's CSP Evaluator"


def test_the_doc_table_matches_the_cases() -> None:
    part = doc_part(HEADING)
    rows = re.findall(r"^\| `([\w/.]+\.ts)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", part, re.M)
    files = [*GROUPS, *(f for f in NOT_PORTED if f not in GROUPS)]
    expected = {f: (*tally(GROUPS.get(f, [])), NOT_PORTED[f][0] if f in NOT_PORTED else 0) for f in files}
    assert {f: tuple(int(n) for n in counts) for f, *counts in rows} == expected
    not_ported = sum(count for count, _, _ in NOT_PORTED.values())
    assert stated_total(part, "CSP Evaluator total") == (*tally(CASES), not_ported)


def test_every_divergence_and_every_test_not_ported_is_listed_with_its_reason() -> None:
    part = doc_part(HEADING)
    divergences = part.split("### Divergences\n", 1)[1].split("\n### ", 1)[0]
    for case in (c for c in CASES if c.why):
        line = next((ln for ln in divergences.splitlines() if f"`{case.name}`" in ln), "")
        assert line.endswith(f": {case.why}"), case.name
    not_ported = part.split("### Not ported\n", 1)[1]
    for file, (_, which, why) in NOT_PORTED.items():
        assert f"- `{file}`: {which}: {why}" in not_ported, file
