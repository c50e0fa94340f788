# Test cases adapted from mox (https://github.com/mjl-/mox), Copyright 2021 Mechiel Lukkien. Used under the MIT
# licence, reproduced in full in tests/conformance/files/mox.LICENSE.
"""Shared pieces of the mox MTA-STS and TLS-RPT conformance suite (docs/conformance.md).

mox is a mail server: its packages mtasts and tlsrpt are what it runs as a sender, looking up a recipient domain's
_mta-sts record and fetching its policy (RFC 8461), and its _smtp._tls record (RFC 8460). Their Go tests hand records
and policies to the parsers, answer lookups from a mock resolver and fetch policies from an HTTPS server on a pipe,
and assert what mox makes of them: a record or policy taken (with its mode, max_age and mx patterns), one of mox's
errors (ErrNoRecord, ErrRecordSyntax, ErrPolicyFetch ...), or whether an MX host matches a policy. Here each case
publishes its records on its own fixture DNS server (tests/fixtures/dns_server.py), mock failures as SERVFAIL, and
serves its policy from a loopback HTTPS site (tests/fixtures/sites.py) at mta-sts.<domain>, certified by the test
PKI; the domain is fetched as a scanned site's would be (fetch/dns.py, fetch/mail_policy.py) and checked
(checks/dns.py), and the MTA-STS or TLS-RPT findings are held to mox's result through mox_map.toml. A case agrees
when the one verdict our outcomes state is mox's (for a policy taken, with its mode, max_age and mx); a case with
`why` is a documented divergence and must NOT agree, so a case cannot drift from one kind to the other unnoticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.clock import TEST_NOW
from tests.conformance._dns_world import Ours, settings_for, txt_presentation
from tests.conformance._fetched import fetched
from tests.factories import make_snapshot
from tests.fixtures.dns_server import AuthDnsServer, inject_faults
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, RunningSite, Site, SiteServer, TlsConfig
from websec_app.scanner.checks import dns as dns_check
from websec_app.scanner.fetch import dns as dns_fetch
from websec_app.scanner.fetch.http import make_client
from websec_app.scanner.fetch.mail_policy import fetch_mta_sts
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import SiteSnapshot
from websec_app.settings import Settings

HERE = Path(__file__).parent

with (HERE / "mox_map.toml").open("rb") as fh:
    _TABLE = tomllib.load(fh)
VERDICT_OF: dict[str, str] = {
    outcome: verdict for verdict, outcomes in _TABLE["verdicts"].items() for outcome in outcomes
}
RESULT: dict[str, str] = dict(_TABLE["results"])
#: The outcome of a policy in mode none (MTA-STS switched off): it states a policy taken when the details hold one.
MODE_NONE: str = _TABLE["mode_none"]["outcome"]

_POLICY_PATH = "/.well-known/mta-sts.txt"

Protocol = Literal["mta-sts", "tls-rpt"]


@dataclass(frozen=True)
class Served:
    """What https://mta-sts.<domain>/.well-known/mta-sts.txt answers."""

    body: str | bytes
    status: int = 200
    content_type: str = "text/plain"
    cert: str = "valid"  # a tests/fixtures/pki.py CertKind
    cert_names: tuple[str, ...] | None = None  # the names the certificate holds (default: the policy host)
    location: str | None = None  # mox's TestFetch server adds "Location: /other" to every answer


@dataclass(frozen=True)
class Case:
    name: str  # "sts-record-5": the package, the Go test, the call's number in it
    protocol: Protocol
    domain: str  # the recipient domain mox looks up; websec scans it as a site's host
    #: (name, type, value): a TXT value as its text (a tuple: its character-strings), others in presentation form
    records: tuple[tuple[str, str, str | tuple[str, ...]], ...]
    mox: str  # mox's result (mox_map.toml [results])
    ours: tuple[str, ...]  # our outcome ids of the protocol, in the order the check emits them
    served: Served | None = None  # the policy file, when the case serves one
    failing: tuple[str, ...] = ()  # the names whose TXT lookup the resolver fails (mox's MockResolver.Fail)
    policy: tuple[str, int, tuple[str, ...]] | None = None  # a policy mox takes: (mode, max_age, mx patterns)
    why: str | None = None  # a documented divergence: why our verdict differs (RFC / senders' behaviour)


def _txt(value: str | tuple[str, ...]) -> str:
    """One TXT record, of one string or of the strings given."""
    return txt_presentation(*((value,) if isinstance(value, str) else value))


def _top_level(name: str) -> str:
    return name.rstrip(".").rpartition(".")[2]


def _serve_records(server: AuthDnsServer, case: Case, policy_ip: str | None) -> None:
    """The case's records, under each top-level zone its names and targets use, so every other name does not
    exist; the policy host's address when a policy is served."""
    names = [case.domain, *(name for name, _, _ in case.records)]
    names += [value.split()[-1] for _, rdtype, value in case.records if isinstance(value, str) and rdtype != "TXT"]
    for tld in {_top_level(name) for name in names}:
        server.add_zone(tld)
    for name, rdtype, value in case.records:
        server.add(name, rdtype, _txt(value) if rdtype == "TXT" else str(value))
    if policy_ip is not None:
        server.set(f"mta-sts.{case.domain}", "A", policy_ip)


def _site(case: Case, served: Served) -> Site:
    headers = [("Content-Type", served.content_type)] if served.content_type else []
    if served.location is not None:
        headers.append(("Location", served.location))
    host = f"mta-sts.{case.domain}"
    return Site(
        names=(host,),
        routes={_POLICY_PATH: Response(served.status, headers, served.body)},
        tls=TlsConfig(cert=served.cert, cert_names=served.cert_names),
    )


@contextlib.contextmanager
def policy_sites(site_server: SiteServer, cases: Iterable[Case]) -> Iterator[dict[str, RunningSite]]:
    """One loopback HTTPS site for each policy host and what it serves (cases that serve the same share it),
    stopped on exit: {case name: its site}."""
    started: dict[tuple[str, Served], RunningSite] = {}
    try:
        sites = {}
        for case in cases:
            if case.served is None:
                continue
            key = (case.domain, case.served)
            if key not in started:
                started[key] = site_server.start(_site(case, case.served))
            sites[case.name] = started[key]
        yield sites
    finally:
        for site in started.values():
            site.stop()


async def _fetch(domain: str, settings: Settings) -> SiteSnapshot:
    """The domain's DNS and MTA-STS policy, fetched as a scan of a site at `domain` fetches them."""
    resolver = Resolver(settings)
    pinner = Pinner(resolver, settings)
    async with make_client(pinner, settings) as client:
        snapshot, (policy, handshake) = await asyncio.gather(
            dns_fetch.fetch_dns(domain, resolver), fetch_mta_sts(domain, resolver, pinner, client, settings)
        )
    return make_snapshot(
        f"https://{domain}/", dns=snapshot, mta_sts_policy=policy, mta_sts_tls=handshake, fetched_at=TEST_NOW
    )


_PREFIX = {"mta-sts": "dns.mta_sts_", "tls-rpt": "dns.tlsrpt_"}
_FAMILY = {"mta-sts": "mta_sts", "tls-rpt": "tls_rpt"}


def findings(case: Case, snapshot: SiteSnapshot) -> Ours:
    """The outcome ids of the dns check's findings of the case's protocol, and its details."""
    result = dns_check.check_dns(snapshot)
    prefix, family = _PREFIX[case.protocol], _FAMILY[case.protocol]
    outcomes = tuple(
        f.outcome
        for f in result.findings
        if f.outcome.startswith(prefix) or (f.outcome == "check.error" and family in f.families)
    )
    return Ours(outcomes, dict(result.details.get(family) or {}))


def run_websec(cases: Iterable[Case], site_server: SiteServer, pki: Pki) -> dict[str, Ours]:
    """Each case on its own fixture DNS server (its domain's records are its alone), with its policy site; all
    fetched at once, then checked."""
    cases = list(cases)
    with contextlib.ExitStack() as stack:
        sites = stack.enter_context(policy_sites(site_server, cases))
        patches = stack.enter_context(pytest.MonkeyPatch.context())
        settings = []
        for case in cases:
            server = stack.enter_context(AuthDnsServer(tld=None))
            site = sites.get(case.name)
            _serve_records(server, case, site.ip if site is not None else None)
            if case.failing:
                inject_faults(server, patches).update({(name, "TXT"): "servfail" for name in case.failing})
            settings.append(settings_for(server, ca_bundle=Path(pki.ca_bundle_path)))

        async def fetch_all() -> list[SiteSnapshot]:
            return await fetched(partial(_fetch, c.domain, s) for c, s in zip(cases, settings, strict=True))

        snapshots = asyncio.run(fetch_all())
    for case, snapshot in zip(cases, snapshots, strict=True):
        failed = {a.name for a in snapshot.dns.answers if a.rcode not in ("NOERROR", "NXDOMAIN")}
        assert failed <= set(case.failing), f"{case.name}: lookups that failed: {sorted(failed)}"
    return {case.name: findings(case, snapshot) for case, snapshot in zip(cases, snapshots, strict=True)}


def _policy(ours: Ours) -> dict[str, Any]:
    return dict(ours.details.get("policy") or {})


def stated(ours: Ours) -> set[str]:
    """The verdicts our outcomes state: a policy in mode none is one taken, though reported as MTA-STS missing."""
    return {
        "policy" if o == MODE_NONE and _policy(ours).get("mode") == "none" else VERDICT_OF[o] for o in ours.outcomes
    }


def agrees(case: Case, ours: Ours) -> bool:
    """Our one verdict is mox's; for an MTA-STS policy mox takes, with its mode, max_age and mx patterns."""
    verdict = RESULT[case.mox]
    if stated(ours) != {verdict}:
        return False
    if verdict != "policy" or case.protocol != "mta-sts":
        return True
    policy = _policy(ours)
    return (policy.get("mode"), policy.get("max_age"), tuple(policy.get("mx") or ())) == case.policy


def assert_conforms(case: Case, ours: Ours) -> None:
    unknown = [o for o in ours.outcomes if o not in VERDICT_OF]
    assert not unknown, f"{unknown} missing from mox_map.toml"
    assert ours.outcomes == case.ours
    if case.why is None:
        assert agrees(case, ours), f"mox: {case.mox} {case.policy or ''}; our details: {ours.details}"
    else:
        assert not agrees(case, ours), "declared a divergence, but our verdict is mox's: drop `why`"
