"""A DNS lookup that fails, or that the scan's time budget cuts, is "could not check" (a check.error naming the
family it leaves unchecked), never a verdict: an SOA that SERVFAILs or times out is not an unsigned zone
(checks/dnssec.py), and a DNS fetch cut by the scan's deadline keeps what arrived and records the rest as failed
(fetch/dns.py), so the diff neither fixes nor brings back the findings it could not check (scanner/diff.py).
Each scan goes through the fixture DNS server, made to answer SERVFAIL or nothing for the lookups a test names.
RFC 1035 4.1.1: SERVFAIL is not NXDOMAIN, and no answer is no answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
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
from websec_app.scanner.rules import default_rulebook
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
        snapshot = await fetch_dns("alice.github.io", Resolver(settings))
        result = check_dns(make_snapshot("https://alice.github.io/", dns=snapshot))
        graded = grade([result], default_rulebook(), {"host": "alice.github.io", "domain": "alice.github.io"})
        return {"grade": graded.grade, "score": graded.score, **graded.sections}

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

#: A scan budget the loopback site's own fetches keep to easily, and DNS lookups that wait longer than it for an
#: answer that does not come: the scan's deadline, not the lookups' own timeout, ends the DNS fetch.
CUT_SHORT = {"total_seconds": 3.0, "dns_seconds": 10.0}


async def test_a_dns_fetch_cut_by_the_scan_budget_keeps_its_answers_and_says_what_it_could_not_check(
    site_factory, scan_settings: Settings, faults: Faults
) -> None:
    # Given a site with every DNS control missing and www a CNAME to a deleted service (critical, -25)
    host = site_factory.unique_host("cut-soa")
    gone = f"gone-{host}"
    site_factory(dataclasses.replace(catalog.no_practices(host), dns=((f"www.{host}", "CNAME", gone),)))
    before = (await scan(f"https://{host}/", scan_settings)).to_dict()
    # When the domain's SOA gets no answer before the scan's time budget runs out (the other lookups answer)
    faults[(host, "SOA")] = "drop"
    cut = (await scan(f"https://{host}/", with_limits(scan_settings, **CUT_SHORT))).to_dict()
    faults.clear()
    after = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the answers that arrived are graded as in the full scan, DNSSEC is not checked, and neither is the
    # CNAME's target, whose lookup waited for the first round to end: check.errors naming those families
    assert outcomes(before) == outcomes(after) >= {"dns.dangling_cname", "dns.no_mx", "dns.spf_missing"}
    assert outcomes(cut) == outcomes(before) - {"dns.dnssec_unsigned", "dns.dangling_cname"}
    [error] = errors(cut)
    assert error["subjects"] == [f"{gone} A", "DNSSEC"] and error["families"] == ["cnames", "dnssec"]
    soa = f"the SOA query failed ({OUT_OF_BUDGET}): whether {host} is an unsigned zone or a name in another zone"
    assert error["note"] == f"{OUT_OF_BUDGET}; {soa} is unknown"
    # and the diff has no change: the dangling CNAME is neither fixed, nor new again with a critical alert
    assert_unchanged_across(before, cut, after)


async def test_a_dns_fetch_the_scan_budget_cuts_whole_says_every_family_could_not_be_checked(
    site_factory, scan_settings: Settings, faults: Faults
) -> None:
    # Given a site with every DNS control missing
    host = site_factory.unique_host("cut-all")
    site_factory(catalog.no_practices(host))
    before = (await scan(f"https://{host}/", scan_settings)).to_dict()
    # When no DNS lookup of the scan gets an answer before its time budget runs out, but the host's addresses
    # (resolved first, to connect)
    first_round = [(name, rdtype) for name, rdtype in dns_queries(host) if rdtype not in ("A", "AAAA")]
    faults.update(dict.fromkeys(first_round, "drop"))
    cut = (await scan(f"https://{host}/", with_limits(scan_settings, **CUT_SHORT))).to_dict()
    faults.clear()
    after = (await scan(f"https://{host}/", scan_settings)).to_dict()

    # Then the DNS section says it could not check any family but the addresses (no finding read as absent)
    assert outcomes(cut) == {"dns.resolves", "dns.no_ipv6"}
    [error] = errors(cut)
    assert sorted(error["families"]) == ["caa", "cnames", "dkim", "dmarc", "dnssec", "mta_sts", "mx", "spf", "tls_rpt"]
    own = [
        f"{name} {rdtype}" for name, rdtype in first_round if rdtype not in ("SOA", "DNSKEY", "DS") and name != "test"
    ]
    assert sorted(error["subjects"]) == sorted([*own, "DNSSEC"])
    assert error["note"] == f"{OUT_OF_BUDGET}; the DS query failed ({OUT_OF_BUDGET})"
    # and the diff has no change: the missing SPF, DMARC, DNSSEC ... are not fixed, then new
    assert {"dns.spf_missing", "dns.dmarc_missing", "dns.dnssec_unsigned", "dns.caa_missing"} <= outcomes(before)
    assert_unchanged_across(before, cut, after)
