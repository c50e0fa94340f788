# Test cases adapted from the RFC 7208 test suite (openspf.org release 2014.04, rfc7208-tests.yml as shipped in
# pyspf 2.0.14), (C) 2006-2008 Stuart D Gathman, 2007-2008 Julian Mehnle, 2014 Scott Kitterman. All rights
# reserved. Used under its BSD licence, reproduced in full in tests/conformance/files/rfc7208-tests.LICENSE.
"""Shared pieces of the RFC 7208 conformance suite (docs/conformance.md).

The suite (files/rfc7208-tests.yml, unchanged) is a list of scenarios: DNS zone data, and tests that each ask
check_host() about one sender (an IP address, MAIL FROM, HELO) and name the result it must return. websec does not
run check_host() for a sender: its dns check judges a domain's SPF record as receivers evaluate it for any sender.
So each scenario's zone is served by the fixture DNS server (tests/fixtures/dns_server.py), the domain each test
asks about is fetched and checked as a scanned site's domain would be (fetch/dns.py, checks/dns.py), and the SPF
findings are compared with the test's result through rfc7208_map.toml.

websec states one verdict for a record: the result a sender it does not name gets (or permerror, temperror, none),
and pass when a whole address family passes (+all, ip4:0.0.0.0/0, a/0 of a name with an address, exists of a name
that exists). A case is held to the suite's result when that result is this verdict. When the result is the test
sender's own (a mechanism names it, its HELO name decides, or other senders pass wholesale where it does not: the
case's `sender` says which), websec is only held to evaluating the record: a verdict, no error. A case agrees when
every result our outcomes state is one it is held to; a case with `why` is a documented divergence and must NOT
agree, so a case cannot drift from one kind to the other unnoticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import dns.rdataclass
import dns.rdatatype
import pytest
import yaml
from dns.rdtypes.ANY.TXT import TXT

from tests.conformance._dns_world import settings_for
from tests.conformance._fetched import fetched
from tests.factories import make_snapshot
from tests.fixtures.dns_server import AuthDnsServer, inject_faults
from websec_app.scanner.checks import dns as dns_check
from websec_app.scanner.fetch import dns as dns_fetch
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.snapshot import DnsSnapshot
from websec_app.settings import Settings

HERE = Path(__file__).parent
SUITE = HERE / "files" / "rfc7208-tests.yml"

with (HERE / "rfc7208_map.toml").open("rb") as fh:
    _TABLE = tomllib.load(fh)
MAPPING: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in _TABLE["results"].items()}
ADVISORY: frozenset[str] = frozenset(_TABLE["advisory"]["outcomes"])
#: The results of a record evaluated to the end: what a case that is about its sender alone is held to.
EVALUATED = frozenset(("pass", "fail", "softfail", "neutral"))
RESULT_OF: dict[str, str] = {outcome: result for result, outcomes in MAPPING.items() for outcome in outcomes}

#: Every type the scan asks: a name whose zone data says TIMEOUT drops the queries of each type it holds no
#: record of before that mark, as the suite's driver (pyspf's testspf.py) raises a DNS timeout for them.
_TYPES_ASKED = ("A", "AAAA", "CNAME", "CAA", "TXT", "SPF", "MX", "SOA", "NS", "DNSKEY", "DS", "NSEC3PARAM", "PTR")


@dataclass(frozen=True)
class SuiteTest:
    section: str  # the scenario's description: "A mechanism syntax"
    name: str  # "a-cidr4-0"
    domain: str  # what check_host() is asked about: MAIL FROM's domain, HELO's when MAIL FROM is empty (2.4)
    host: str  # the sender's address
    results: tuple[str, ...]  # the results the test accepts (usually one)


@dataclass(frozen=True)
class Case:
    name: str  # the suite's test
    ours: tuple[str, ...]  # our SPF outcome ids for its domain, in the order the check emits them
    sender: str | None = None  # the result is the test sender's own: why (websec then only evaluates the record)
    why: str | None = None  # a documented divergence: why our verdict differs (RFC / receivers' behaviour)
    #: the outcomes of `ours` that state the result of the other address family's senders than the test's (their
    #: notes say "for IPv6 senders"): receivers count a sender's own void lookups and lookups (RFC 7208 4.6.4), so
    #: the families can end apart; the test's sender gets the others
    other_family: tuple[str, ...] = ()


def load_suite() -> list[dict[str, Any]]:
    with SUITE.open(encoding="utf-8") as fh:
        return list(yaml.safe_load_all(fh))


def suite_tests(scenarios: Iterable[dict[str, Any]]) -> dict[str, SuiteTest]:
    tests = {}
    for scenario in scenarios:
        for name, test in scenario["tests"].items():
            mailfrom = test.get("mailfrom") or ""
            domain = mailfrom.rpartition("@")[2] if mailfrom else test["helo"]
            result = test["result"]
            results = tuple(result) if isinstance(result, list) else (result,)
            tests[name] = SuiteTest(scenario["description"], name, domain.lower(), str(test["host"]), results)
    return tests


def _presentation(rdtype: str, value: Any) -> str:
    """A record of the zone data in presentation format, as the driver hands it to pyspf (text as UTF-8)."""
    if rdtype in ("TXT", "SPF"):
        strings = [value] if isinstance(value, str) else list(value)
        # null-text's "SPF: []" is a record of no strings, which no DNS server can carry (dnspython refuses it, a
        # TXT RDATA holds at least one string, RFC 1035 3.3.14): one empty string is the closest, and as little SPF
        return TXT(dns.rdataclass.IN, dns.rdatatype.TXT, [s.encode() for s in strings] or [b""]).to_text()
    if rdtype == "MX":
        preference, exchange = value
        return f"{preference} {exchange.rstrip('.') + '.' if exchange else '.'}"  # "": the root, a null MX
    if rdtype in ("CNAME", "PTR"):
        return f"{value.rstrip('.')}."
    return str(value)


def load_zone(server: AuthDnsServer, zonedata: dict[str, list[Any]]) -> dict[tuple[str, str], str]:
    """Publish a scenario's zone data on `server` as the suite's driver reads it; returns the lookups to drop.

    Each name's records as listed, but "NONE" (a type that has no record); a name with no TXT record gets one
    copy of each of its SPF (type 99) records as TXT ("auto-magic duplication", the suite's header). "TIMEOUT"
    makes each query of a type that no record before it holds time out."""
    for tld in {name.rstrip(".").rpartition(".")[2].lower() for name in zonedata} | {"com", "net", "org"}:
        server.add_zone(tld)  # so that a name the data does not hold does not exist, as for the driver
    drops: dict[tuple[str, str], str] = {}
    for name, entries in zonedata.items():
        copy_spf = not any(isinstance(entry, dict) and "TXT" in entry for entry in entries)
        copies, answered = [], set()
        for entry in entries:
            if entry == "TIMEOUT":
                drops.update({(name.lower(), rdtype): "drop" for rdtype in _TYPES_ASKED if rdtype not in answered})
                break
            ((rdtype, value),) = entry.items()
            if rdtype == "SPF" and copy_spf:
                copies.append(value)
            if value != "NONE":
                server.add(name, rdtype, _presentation(rdtype, value))
                answered.add(rdtype)
        else:  # the copies come after every listed record, so after a TIMEOUT mark none is answered
            for value in copies:
                server.add(name, "TXT", _presentation("TXT", value))
    return drops


def _itself(host: str) -> str:
    return host


@contextlib.contextmanager
def _domains_as_sites() -> Iterator[pytest.MonkeyPatch]:
    """The domain a test asks about (e1.example.com) stands for a scanned site's registrable domain: the dns fetch
    and check read SPF at the registrable domain of the host they are given, which here is that domain itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dns_fetch, "registrable_domain", _itself)
        patch.setattr(dns_check, "registrable_domain", _itself)
        yield patch


#: How a finding's note says it concerns one address family's senders alone
_FOR_FAMILY = re.compile(r"\(for (IPv4|IPv6) senders")


def spf_outcomes(domain: str, snapshot: DnsSnapshot) -> tuple[tuple[str, str | None], ...]:
    """The outcome ids of the dns check's SPF findings for `domain` (not DKIM's, which also name spf), each with the
    address family its note says it is for alone (None: every sender)."""
    findings = dns_check.check_dns(make_snapshot(f"https://{domain}/", dns=snapshot)).findings
    return tuple(
        (f.outcome, match[1] if (match := _FOR_FAMILY.search(f.note or "")) else None)
        for f in findings
        if f.outcome.startswith("dns.spf_") or (f.outcome == "check.error" and "spf" in f.families)
    )


def run_websec(
    scenarios: list[dict[str, Any]], tests: dict[str, SuiteTest]
) -> dict[str, tuple[tuple[str, str | None], ...]]:
    """Each test's SPF outcomes: every scenario's zone on its own fixture server, each domain a test asks about
    fetched once (all at once, so the dropped lookups are waited for together) and checked."""
    with _domains_as_sites() as patch, contextlib.ExitStack() as servers:
        fetches: list[tuple[str, str, Settings]] = []  # (section, domain, settings)
        drops: dict[str, set[tuple[str, str]]] = {}  # each section's dropped lookups
        for scenario in scenarios:
            section = scenario["description"]
            server = servers.enter_context(AuthDnsServer(tld=None))
            faults = inject_faults(server, patch)
            faults.update(load_zone(server, scenario["zonedata"]))
            drops[section] = set(faults)
            domains = sorted({t.domain for t in tests.values() if t.section == section})
            fetches += [(section, domain, settings_for(server)) for domain in domains]

        async def fetch_all() -> list[DnsSnapshot]:
            return await fetched(partial(dns_fetch.fetch_dns, d, Resolver(s)) for _, d, s in fetches)

        snapshots = asyncio.run(fetch_all())
        # Every lookup answered, but those the zone data drops: a SERVFAIL is a name outside the zones served here
        # (the server refuses it), a timeout of another lookup an answer the load delayed past _dns_world.DNS_SECONDS.
        unexpected = [
            f"{a.name} {a.rdtype}: {a.rcode}"
            for (section, _, _), snapshot in zip(fetches, snapshots, strict=True)
            for a in snapshot.answers
            if a.rcode not in ("NOERROR", "NXDOMAIN")
            and (a.rcode != "TIMEOUT" or (a.name, a.rdtype) not in drops[section])
        ]
        assert not unexpected, f"lookups the suite's zone data does not fail: {unexpected}"
        found = {(section, d): spf_outcomes(d, s) for (section, d, _), s in zip(fetches, snapshots, strict=True)}
    return {name: found[(test.section, test.domain)] for name, test in tests.items()}


def stated(ours: Iterable[str]) -> set[str]:
    """The check_host() results our outcomes state (advice such as dns.spf_ptr states none)."""
    return {RESULT_OF[o] for o in ours if o not in ADVISORY}


def held_to(case: Case, test: SuiteTest) -> frozenset[str]:
    return EVALUATED if case.sender else frozenset(test.results)


def agrees(case: Case, test: SuiteTest) -> bool:
    """Whether the results our outcomes state for the test sender's address family are the suite's."""
    results = stated(o for o in case.ours if o not in case.other_family)
    return bool(results) and results <= held_to(case, test)


def family_of(address: str) -> str:
    return "IPv6" if ":" in address and not address.lower().startswith("::ffff:") else "IPv4"


def assert_conforms(case: Case, test: SuiteTest, actual_for: Iterable[tuple[str, str | None]]) -> None:
    actual_for = tuple(actual_for)
    actual = tuple(outcome for outcome, _ in actual_for)
    unknown = [o for o in actual if o not in RESULT_OF and o not in ADVISORY]
    assert not unknown, f"{unknown} missing from rfc7208_map.toml"
    assert actual == case.ours
    sender = family_of(test.host)
    others = tuple(outcome for outcome, family in actual_for if family not in (None, sender))
    assert others == case.other_family, f"said for the other family than {sender} senders': {others}"
    if case.why is None:
        assert agrees(case, test), f"held to {sorted(held_to(case, test))}, our outcomes state {sorted(stated(actual))}"
    else:
        assert not agrees(case, test), "declared a divergence, but our verdict is the suite's: drop `why`"


def tally(cases: Iterable[Case]) -> tuple[int, int, int, int]:
    """(cases, agreeing, documented divergences, of them held only to evaluating the record)."""
    cases = list(cases)
    diverging = sum(c.why is not None for c in cases)
    return len(cases), len(cases) - diverging, diverging, sum(c.sender is not None for c in cases)
