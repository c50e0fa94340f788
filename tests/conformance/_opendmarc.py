# Test cases adapted from OpenDMARC's libopendmarc/tests (trusteddomainproject/OpenDMARC), Copyright (c) 2012, The
# Trusted Domain Project. All rights reserved. Used under its BSD-style licence, reproduced in full in
# tests/conformance/files/opendmarc.LICENSE.
"""Shared pieces of the OpenDMARC conformance suite (docs/conformance.md).

OpenDMARC's tests are C programs: each hands a record to opendmarc_policy_parse_dmarc() (or publishes records and
asks opendmarc_policy_query_dmarc() about a domain) and asserts the status it returns, and for some the policy or
percentage it stored. Their records and verdicts are ported as data (test_opendmarc.py). Each case's records are
served by the fixture DNS server (tests/fixtures/dns_server.py), the domain OpenDMARC is asked about is fetched and
checked as a scanned site's host would be (fetch/dns.py, checks/dns.py), and the DMARC findings are compared with
OpenDMARC's verdict through opendmarc_map.toml: the record taken (and its policy, and its pct), discarded as
invalid, or absent, and the tags it ignores. A case agrees when the verdict our outcomes state is OpenDMARC's;
a case with `why` is a documented divergence and must NOT agree, so a case cannot drift from one kind to the other
unnoticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from tests.conformance._dns_world import Ours, settings_for, txt_presentation
from tests.conformance._fetched import fetched
from tests.factories import make_snapshot
from tests.fixtures.dns_server import AuthDnsServer
from websec_app.scanner.checks import dns as dns_check
from websec_app.scanner.fetch import dns as dns_fetch
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.snapshot import DnsSnapshot

HERE = Path(__file__).parent

with (HERE / "opendmarc_map.toml").open("rb") as fh:
    _TABLE = tomllib.load(fh)
VERDICT_OF: dict[str, str] = {
    outcome: verdict for verdict, outcomes in _TABLE["verdicts"].items() for outcome in outcomes
}
STATUS: dict[str, str] = dict(_TABLE["status"])
ADVISORY: frozenset[str] = frozenset(_TABLE["advisory"]["outcomes"])


@dataclass(frozen=True)
class Case:
    name: str  # "parse-5": the C file's test, numbered as its comments number them
    domain: str  # the domain OpenDMARC is asked about; websec scans it as a site's host
    records: dict[str, tuple[str, ...]]  # each name's TXT records, as the test publishes them
    status: str  # what OpenDMARC returns (opendmarc_map.toml [status])
    ours: tuple[str, ...]  # our DMARC outcome ids, in the order the check emits them
    p: str | None = None  # the policy OpenDMARC stores for a record it takes
    pct: int = 100  # the percentage it stores (100 unless the record says otherwise)
    ignored: tuple[str, ...] = ()  # the tags OpenDMARC skips (it knows none of them)
    why: str | None = None  # a documented divergence: why our verdict differs (RFC / receivers' behaviour)


def _serve(server: AuthDnsServer, case: Case) -> None:
    """The case's records, under each top-level zone they and the domain use, so every other name does not exist."""
    for tld in {name.rpartition(".")[2] for name in (case.domain, *case.records)}:
        server.add_zone(tld)
    for name, texts in case.records.items():
        for text in texts:
            server.add(name, "TXT", txt_presentation(text))


def dmarc_findings(domain: str, snapshot: DnsSnapshot) -> Ours:
    """The outcome ids of the dns check's DMARC findings for a site at `domain`, and its DMARC details."""
    result = dns_check.check_dns(make_snapshot(f"https://{domain}/", dns=snapshot))
    outcomes = tuple(
        f.outcome
        for f in result.findings
        if f.outcome.startswith("dns.dmarc_") or (f.outcome == "check.error" and "dmarc" in f.families)
    )
    return Ours(outcomes, dict(result.details.get("dmarc") or {}))


def run_websec(cases: Iterable[Case]) -> dict[str, Ours]:
    """Each case on its own fixture server (its domain's records are its alone), fetched all at once and checked."""
    cases = list(cases)
    with contextlib.ExitStack() as servers:
        settings = []
        for case in cases:
            server = servers.enter_context(AuthDnsServer(tld=None))
            _serve(server, case)
            settings.append(settings_for(server))

        async def fetch_all() -> list[DnsSnapshot]:
            return await fetched(
                partial(dns_fetch.fetch_dns, case.domain, Resolver(s)) for case, s in zip(cases, settings, strict=True)
            )

        snapshots = asyncio.run(fetch_all())
    failed = [
        f"{a.name} {a.rdtype}: {a.rcode}"
        for s in snapshots
        for a in s.answers
        if a.rcode not in ("NOERROR", "NXDOMAIN")
    ]
    assert not failed, f"lookups that failed: {failed}"
    return {case.name: dmarc_findings(case.domain, s) for case, s in zip(cases, snapshots, strict=True)}


def stated(ours: Ours) -> set[str]:
    """The verdicts our outcomes state (advice such as dns.dmarc_report_uri states none)."""
    return {VERDICT_OF[o] for o in ours.outcomes if o not in ADVISORY}


def agrees(case: Case, ours: Ours) -> bool:
    """Our one verdict is OpenDMARC's; for a record it takes, with its policy, percentage and ignored tags."""
    verdict = STATUS[case.status]
    if stated(ours) != {verdict}:
        return False
    if verdict != "accepted":
        return True
    details = ours.details
    return (details["p"], details["pct"], tuple(details["ignored_tags"])) == (case.p, case.pct, case.ignored)


def assert_conforms(case: Case, ours: Ours) -> None:
    unknown = [o for o in ours.outcomes if o not in VERDICT_OF and o not in ADVISORY]
    assert not unknown, f"{unknown} missing from opendmarc_map.toml"
    assert ours.outcomes == case.ours
    if case.why is None:
        assert agrees(case, ours), f"OpenDMARC: {case.status} (p={case.p}); our details: {ours.details}"
    else:
        assert not agrees(case, ours), "declared a divergence, but our verdict is OpenDMARC's: drop `why`"
