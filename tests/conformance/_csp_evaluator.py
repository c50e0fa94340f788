# Test cases adapted from Google's CSP Evaluator (https://github.com/google/csp-evaluator):
#
#   Copyright 2016 Google Inc. All rights reserved.
#   Licensed under the Apache License, Version 2.0 (the "License");
#   you may not use this file except in compliance with the License.
#   You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS,
#   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#   See the License for the specific language governing permissions and
#   limitations under the License.
"""Shared pieces of the CSP Evaluator conformance suite (docs/conformance.md).

A case is one test of CSP Evaluator's `test/` folder whose input is a policy (or a list of policies, each sent as
its own Content-Security-Policy line) and whose assertion is the findings one of its checks gives: `check` names
the check (a key of csp_evaluator_map.toml's [checks]), `findings` the findings the test asserts, each as
"TYPE SEVERITY directive" (a key of the map's [findings]; none: the test asserts the check finds nothing), and
`ours` websec's exact outcome ids for the header.

The map says, for each CSP Evaluator finding, which websec outcome (and, where an outcome covers more than the
finding, what its note must say) states it; a finding no websec outcome states has `stated_by = []`, and one named
after the directive another falls back to (default-src for script-src) is `same_as` that one. A case agrees when
websec states every finding the test asserts and none of the other findings the check can give: a test asserts
the check's whole list. A case with `why` is a documented divergence and must NOT agree, so no case
drifts silently from one kind to the other.

The policies are the response headers of a hand-made snapshot checked by websec's real `check_headers`, as the
Observatory suites do.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.headers import CSP, check_headers
from websec_app.scanner.findings import Finding

HERE = Path(__file__).parent
with (HERE / "csp_evaluator_map.toml").open("rb") as _fh:
    MAP: dict[str, Any] = tomllib.load(_fh)


@dataclass(frozen=True)
class EvaluatorCase:
    file: str  # the test file of CSP Evaluator's test/ folder: "checks/security_checks_test.ts"
    name: str  # the test's name there (`it('...')`), with "#n" where one test asserts several inputs
    policies: tuple[str, ...]  # the policies the test parses, each sent as one Content-Security-Policy line
    check: str  # the check (or lighthouse evaluation) the test runs: a key of the map's [checks]
    findings: tuple[str, ...]  # the findings it asserts, "TYPE SEVERITY directive"; () asserts none
    ours: tuple[str, ...]  # websec's outcome ids for Content-Security-Policy, in the order the check emits them
    why: str | None = None  # a documented divergence: why websec judges otherwise (CSP3 or what browsers do)


def answer(case: EvaluatorCase) -> list[Finding]:
    """websec's Content-Security-Policy findings for the case's policies."""
    snapshot = make_snapshot("https://example.com/", headers=[(CSP, policy) for policy in case.policies])
    return [f for f in check_headers(snapshot).findings if f.subject == CSP]


def canonical(finding: str) -> str:
    """The finding itself, or the one it stands for under another directive's name (the map's `same_as`)."""
    return str(MAP["findings"][finding].get("same_as", finding))


def states(finding: str, ours: Sequence[Finding]) -> bool:
    """Whether websec's findings state the CSP Evaluator finding: one of them is an outcome the map names for it,
    its note matching the map's pattern where the map gives one. A note-only entry is met by any finding's note."""
    for way in MAP["findings"][canonical(finding)]["stated_by"]:
        for f in ours:
            if "outcome" in way and f.outcome != way["outcome"]:
                continue
            if "note" in way and not re.search(way["note"], "; ".join(f.notes)):
                continue
            return True
    return False


def agrees(case: EvaluatorCase, ours: Sequence[Finding]) -> bool:
    asserted = {canonical(f) for f in case.findings}
    others = [f for f in MAP["checks"][case.check]["findings"] if canonical(f) not in asserted]
    return all(states(f, ours) for f in case.findings) and not any(states(f, ours) for f in others)


def assert_conforms(case: EvaluatorCase, ours: Sequence[Finding]) -> None:
    assert case.check in MAP["checks"], f"{case.check} is missing from csp_evaluator_map.toml"
    assert set(case.findings) <= set(MAP["checks"][case.check]["findings"]), "a finding the check cannot give"
    notes = "; ".join(note for f in ours for note in f.notes)
    assert tuple(f.outcome for f in ours) == case.ours, notes
    if case.why is None:
        assert agrees(case, ours), f"CSP Evaluator: {case.findings or 'no finding'}; websec: {case.ours} ({notes})"
    else:
        assert not agrees(case, ours), "declared a divergence, but websec agrees: drop `why`"


def params(cases: Iterable[EvaluatorCase]) -> list[Any]:
    return [pytest.param(case, id=f"{case.file}[{case.name}]") for case in cases]
