# Test cases adapted from web-platform-tests (https://github.com/web-platform-tests/wpt, BSD 3-Clause licence:
# tests/conformance/files/wpt.LICENSE).
"""Shared pieces of the web-platform-tests security header suite (docs/conformance.md).

A case is one test of a WPT file: the header lines its server sends (as raw lines, byte for byte), the
expectation the test asserts (wpt_headers_map.toml names it: "nosniff", "blocks-cross-origin" ...), and websec's
exact outcome ids for the header's subject. Every case's lines are answered at their own path of one fixture HTTPS
site and go through websec's real path: the site is scanned once (`fetch_snapshot`), each path is fetched as a
scan fetches its page (`fetch_chain`, through the scan's client, resolver and guard) and checked by
`check_headers` or `check_cross_origin`. A case agrees when every outcome websec gives is among those the map
gives the expectation, and no note says what the map rules out for it; a case with `why` is a documented
divergence and must NOT agree, so no case drifts silently from one kind to the other. `ours=None`: websec's
fetch refuses the response, so nothing is graded (never agreement).
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
from tests.fixtures.sites import Site, SiteFactory, html
from websec_app.scanner.checks.cross_origin import HEADERS as CROSS_ORIGIN_HEADERS
from websec_app.scanner.checks.cross_origin import check_cross_origin
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.fetch import fetch_snapshot
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import SiteSnapshot
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

HERE = Path(__file__).parent
with (HERE / "wpt_headers_map.toml").open("rb") as _fh:
    MAP: dict[str, Any] = tomllib.load(_fh)["expectations"]
_FETCHES_AT_ONCE = 8


@dataclass(frozen=True)
class WptCase:
    file: str  # the WPT file the test is in
    label: str  # the test's name there (or the value it runs)
    subject: str  # the header websec grades
    lines: tuple[bytes, ...]  # the header lines the test's server sends, each without its CRLF
    expected: str  # the expectation the test asserts: a key of wpt_headers_map.toml
    ours: tuple[str, ...] | None  # websec's outcome ids for `subject`; None: its fetch refuses the response
    why: str | None = None  # a documented divergence


@dataclass(frozen=True)
class Answer:
    """What websec made of one case's lines: its outcomes and notes for the subject, or None for each when its
    fetch refused the response."""

    outcomes: tuple[str, ...] | None
    notes: str


def answer_all(site_factory: SiteFactory, settings: Settings, cases: Sequence[WptCase]) -> dict[WptCase, Answer]:
    """Each distinct set of lines answered at its own path of one fixture HTTPS site, fetched and checked as a
    scan does it (see the module's docstring)."""
    paths = {lines: f"/{index}" for index, lines in enumerate(dict.fromkeys(case.lines for case in cases))}
    site = site_factory(
        Site(
            names=(site_factory.unique_host("wpt-headers"),),
            routes={path: html("wpt", headers=list(lines)) for lines, path in paths.items()},
        )
    )
    base = site.url.rstrip("/")
    try:

        async def fetch_all() -> list[SiteSnapshot]:
            scanned = await fetch_snapshot(parse_target(base + "/0"), settings)
            pinner = Pinner(Resolver(settings), settings)
            async with make_client(pinner, settings) as client:

                async def one(path: str) -> SiteSnapshot:
                    page = await fetch_chain(client, pinner, base + path, settings.limits)
                    return replace(scanned, main=page)

                return await fetched((partial(one, path) for path in paths.values()), _FETCHES_AT_ONCE)

        snapshots = dict(zip(paths, asyncio.run(fetch_all()), strict=True))
    finally:
        site.stop()
    return {case: _answer(snapshots[case.lines], case.subject) for case in cases}


def _answer(snapshot: SiteSnapshot, subject: str) -> Answer:
    if snapshot.final is None:
        return Answer(None, "")
    check = check_cross_origin if subject in CROSS_ORIGIN_HEADERS else check_headers
    findings = [f for f in check(snapshot).findings if f.subject == subject]
    return Answer(tuple(f.outcome for f in findings), "; ".join(note for f in findings for note in f.notes))


def agrees(case: WptCase, answer: Answer) -> bool:
    expectation = MAP[case.expected]
    if answer.outcomes is None or not set(answer.outcomes) <= set(expectation["outcomes"]):
        return False
    return not any(words in answer.notes for words in expectation.get("not_in_note", ()))


def assert_conforms(case: WptCase, answer: Answer) -> None:
    assert case.expected in MAP, f"{case.expected} is missing from wpt_headers_map.toml"
    assert answer.outcomes == case.ours, answer.notes
    if case.why is None:
        assert agrees(case, answer), f"WPT: {case.expected} ({MAP[case.expected]}); websec: {answer}"
    else:
        assert not agrees(case, answer), "declared a divergence, but websec agrees: drop `why`"


def params(cases: Iterable[WptCase]) -> list[Any]:
    return [pytest.param(case, id=f"{case.file}[{case.label!r}]") for case in cases]
