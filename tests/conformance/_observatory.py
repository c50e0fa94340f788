# Test cases adapted from Mozilla's http-observatory (httpobs 0.9.3, MPL-2.0,
# https://github.com/mozilla/http-observatory); this file is available under MPL-2.0.
"""Shared pieces of the Observatory conformance suites (docs/conformance.md): httpobs 0.9.3's cases and the MDN
HTTP Observatory's (tests/conformance/_mdn_observatory.py), each with its own mapping table.

Each case is one input an Observatory unit test builds, the result name that test expects, and the
outcome ids websec gives for the same input. The mapping (observatory_map.toml) says which of our
outcomes are equivalent to each Observatory result. A case agrees when the worst of our outcomes
(highest status, then largest deduction, in the default rulebook) is among the equivalent ones; a
case with `why` is a documented divergence and must NOT agree, so a case cannot silently drift from
one kind to the other. Outcomes in the table's [beyond] section (checks the Observatory does not grade)
are read as their stand-in when ranking.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from websec_app.scanner.findings import STATUSES
from websec_app.scanner.rules import default_rulebook

HERE = Path(__file__).parent
HOST = "http-observatory.security.mozilla.org"  # the host every Observatory test scans
URL = f"https://{HOST}/"
NONE = "(none)"  # in the mapping: websec reports nothing for this subject


@dataclass(frozen=True)
class Case:
    test: str  # the Observatory test: "TestContentSecurityPolicy.test_unsafe_inline"
    label: str  # which input of that test
    obs: str  # the result the Observatory test asserts
    given: dict[str, Any]  # the input, as the group's runner reads it (headers, cookies, body, chain...)
    ours: tuple[str, ...]  # our outcome ids for the same subject, in the order the check emits them
    why: str | None = None  # a documented divergence: why our verdict differs (RFC / browser behaviour)


def fixture(name: str) -> str:
    return (HERE / "files" / name).read_text()


def params(cases: Iterable[Case]) -> list[pytest.param]:
    return [pytest.param(case, id=f"{case.test}[{case.label}]") for case in cases]


@dataclass(frozen=True)
class Table:
    """One suite's mapping: each of its result names -> our equivalent outcomes, and the [beyond] stand-ins."""

    results: dict[str, frozenset[str]]
    beyond: dict[str, str]

    @classmethod
    def load(cls, name: str) -> Table:
        with (HERE / name).open("rb") as fh:
            table = tomllib.load(fh)
        return cls({k: frozenset(v) for k, v in table["results"].items()}, table["beyond"])

    def worst(self, outcomes: Sequence[str]) -> set[str]:
        """The outcomes ranked worst: highest status, then largest deduction (BEYOND ones read as their stand-in)."""
        outcomes = [self.beyond.get(o, o) for o in outcomes]
        if not outcomes:
            return {NONE}
        book = default_rulebook()

        def rank(outcome: str) -> tuple[int, int]:
            rule = book.rule(outcome)
            return STATUSES.index(rule.status), rule.deduction or 0

        top = max(rank(o) for o in outcomes)
        return {o for o in outcomes if rank(o) == top}

    def agrees(self, case: Case) -> bool:
        return bool(self.worst(case.ours) & self.results[case.obs])

    def assert_conforms(self, case: Case, actual: Sequence[str]) -> None:
        assert case.obs in self.results, f"{case.obs} is missing from the suite's mapping table"
        assert list(actual) == list(case.ours)
        if case.why is None:
            expected = sorted(self.results[case.obs])
            assert self.agrees(case), f"{case.obs} expects one of {expected}, worst of ours: {self.worst(actual)}"
        else:
            assert not self.agrees(case), "declared a divergence, but our verdict maps to the Observatory's: drop `why`"


HTTPOBS = Table.load("observatory_map.toml")  # httpobs 0.9.3's results


def assert_conforms(case: Case, actual: Sequence[str]) -> None:
    HTTPOBS.assert_conforms(case, actual)
