"""A DNS lookup that fails, or that the scan's time budget cuts, is "could not check" (a check.error naming the
family it leaves unchecked), never a verdict: an SOA that SERVFAILs or times out is not an unsigned zone
(checks/dnssec.py), and a DNS fetch cut by the scan's deadline keeps what arrived and records the rest as failed
(fetch/dns.py), and what it never asked is no answer either (SPF's terms, checks/spf.py), so the diff neither
fixes nor brings back the findings it could not check (scanner/diff.py). The scans go through the fixture DNS
server, made to answer SERVFAIL or nothing for the lookups a test names; the fetches cut by the budget, through
an in-memory zone that never answers the lookups a test names, so the cut comes where the test says whatever the
machine's load (one end-to-end scan, given a budget ample for the rest, checks the same through the whole scan).
RFC 1035 4.1.1: SERVFAIL is not NXDOMAIN, and no answer is no answer."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from tests.factories import make_snapshot
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer, Fault, Faults, inject_faults
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import diff_reports
from websec_app.scanner.fetch.dns import OUT_OF_BUDGET, dns_queries, fetch_dns
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.registrable import registrable_domain
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import DnsAnswer, DnsSnapshot
from websec_app.settings import DnsServer, ScanLimits, Settings
from websec_app.usecases.monitors import alert_reasons


@pytest.fixture
def faults(dns_server: AuthDnsServer, monkeypatch: pytest.MonkeyPatch) -> Faults:
    return inject_faults(dns_server, monkeypatch)


def with_limits(settings: Settings, **limits: float) -> Settings:
    return dataclasses.replace(settings, limits=dataclasses.replace(ScanLimits(), **limits))


def dns_only(body: dict[str, Any]) -> dict[str, Any]:
    """The report as far as its dns section goes: the diff and the alerts of that section alone (a scan whose
    time budget is cut short may also leave a TLS probe unfinished: not what these tests are about)."""
    return {"grade": body["grade"], "score": body["score"], "dns": body["dns"]}


def dns_changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    diff = diff_reports(dns_only(before), dns_only(after))
    return [
        (kind, c.name, c.subject)
        for kind, found in (("new", diff.new), ("fixed", diff.fixed), ("changed", diff.changed))
        for c in found
    ]


def outcomes(body: dict[str, Any]) -> set[str]:
    return {f["check"] for f in body["dns"]["findings"] if f["check"] != "check.error"}


def errors(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in body["dns"]["findings"] if f["check"] == "check.error"]


def assert_unchanged_across(before: dict[str, Any], failed: dict[str, Any], after: dict[str, Any]) -> None:
    """Scans before -> failed -> after of an unchanged site: the dns section has no change in either diff, and the
    third scan alerts nothing (no finding new, no grade drop: the failed scan stood higher for what it missed)."""
    assert dns_changes(before, failed) == [] and dns_changes(failed, after) == []
    out = diff_reports(dns_only(failed), dns_only(after))
    assert alert_reasons(dns_only(failed), dns_only(after), out, None)[0] == []


def report_of(snapshot: DnsSnapshot) -> dict[str, Any]:
    """The report of a scan whose DNS fetch gave `snapshot`, as far as its dns section goes."""
    result = check_dns(make_snapshot(f"https://{snapshot.host}/", dns=snapshot))
    graded = grade([result], default_rulebook(), {"host": snapshot.host, "domain": registrable_domain(snapshot.host)})
    return {"grade": graded.grade, "score": graded.score, **graded.sections}


# -- an SOA lookup that fails --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "signed", "verdict"),
    [
        ("servfail", False, "dns.dnssec_unsigned"),
        ("drop", False, "dns.dnssec_unsigned"),
        ("servfail", True, "dns.dnssec_valid"),
    ],
)
async def test_a_failed_soa_lookup_is_dnssec_not_checked_never_unsigned_nor_valid(
    site_factory, scan_settings: Settings, faults: Faults, fault: Fault, signed: bool, verdict: str
) -> None:
    # Given a best-practice site whose zone is unsigned (dns.dnssec_unsigned, -3) or signed and valid
    host = site_factory.unique_host(f"soa-{fault}")
    site_factory(dataclasses.replace(catalog.best_practices(host), dnssec=signed))
    # (a lookup the server drops fails after dns_seconds: one second here)
    settings = with_limits(scan_settings, dns_seconds=1.0)
    before = (await scan(f"https://{host}/", settings)).to_dict()
    # When the authoritative server answers SERVFAIL, or nothing, for the domain's SOA in the second scan of three
    faults[(host, "SOA")] = fault
    failed = (await scan(f"https://{host}/", settings)).to_dict()
    faults.clear()
    after = (await scan(f"https://{host}/", settings)).to_dict()

    # Then that scan gives DNSSEC no verdict (the SOA says whether the domain is a zone of its own, and carries
    # the signature over its data) but a check.error naming the dnssec family, and deducts nothing for it
    assert verdict in outcomes(before) and verdict in outcomes(after)
    assert not {o for o in outcomes(failed) if o.startswith("dns.dnssec")}
    [error] = errors(failed)
    assert error["subjects"] == ["DNSSEC"] and error["families"] == ["dnssec"] and error["deduction"] == 0
    assert error["note"].startswith(f"the SOA query failed ({'no DNS server' if fault == 'servfail' else 'no answer'}")
    assert failed["dns"]["dnssec"]["status"] == "unknown"
    assert failed["score"] == 100
    # and the diff against the scans before and after has no change
    assert_unchanged_across(before, failed, after)


@pytest.fixture
def io_dns_server() -> Iterator[AuthDnsServer]:
    """A DNS server for `io.` (alice.github.io, a name in the github.io zone), beside the session's `.test` one."""
    with AuthDnsServer(tld="io") as server:
        yield server


async def test_a_name_in_a_platforms_zone_whose_soa_lookup_fails_is_not_new_unsigned(
    io_dns_server: AuthDnsServer, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given alice.github.io, a name with no zone of its own in GitHub's unsigned github.io zone: no DS its owner
    # could publish, so no DNSSEC finding
    io_dns_server.add_zone("github.io")
    io_dns_server.add("alice.github.io", "A", "127.0.0.9")
    faults = inject_faults(io_dns_server, monkeypatch)
    settings = dataclasses.replace(scan_settings, dns_servers=(DnsServer(io_dns_server.ip, io_dns_server.port),))

    async def scanned() -> dict[str, Any]:
        return report_of(await fetch_dns("alice.github.io", Resolver(settings)))

    before = await scanned()
    # When its SOA lookup SERVFAILs once
    faults[("alice.github.io", "SOA")] = "servfail"
    failed = await scanned()
    faults.clear()
    after = await scanned()

    # Then that scan does not call the name an unsigned zone of its own (-3 and a finding new, then fixed): whether
    # it is one is what the SOA would have said
    assert (before["dns"]["dnssec"]["status"], before["dns"]["dnssec"]["zone"]) == ("unsigned", "github.io")
    assert "dns.dnssec_unsigned" not in outcomes(failed)
    assert [(e["subjects"], e["families"]) for e in errors(failed)] == [(["DNSSEC"], ["dnssec"])]
    assert failed["score"] == before["score"]
    assert_unchanged_across(before, failed, after)


# -- a DNS fetch cut by the scan's time budget ---------------------------------------------------------------------

#: The scanned domain of the tests that drive fetch_dns through ZoneResolver.
DOMAIN = "example.com"
#: What is left of the scan's budget when the DNS fetch starts, in the tests driving fetch_dns: ZoneResolver answers
#: every other lookup at once, from memory, so the lookup it never answers, not the machine's load, decides the cut.
BUDGET = 0.5
Zone = dict[tuple[str, str], tuple[str, ...]]


class ZoneResolver:
    """A resolver answering from `zone` in memory, at once (no I/O to wait for), NXDOMAIN for a name it holds no
    record of, and never answering the lookups in `never`: fetch_dns's budget ends those."""

    def __init__(self, zone: Zone, never: Iterable[tuple[str, str]] = ()) -> None:
        self.zone = zone
        self.never = set(never)

    async def query(self, name: str, rdtype: str) -> DnsAnswer:
        key = (name.rstrip(".").lower(), rdtype)
        if key in self.never:
            await asyncio.Event().wait()  # no answer, ever
        if key in self.zone:
            return DnsAnswer(*key, "NOERROR", self.zone[key])
        return DnsAnswer(*key, "NOERROR" if any(key[0] == n for n, _ in self.zone) else "NXDOMAIN")


def zone_of(*records: tuple[str, str, str]) -> Zone:
    """DOMAIN's zone (an apex: an SOA, no DNSSEC), its address and `records`."""
    zone: Zone = {
        ("com", "SOA"): ("a.gtld-servers.net. nstld.verisign-grs.com. 1 1800 900 604800 86400",),
        (DOMAIN, "SOA"): (f"ns.{DOMAIN}. hostmaster.{DOMAIN}. 1 7200 3600 1209600 300",),
        (DOMAIN, "A"): ("93.184.216.34",),
    }
    for name, rdtype, value in records:
        zone[(name, rdtype)] = (*zone.get((name, rdtype), ()), value)
    return zone


async def scan_dns(
    zone: Zone, never: Iterable[tuple[str, str]] = (), *, budget: float | None = None, follow_ups: float = 60.0
) -> dict[str, Any]:
    """The report of DOMAIN's DNS fetched through ZoneResolver within `budget` (None: unbounded), its follow-ups
    given `follow_ups` seconds."""
    return report_of(await fetch_dns(DOMAIN, ZoneResolver(zone, never), follow_ups, budget_seconds=budget))


async def test_a_dns_fetch_cut_by_the_scan_budget_keeps_its_answers_and_says_what_it_could_not_check() -> None:
    # Given a domain with every DNS control missing and www a CNAME to a deleted service (critical, -25)
    gone = "gone-app.example.net"
    zone = zone_of((f"www.{DOMAIN}", "CNAME", f"{gone}."))
    before = await scan_dns(zone)
    # When the domain's SOA gets no answer before the scan's time budget runs out (the other lookups answer)
    cut = await scan_dns(zone, [(DOMAIN, "SOA")], budget=BUDGET)
    after = await scan_dns(zone)

    # Then the answers that arrived are graded as in the full scan, DNSSEC is not checked, and neither is the
    # CNAME's target, whose lookup waited for the first round to end: check.errors naming those families
    assert outcomes(before) == outcomes(after) >= {"dns.dangling_cname", "dns.no_mx", "dns.spf_missing"}
    assert outcomes(cut) == outcomes(before) - {"dns.dnssec_unsigned", "dns.dangling_cname"}
    [error] = errors(cut)
    assert error["subjects"] == [f"{gone} A", "DNSSEC"] and error["families"] == ["cnames", "dnssec"]
    soa = f"the SOA query failed ({OUT_OF_BUDGET}): whether {DOMAIN} is an unsigned zone or a name in another zone"
    assert error["note"] == f"{OUT_OF_BUDGET}; {soa} is unknown"
    # and the diff has no change: the dangling CNAME is neither fixed, nor new again with a critical alert
    assert_unchanged_across(before, cut, after)


async def test_a_dns_fetch_the_scan_budget_cuts_whole_says_every_family_could_not_be_checked() -> None:
    # Given a domain with every DNS control missing
    zone = zone_of()
    before = await scan_dns(zone)
    # When no DNS lookup gets an answer before the scan's time budget runs out, but the host's addresses
    first_round = [(name, rdtype) for name, rdtype in dns_queries(DOMAIN) if rdtype not in ("A", "AAAA")]
    cut = await scan_dns(zone, first_round, budget=BUDGET)
    after = await scan_dns(zone)

    # Then the DNS section says it could not check any family but the addresses (no finding read as absent)
    assert outcomes(cut) == {"dns.resolves", "dns.no_ipv6"}
    [error] = errors(cut)
    assert sorted(error["families"]) == [
        "caa",
        "cnames",
        "dkim",
        "dmarc",
        "dnssec",
        "mta_sts",
        "mx",
        "ns",
        "spf",
        "tls_rpt",
    ]
    # (the CAA search stops at the domain's failed lookup, before the TLD's: RFC 8659 3)
    # (the web host's TLSA lookup is the TLS section's to report: checks/tls_dane.py)
    dnssec = ("SOA", "DNSKEY", "DS")
    own = [f"{name} {rdtype}" for name, rdtype in first_round if rdtype not in (*dnssec, "TLSA") and name != "com"]
    assert sorted(error["subjects"]) == sorted([*own, "DNSSEC"])
    assert error["note"] == f"{OUT_OF_BUDGET}; the DS query failed ({OUT_OF_BUDGET})"
    # and the diff has no change: the missing SPF, DMARC, DNSSEC ... are not fixed, then new
    assert {"dns.spf_missing", "dns.dmarc_missing", "dns.dnssec_unsigned", "dns.caa_missing"} <= outcomes(before)
    assert_unchanged_across(before, cut, after)


#: Names that do not exist: each a void lookup (RFC 7208 4.6.4), three of them a permerror.
VOID = ("void1.example.net", "void2.example.net", "void3.example.net")
OTHER = "_spf.example.net"
THREE_VOID_A = "v=spf1 " + " ".join(f"a:{name}" for name in VOID) + " -all"


@pytest.mark.parametrize(
    ("records", "stops_at", "unasked"),
    [
        pytest.param([(DOMAIN, THREE_VOID_A)], f"a:{VOID[0]}", [f"{VOID[0]} A", f"{VOID[0]} AAAA"], id="a"),
        pytest.param(
            [(DOMAIN, "v=spf1 " + " ".join(f"mx:{name}" for name in VOID) + " -all")],
            f"mx:{VOID[0]}",
            [f"{VOID[0]} MX"],
            id="mx",
        ),
        pytest.param(
            [(DOMAIN, "v=spf1 " + " ".join(f"exists:{name}" for name in VOID) + " -all")],
            f"exists:{VOID[0]}",
            [f"{VOID[0]} A"],
            id="exists",
        ),
        pytest.param(
            [(DOMAIN, f"v=spf1 include:{OTHER} -all"), (OTHER, THREE_VOID_A)],
            f"include:{OTHER}",
            [f"{OTHER} TXT"],
            id="include",
        ),
        pytest.param(
            [(DOMAIN, f"v=spf1 redirect={OTHER}"), (OTHER, THREE_VOID_A)],
            f"redirect={OTHER}",
            [f"{OTHER} TXT"],
            id="redirect",
        ),
    ],
)
async def test_spf_lookups_a_budget_cut_left_unasked_are_not_checked_never_evaluated(
    records: list[tuple[str, str]], stops_at: str, unasked: list[str]
) -> None:
    # Given a domain whose SPF record (or the one it includes or redirects to) makes three void lookups: a
    # permerror (dns.spf_void_lookups), whatever its "-all" says
    zone = zone_of(*((name, "TXT", f'"{text}"') for name, text in records))
    before = await scan_dns(zone)
    # When the scan's time budget runs out in the first round of lookups (a slow DNSKEY), before any lookup of its
    # SPF terms or include tree was asked
    cut = await scan_dns(zone, [(DOMAIN, "DNSKEY")], budget=BUDGET)
    after = await scan_dns(zone)

    # Then SPF's evaluation stops at the first term whose lookup was never made, as at a failed one: a check.error
    # naming spf for those lookups, and no SPF verdict (neither the void lookups fixed, nor "-all" strict)
    assert "dns.spf_void_lookups" in outcomes(before) and outcomes(before) == outcomes(after)
    assert not {o for o in outcomes(cut) if o.startswith("dns.spf")}
    [error] = errors(cut)
    assert set(unasked) <= set(error["subjects"]) and "spf" in error["families"]
    assert (cut["dns"]["spf"]["stopped_at"], cut["dns"]["spf"]["failed_lookups"]) == (stops_at, unasked)
    assert f"{OUT_OF_BUDGET}: SPF's evaluation stops at {stops_at}" in error["note"]
    # and the diff has no change: the permerror is neither fixed, nor new again
    assert_unchanged_across(before, cut, after)


@pytest.mark.parametrize("cut_by", ["budget", "follow-up deadline"])
async def test_the_mx_hosts_of_an_spf_mx_term_a_cut_left_unasked_stop_the_evaluation_there(cut_by: str) -> None:
    # Given "v=spf1 mx:relay.example.net exists:slow.example.net -all": the relay's MX host has an address, the
    # exists term's name none (one void lookup)
    relay, host, slow = "relay.example.net", "mail.example.net", "slow.example.net"
    zone = zone_of(
        (DOMAIN, "TXT", f'"v=spf1 mx:{relay} exists:{slow} -all"'),
        (relay, "MX", f"10 {host}."),
        (host, "A", "192.0.2.25"),
    )
    assert "dns.spf_strict" in outcomes(await scan_dns(zone))
    # When the exists term's A, asked beside the relay's MX, gets no answer before the fetch stops asking (the
    # scan's budget, or the deadline of the follow-up lookups): the MX host's addresses, asked a round after the
    # MX answer, never are
    never = [(slow, "A")]
    if cut_by == "budget":
        cut = await scan_dns(zone, never, budget=BUDGET)
    else:
        cut = await scan_dns(zone, never, follow_ups=BUDGET)

    # Then the evaluation stops at the mx term, where receivers would look those addresses up (RFC 7208 5.4), not
    # at the exists term after it as if the mx term had been evaluated
    assert cut["dns"]["spf"]["stopped_at"] == f"mx:{relay}"
    assert cut["dns"]["spf"]["failed_lookups"] == [f"{host} A", f"{host} AAAA"]
    assert not {o for o in outcomes(cut) if o.startswith("dns.spf")}


# -- the same, end to end ------------------------------------------------------------------------------------------

#: A scan budget the loopback site's fetches and the DNS lookups that answer keep to with room to spare under any
#: load, and a lookup timeout longer than it: the dropped lookup is still waited for when the budget ends the scan.
GENEROUS = {"total_seconds": 8.0, "dns_seconds": 60.0}


async def test_a_scan_whose_budget_ends_on_a_dropped_lookup_says_what_it_could_not_check(
    site_factory, scan_settings: Settings, faults: Faults
) -> None:
    # Given a site with every DNS control missing but an SPF record of three void lookups (a permerror), and www a
    # CNAME to a deleted service (critical, -25)
    host = site_factory.unique_host("cut-soa")
    gone = f"gone-{host}"
    voids = [f"void{i}-{host}" for i in (1, 2, 3)]
    spf = "v=spf1 " + " ".join(f"a:{name}" for name in voids) + " -all"
    site_factory(
        dataclasses.replace(catalog.no_practices(host), dns=((f"www.{host}", "CNAME", gone), (host, "TXT", f'"{spf}"')))
    )
    before = (await scan(f"https://{host}/", scan_settings)).to_dict()
    # When the domain's SOA gets no answer before the scan's time budget runs out (the other lookups answer)
    faults[(host, "SOA")] = "drop"
    cut = (await scan(f"https://{host}/", with_limits(scan_settings, **GENEROUS))).to_dict()
    faults.clear()
    after = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the answers that arrived are graded as in the full scan; DNSSEC is not checked, nor the CNAME's target
    # and the SPF terms, whose lookups waited for the first round to end, nor the name servers, asked after it:
    # check.errors naming those families
    gave_no_verdict = {"dns.dnssec_unsigned", "dns.dangling_cname", "dns.spf_void_lookups"}
    gave_no_verdict |= {"dns.nameservers_authoritative"}
    assert outcomes(before) == outcomes(after) >= {*gave_no_verdict, "dns.no_mx"}
    assert outcomes(cut) == outcomes(before) - gave_no_verdict
    [error] = errors(cut)
    assert error["subjects"] == [f"{gone} A", f"{voids[0]} A", f"{voids[0]} AAAA", "DNSSEC", f"{host} name servers"]
    assert error["families"] == ["cnames", "spf", "dnssec", "delegation"]
    assert f"no name server of {host} answered (not asked: its address could not be looked up (" in error["note"]
    # and the diff has no change: the dangling CNAME and the void lookups are neither fixed, nor new again
    assert_unchanged_across(before, cut, after)
