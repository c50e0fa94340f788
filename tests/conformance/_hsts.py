# Test cases adapted from Chromium's net/http/http_security_headers_unittest.cc (Copyright 2012 The Chromium
# Authors, BSD-style licence: tests/conformance/files/chromium.LICENSE) and from chromium/hstspreload's
# header_test.go (Copyright The Chromium Authors, BSD 3-clause licence, https://github.com/chromium/hstspreload).
"""Shared pieces of the HSTS conformance suites (docs/conformance.md): Chromium's Strict-Transport-Security parser
tests (test_chromium_hsts.py) and hstspreload.org's header tests (test_hstspreload.py).

Every case's header value is answered by a fixture HTTPS site (one path a case) and goes through websec's real
path: the scan's fetch (`answer_all`), then `check_headers`. Each case gives websec's exact outcome
ids for the Strict-Transport-Security subject; hsts_map.toml says which of them state each peer verdict.

- A Chromium case is what `ParseHSTSHeader` returns for the value: false (rejected), or true with a max-age and
  includeSubDomains. It agrees when websec's outcomes are among those the map gives that verdict (with the ones it
  requires) and websec reads the same max-age (clamped to Chromium's one year, kMaxHSTSAgeSecs) and
  includeSubDomains from the fetched value.
- An hstspreload case is the issue codes (errors, warnings) hstspreload's `ParseHeaderString` /
  `PreloadableHeaderString` give the value. It agrees when websec tells the same preload eligibility (its note
  "preload is requested; submit the domain at hstspreload.org" exactly when hstspreload finds no error) and states
  every issue the map gives a statement for (an outcome, or words in the note).

A case with `why` is a documented divergence and must NOT agree, so no case drifts silently from one kind to the
other.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.conformance._fetched import fetched
from tests.fixtures.sites import RunningSite, Site, SiteFactory, html
from websec_app.scanner.checks.headers import HSTS, check_headers
from websec_app.scanner.fetch import fetch_snapshot
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.records.header_values import parse_hsts
from websec_app.scanner.snapshot import SiteSnapshot
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

HERE = Path(__file__).parent
with (HERE / "hsts_map.toml").open("rb") as _fh:
    MAP: dict[str, Any] = tomllib.load(_fh)
#: Chromium's kMaxHSTSAgeSecs (net/http/http_security_headers.h): it keeps at most one year of any max-age.
CHROMIUM_MAX_AGE = 86400 * 365
#: hstspreload's hstsMinimumMaxAge (header.go), the max-age a new submission needs
PRELOAD_MIN_MAX_AGE = 86400 * 365
ELIGIBLE_NOTE = "preload is requested; submit the domain at hstspreload.org"
_FETCHES_AT_ONCE = 8


@dataclass(frozen=True)
class Answer:
    """What websec made of one case's header, through the fetch and the check."""

    value: str | None  # the first Strict-Transport-Security value of the fetched page (None: none arrived)
    outcomes: tuple[str, ...]
    note: str


def answer_all(site_factory: SiteFactory, settings: Settings, values: Sequence[str]) -> dict[str, Answer]:
    """Each value answered at its own path of one fixture HTTPS site, fetched and checked as a scan does it.

    The site is scanned once (`fetch_snapshot`: its TLS handshake, which the check holds the header to, and the
    scan's clock); then each path's page is fetched as a scan fetches its page (`fetch_chain`, through the scan's
    client, resolver and guard) and checked in that snapshot in place of the first page.
    """
    paths = {value: f"/{index}" for index, value in enumerate(dict.fromkeys(values))}
    site = site_factory(
        Site(
            names=(site_factory.unique_host("hsts-conformance"),),
            routes={path: html("hsts", headers=[(HSTS, value)]) for value, path in paths.items()},
        )
    )
    try:

        async def fetch_all() -> list[SiteSnapshot]:
            scanned = await fetch_snapshot(parse_target(_url(site, "/0")), settings)
            pinner = Pinner(Resolver(settings), settings)
            async with make_client(pinner, settings) as client:

                async def one(path: str) -> SiteSnapshot:
                    page = await fetch_chain(client, pinner, _url(site, path), settings.limits, raise_on_first_hop=True)
                    return replace(scanned, main=page)

                return await fetched((partial(one, path) for path in paths.values()), _FETCHES_AT_ONCE)

        snapshots = asyncio.run(fetch_all())
    finally:
        site.stop()
    return {value: _answer(snapshot) for value, snapshot in zip(paths, snapshots, strict=True)}


def _answer(snapshot: SiteSnapshot) -> Answer:
    findings = [f for f in check_headers(snapshot).findings if f.subject == HSTS]
    sent = snapshot.final.headers.get_all(HSTS) if snapshot.final is not None else []
    notes = "; ".join(note for f in findings for note in f.notes)
    return Answer(sent[0] if sent else None, tuple(f.outcome for f in findings), notes)


def _url(site: RunningSite, path: str) -> str:
    return site.url.rstrip("/") + path


# --- Chromium's ParseHSTSHeader ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChromiumCase:
    test: str  # the TEST_F of http_security_headers_unittest.cc
    label: str  # which value of that test
    value: str  # the header value, as the test passes it to ParseHSTSHeader
    accepted: bool  # what ParseHSTSHeader returns
    ours: tuple[str, ...]  # websec's outcome ids for the Strict-Transport-Security subject, in order
    max_age: int | None = None  # the max-age it sets (clamped to a year); None: rejected, or the test asserts none
    include_subdomains: bool = False
    why: str | None = None  # a documented divergence


def chromium_result(case: ChromiumCase) -> str:
    """The map's name for what Chromium does with the value."""
    if not case.accepted:
        return "rejected"
    if case.max_age == 0:
        return "forgets"  # accepted with max-age 0: the host's dynamic entry is deleted
    return "kept-with-subdomains" if case.include_subdomains else "kept"


def chromium_agrees(case: ChromiumCase, answer: Answer) -> bool:
    verdict = MAP["chromium"][chromium_result(case)]
    if not set(answer.outcomes) <= set(verdict["outcomes"]) or not set(verdict.get("required", ())) <= set(
        answer.outcomes
    ):
        return False
    if not case.accepted:
        return True
    policy = parse_hsts(answer.value or "")
    if policy.error is not None or policy.max_age is None or policy.include_subdomains != case.include_subdomains:
        return False
    return case.max_age is None or min(policy.max_age, CHROMIUM_MAX_AGE) == case.max_age


def assert_chromium_conforms(case: ChromiumCase, answer: Answer) -> None:
    assert list(answer.outcomes) == list(case.ours)
    if case.why is None:
        assert chromium_agrees(case, answer), f"Chromium {chromium_result(case)}; websec: {answer}"
    else:
        assert not chromium_agrees(case, answer), "declared a divergence, but websec agrees: drop `why`"


# --- hstspreload's ParseHeaderString / PreloadableHeaderString -----------------------------------------------------


@dataclass(frozen=True)
class PreloadCase:
    test: str  # the Go test function of header_test.go
    label: str  # the test's description of the value
    value: str
    errors: tuple[str, ...]  # the issue codes it expects
    warnings: tuple[str, ...]
    ours: tuple[str, ...]
    #: TestParseHeaderString's expected HSTSHeader (max-age or None, includeSubDomains, preload); those tests assert
    #: the parse alone, so eligibility is PreloadableHeader's verdict on it. None: the test asserts every issue.
    parsed: tuple[int | None, bool, bool] | None = None
    why: str | None = None


def preload_eligible(case: PreloadCase) -> bool:
    """Whether hstspreload.org takes the header for the preload list (bulk-1-year: new submissions)."""
    if case.errors:
        return False
    if case.parsed is None:
        return True
    max_age, include_subdomains, preload = case.parsed
    return include_subdomains and preload and max_age is not None and max_age >= PRELOAD_MIN_MAX_AGE


def states(code: str, answer: Answer) -> bool | None:
    """Whether websec's answer states the issue `code`; None: the map names no outcome or note for it (it is held by
    the eligibility alone, or websec does not state it: docs/conformance.md says why)."""
    statement = MAP["hstspreload"][code]
    ways = [
        *(("outcome", o) for o in statement.get("outcomes", ())),
        *(("note", n) for n in statement.get("notes", ())),
    ]
    if not ways:
        return None
    return any(o in answer.outcomes if kind == "outcome" else o in answer.note for kind, o in ways)


def preload_agrees(case: PreloadCase, answer: Answer) -> bool:
    if (ELIGIBLE_NOTE in answer.note) != preload_eligible(case):
        return False
    return all(states(code, answer) is not False for code in (*case.errors, *case.warnings))


def assert_preload_conforms(case: PreloadCase, answer: Answer) -> None:
    for code in (*case.errors, *case.warnings):
        assert code in MAP["hstspreload"], f"{code} is missing from hsts_map.toml"
    assert list(answer.outcomes) == list(case.ours)
    if case.why is None:
        unstated = [c for c in (*case.errors, *case.warnings) if states(c, answer) is False]
        assert preload_agrees(case, answer), (
            f"eligible: hstspreload {preload_eligible(case)}, websec {ELIGIBLE_NOTE in answer.note}; "
            f"unstated: {unstated}; note: {answer.note!r}"
        )
    else:
        assert not preload_agrees(case, answer), "declared a divergence, but websec agrees: drop `why`"


def params(cases: Iterable[ChromiumCase | PreloadCase]) -> list[Any]:
    return [pytest.param(case, id=f"{case.test}[{case.label}]") for case in cases]
