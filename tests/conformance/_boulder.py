# Test cases adapted from Let's Encrypt's Boulder (va/caa_test.go, MPL-2.0, https://github.com/letsencrypt/boulder);
# this file is available under MPL-2.0.
"""Shared pieces of the Boulder CAA conformance suite (docs/conformance.md).

Boulder's va/caa_test.go answers CAA queries from a mock resolver (caaMockDNS: one RRset per test domain, an error
for a few) and asserts whether Let's Encrypt may issue for an identifier, for an ACME account (123, under the prefix
https://letsencrypt.org/acct/reg/) validating with a method (http-01); its unit tests feed records and parameters to
filterCAA, parseCAARecord, caaAccountURIMatches and caaValidationMethodMatches. Here every case's records are served
by one fixture DNS server (tests/fixtures/dns_server.py), as the mock is one namespace, its errors as SERVFAIL
answers; the identifier's host (a wildcard's base name, as checkCAARecords strips "*.") is fetched and checked as a
scanned site's would be (fetch/dns.py, checks/dns.py), and the CAA finding is held to Boulder's verdict through
boulder_map.toml: Let's Encrypt may issue, may not, or the check could not be made. websec is not a CA: what must
agree is what its finding tells the owner, so the finding's note is read for the CAs it says may issue, with the
parameters it states for each (RFC 8657's validationmethods and accounturi), and the case's request is held to them.
A case agrees when that reading gives Boulder's verdict; a case with `why` is a documented divergence and must NOT
agree, so a case cannot drift from one kind to the other unnoticed.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import dns.rdataclass
import dns.rdatatype
import pytest
from dns.rdtypes.ANY.CAA import CAA

from tests.conformance._dns_world import settings_for
from tests.conformance._fetched import fetched
from tests.factories import make_snapshot
from tests.fixtures.dns_server import AuthDnsServer, inject_faults
from websec_app.scanner.checks import dns as dns_check
from websec_app.scanner.fetch import dns as dns_fetch
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.findings import Finding
from websec_app.scanner.snapshot import DnsSnapshot

HERE = Path(__file__).parent

with (HERE / "boulder_map.toml").open("rb") as fh:
    _TABLE = tomllib.load(fh)
_KIND_OF: dict[str, str] = {outcome: kind for kind, outcomes in _TABLE["outcomes"].items() for outcome in outcomes}
ISSUER: str = _TABLE["request"]["issuer_domain"]
ACCOUNT_URI: str = _TABLE["request"]["account_uri"]
METHOD: str = _TABLE["request"]["method"]


@dataclass(frozen=True)
class Case:
    name: str  # "checking-present.com": the Go test function's table, and the case's domain or name
    identifier: str  # what Boulder is asked to issue for ("*.x.com": a wildcard certificate of x.com)
    records: dict[str, tuple[str, ...]]  # each name's CAA records, in presentation format (caa() builds them)
    verdict: str  # Boulder's: "issue" (Let's Encrypt may issue), "refuse", or "error" (the lookup failed)
    ours: tuple[str, ...]  # our CAA outcome ids, in the order the check emits them
    servfail: tuple[str, ...] = ()  # the names whose CAA lookup the mock fails (answered SERVFAIL here)
    method: str = METHOD  # the ACME validation method of the request
    account_uris: tuple[str, ...] = (ACCOUNT_URI,)  # the URIs naming the request's account (one per prefix)
    critical: bool | None = None  # filterCAA's criticalUnknown, for its cases: a flag stops CAs
    malformed: bool | None = None  # parseCAARecord's error, for its cases: the value follows no grammar
    found_at: str | None = None  # TestCAAChecking's FoundAt: where the relevant RRset is ("": none up to the TLD)
    why: str | None = None  # a documented divergence: why our verdict differs (RFC / Boulder's own choice)

    @property
    def host(self) -> str:
        return self.identifier.removeprefix("*.")

    @property
    def wildcard(self) -> bool:
        return self.identifier.startswith("*.")


def caa(value: str | bytes, tag: str = "issue", flags: int = 0) -> str:
    """One CAA record in presentation format, its value's quotes, tabs and non-ASCII bytes escaped by dnspython."""
    raw = value.encode() if isinstance(value, str) else value
    return CAA(dns.rdataclass.IN, dns.rdatatype.CAA, flags, tag.encode(), raw).to_text()


def caa_findings(host: str, snapshot: DnsSnapshot) -> list[Finding]:
    """The dns check's CAA findings for a site at `host`: dns.caa_* and a check.error of a failed CAA lookup."""
    result = dns_check.check_dns(make_snapshot(f"https://{host}/", dns=snapshot))
    return [
        f
        for f in result.findings
        if f.outcome.startswith("dns.caa_") or (f.outcome == "check.error" and f.subject.endswith(" CAA"))
    ]


def run_websec(cases: Iterable[Case]) -> dict[str, list[Finding]]:
    """All cases' records on one fixture server (Boulder's mock is one namespace), each host fetched and checked."""
    cases = list(cases)
    with AuthDnsServer(tld=None) as server, pytest.MonkeyPatch.context() as patch:
        names = {name for case in cases for name in (case.host, *case.records, *case.servfail)}
        for tld in {name.rpartition(".")[2] for name in names}:
            server.add_zone(tld)
        for case in cases:
            for name, records in case.records.items():
                server.set(name, "CAA", *records)
        faults = inject_faults(server, patch)
        faults.update({(name, "CAA"): "servfail" for case in cases for name in case.servfail})
        settings = settings_for(server)

        async def fetch_all() -> dict[str, DnsSnapshot]:
            hosts = sorted({case.host for case in cases})
            snapshots = await fetched(partial(dns_fetch.fetch_dns, host, Resolver(settings)) for host in hosts)
            return dict(zip(hosts, snapshots, strict=True))

        snapshots = asyncio.run(fetch_all())
    return {case.name: caa_findings(case.host, snapshots[case.host]) for case in cases}


# -- what a finding tells the owner ---------------------------------------------------------------------------

#: One CA the note names: its domain name, then its parameters in brackets ("letsencrypt.org (validationmethods=
#: dns-01; accounturi=...)"); a parameter value holds no ";", no space and, in these cases, no ")".
_NAMED_CA = re.compile(r"([A-Za-z0-9.-]+)(?: \(([^)]*)\))?")


def _ca_list(note: str, heading: str) -> list[tuple[str, dict[str, list[str]]]] | None:
    """The CAs of the note's list after `heading` ("none": no CA), each with its parameters' values by tag; None
    when the note has no such list."""
    start = note.find(heading)
    if start < 0:
        return None
    position = start + len(heading)
    if note.startswith("none", position):
        return []
    named = []
    while match := _NAMED_CA.match(note, position):
        parameters: dict[str, list[str]] = {}
        for parameter in filter(None, (match.group(2) or "").split("; ")):
            tag, _, value = parameter.partition("=")
            parameters.setdefault(tag, []).append(value)
        named.append((match.group(1), parameters))
        position = match.end()
        if not note.startswith(", ", position):
            break
        position += 2
    return named


def stated_cas(finding: Finding, wildcard: bool) -> list[tuple[str, dict[str, list[str]]]] | None:
    """The CAs the finding says may issue the certificate (a wildcard one: `wildcard`), None for any CA."""
    note = finding.note or ""
    kind = _KIND_OF[finding.outcome]
    wild = _ca_list(note, "wildcard certificates: ") if wildcard else None
    if wild is not None:  # RFC 8659 4.3: issuewild records replace the issue records for a wildcard
        return wild
    if kind == "unrestricted":
        return None
    if kind == "issuers":
        return _ca_list(note, "issuers ") or []
    return _ca_list(note, "CAs the issue records let issue: ") or []


def _allows(case: Case, parameters: dict[str, list[str]]) -> bool:
    """The request meets every method list and every account the note states for the CA (RFC 8657 3, 4)."""
    methods_ok = all(case.method in listed.split(",") for listed in parameters.get("validationmethods", []))
    return methods_ok and all(uri in case.account_uris for uri in parameters.get("accounturi", []))


def our_verdict(case: Case, findings: list[Finding]) -> str:
    """Boulder's verdict as our findings state it for the case's request (boulder_map.toml)."""
    if [f.outcome for f in findings] == ["check.error"]:
        return "error"
    (finding,) = findings
    cas = stated_cas(finding, case.wildcard)
    if cas is None:
        return "issue"
    return "issue" if any(ca == ISSUER and _allows(case, p) for ca, p in cas) else "refuse"


_CRITICAL_STOP = re.compile(r"critical tag|flags \d+ on tag")


def agrees(case: Case, findings: list[Finding]) -> bool:
    if our_verdict(case, findings) != case.verdict:
        return False
    note = findings[0].note or ""
    if case.found_at is not None and not note.startswith(f"at {case.found_at}" if case.found_at else "no CAA record"):
        return False
    if case.critical is not None and bool(_CRITICAL_STOP.search(note)) != case.critical:
        return False
    return case.malformed is None or (findings[0].outcome == "dns.caa_invalid") == case.malformed


def assert_conforms(case: Case, findings: list[Finding]) -> None:
    outcomes = tuple(f.outcome for f in findings)
    unknown = [o for o in outcomes if o not in _KIND_OF]
    assert not unknown, f"{unknown} missing from boulder_map.toml"
    assert outcomes == case.ours, [f.note for f in findings]
    notes = [f.note for f in findings]
    if case.why is None:
        assert agrees(case, findings), f"Boulder: {case.verdict}; ours: {our_verdict(case, findings)}: {notes}"
    else:
        assert not agrees(case, findings), f"declared a divergence, but our verdict is Boulder's: drop `why`: {notes}"
