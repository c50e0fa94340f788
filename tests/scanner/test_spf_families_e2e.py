"""SPF verdicts per sender address family, scanned end to end through the fixture DNS server (RFC 7208 4.6.2, 5).

Receivers evaluate a record for one sender, so for one address family: a term that matches every sender of a
family ends the walk for them (4.6.2), and a term or record only the other family's senders reach then stops those
alone. A permerror there (a syntax error of an include, an include of a domain without SPF, the third void lookup)
is the result for that family's senders; the family that matched before it, or walked out of an include that did not
match it, keeps the result receivers give it. Each family gets its own in the report (`details.spf.results`), and
the findings and their notes say whose each is. Each site is the best-practice site; only its SPF records differ."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer, Faults, inject_faults
from tests.fixtures.sites import SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings


async def scanned(
    site_factory: SiteFactory, scan_settings: Settings, prefix: str, zone: Callable[[str], None]
) -> dict[str, Any]:
    """The report of a fresh best-practice site whose SPF records `zone(host)` publishes once it is up."""
    host = site_factory.unique_host(prefix)
    running = site_factory(catalog.best_practices(host))
    zone(host)
    return (await scan(running.url, scan_settings)).to_dict()


def spf_findings(body: dict[str, Any]) -> dict[str, str]:
    """The SPF findings of a report: outcome -> note."""
    return {f["check"]: f.get("note") or "" for f in body["dns"]["findings"] if f["check"].startswith("dns.spf")}


@pytest.fixture
def faults(dns_server: AuthDnsServer, monkeypatch: pytest.MonkeyPatch) -> Faults:
    return inject_faults(dns_server, monkeypatch)


def deductions(body: dict[str, Any]) -> dict[str, int]:
    return {f["check"]: f["deduction"] for f in body["dns"]["findings"] if f["status"] != "good"}


async def test_an_include_that_stops_ipv4_senders_leaves_ipv6_senders_walking_to_the_all(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a record including one that fails every IPv6 sender first (so it does not match them, and they walk on to
    # the including record's ~all: RFC 7208 5.2) and then includes a domain with no SPF record (a permerror, which
    # only IPv4 senders reach)
    def zone(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 include:_spf.{host} ~all"')
        dns_server.set(f"_spf.{host}", "TXT", f'"v=spf1 -ip6:::/0 include:nospf.{host} -all"')
        dns_server.set(f"nospf.{host}", "TXT", '"not an spf record"')

    body = await scanned(site_factory, scan_settings, "spf-fam-incl", zone)

    # Then IPv4 senders get permerror and IPv6 senders softfail, each said for its family (the scan stopped both at
    # the permerror, and gave no verdict)
    found = spf_findings(body)
    assert set(found) == {"dns.spf_invalid", "dns.spf_softfail"}
    assert "has no SPF record" in found["dns.spf_invalid"] and "(for IPv4 senders" in found["dns.spf_invalid"]
    assert "(for IPv6 senders" in found["dns.spf_softfail"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "permerror", "IPv6": "softfail"}
    assert (spf["all"], spf["all_for"], spf["stopped_for"]) == ("~all", ["IPv6"], [])


async def test_a_permerror_after_a_term_matching_every_ipv6_sender_leaves_them_its_verdict(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given "?ip6:::/0" (every IPv6 sender neutral, RFC 7208 4.6.2), then an include whose record has a syntax error
    def zone(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 ?ip6:::/0 include:_bad.{host} -all"')
        dns_server.set(f"_bad.{host}", "TXT", '"v=spf1 ip4:192.0.2.0/33 -all"')

    body = await scanned(site_factory, scan_settings, "spf-fam-syntax", zone)

    # Then the syntax error is IPv4 senders' result and neutral IPv6 senders'
    found = spf_findings(body)
    assert set(found) == {"dns.spf_invalid", "dns.spf_neutral"}
    assert "(for IPv4 senders: every IPv6 sender is matched before it)" in found["dns.spf_invalid"]
    assert "(for IPv6 senders" in found["dns.spf_neutral"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "permerror", "IPv6": "neutral"}
    # the term that decides for IPv6 senders is ?ip6:::/0, not an "?all" the record does not have, and the fix
    # refuses them there: dropping it would lead them into the include's syntax error (the other finding's to fix)
    assert (spf["all"], spf["all_for"]) == ("?ip6:::/0", ["IPv6"])
    assert found["dns.spf_neutral"].startswith("?ip6:::/0: neutral")
    fix = next(f["fix"] for f in body["dns"]["findings"] if f["check"] == "dns.spf_neutral")
    assert "v=spf1 -ip6:::/0 include:_bad." in fix and "?ip6:::/0" not in fix, fix


async def test_the_third_void_lookup_of_ipv4_senders_leaves_ipv6_senders_refused(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given "-ip6:::/0" (every IPv6 sender refused), then three a terms on names that do not exist: the third void
    # lookup is a permerror (RFC 7208 4.6.4) that only IPv4 senders reach
    def zone(host: str) -> None:
        gone = " ".join(f"a:gone{n}.{host}" for n in (1, 2, 3))
        dns_server.set(host, "TXT", f'"v=spf1 -ip6:::/0 {gone} ~all"')

    body = await scanned(site_factory, scan_settings, "spf-fam-void", zone)

    found = spf_findings(body)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}
    assert "(for IPv4 senders" in found["dns.spf_void_lookups"]
    assert "(for IPv6 senders" in found["dns.spf_strict"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "permerror", "IPv6": "fail"}
    # refused at -ip6:::/0, the term that decides for them, not at an "-all" the record does not have (its ~all)
    assert (spf["all"], spf["all_for"]) == ("-ip6:::/0", ["IPv6"])


async def test_a_record_passing_every_ipv4_sender_says_what_ipv6_senders_get_without_a_second_deduction(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given ip4:0.0.0.0/0 (every IPv4 sender passes, RFC 7208 4.6.2) and ~all, which only IPv6 senders reach
    def zone(host: str) -> None:
        dns_server.set(host, "TXT", '"v=spf1 ip4:0.0.0.0/0 ~all"')

    body = await scanned(site_factory, scan_settings, "spf-fam-open4", zone)

    # Then the record is open (dns.spf_pass_all, deducted once), and the report says IPv6 senders soft-fail: the
    # verdict was said for every sender, or not at all
    assert {k: v for k, v in deductions(body).items() if k.startswith("dns.spf")} == {"dns.spf_pass_all": 5}
    found = spf_findings(body)
    assert set(found) == {"dns.spf_pass_all"}
    assert found["dns.spf_pass_all"].startswith("ip4:0.0.0.0/0: every IPv4 server on the internet passes")
    assert "IPv6 senders soft-fail (~all)" in found["dns.spf_pass_all"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "pass", "IPv6": "softfail"}
    assert (spf["all"], spf["all_for"]) == ("~all", ["IPv6"])


async def test_a_failed_lookup_in_an_include_that_stops_ipv4_senders_leaves_ipv6_senders_walking_to_the_all(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings, faults: Faults
) -> None:
    # Given an include whose record fails every IPv6 sender first, then has an a term whose A lookup SERVFAILs: IPv4
    # senders stop there with temperror (RFC 7208 5), IPv6 senders walk out of the include to the ~all
    def zone(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 include:_spf.{host} ~all"')
        dns_server.set(f"_spf.{host}", "TXT", f'"v=spf1 -ip6:::/0 a:flaky.{host} -all"')
        faults[(f"flaky.{host}", "A")] = "servfail"

    body = await scanned(site_factory, scan_settings, "spf-fam-temp", zone)

    found = spf_findings(body)
    assert set(found) == {"dns.spf_softfail"}
    assert "(for IPv6 senders; IPv4 senders' result is not known: a lookup failed)" in found["dns.spf_softfail"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "temperror", "IPv6": "softfail"}
    assert (spf["all"], spf["all_for"], spf["stopped_for"]) == ("~all", ["IPv6"], ["IPv4"])
    errors = [f for f in body["dns"]["findings"] if f["check"] == "check.error" and "spf" in (f.get("families") or [])]
    assert len(errors) == 1 and "temperror" in errors[0]["note"]


async def test_a_terms_on_names_without_an_aaaa_record_are_void_lookups_for_ipv6_senders_alone(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given three a terms on names with an A record and no AAAA: receivers ask AAAA for an IPv6 sender (RFC 7208
    # 5.3), so each is a void lookup for IPv6 senders, the third a permerror (4.6.4); IPv4 senders find A records
    def zone(host: str) -> None:
        names = [f"mail{n}.{host}" for n in (1, 2, 3)]
        for n, name in enumerate(names, start=1):
            dns_server.set(name, "A", f"198.51.100.{n}")
        dns_server.set(host, "TXT", '"v=spf1 ' + " ".join(f"a:{name}" for name in names) + ' -all"')

    body = await scanned(site_factory, scan_settings, "spf-fam-void6", zone)

    # Then IPv6 senders get permerror and IPv4 senders are refused (pyspf 2.0.14 gives the same), each said for its
    # family; before, both were refused and the record read as strict
    found = spf_findings(body)
    assert set(found) == {"dns.spf_void_lookups", "dns.spf_strict"}
    assert "(for IPv6 senders: receivers ask AAAA for them, A for IPv4 senders)" in found["dns.spf_void_lookups"]
    assert "(for IPv4 senders; IPv6 senders' result is permerror" in found["dns.spf_strict"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "fail", "IPv6": "permerror"}
    assert spf["void_lookups_for"] == {"IPv4": 0, "IPv6": 3}


async def test_lookups_of_an_include_only_ipv4_senders_walk_are_not_counted_for_ipv6_senders(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given an include that fails every IPv6 sender first (they walk out of it to the including record, RFC 7208
    # 5.2) and then has eight a terms, and two a terms after it: IPv4 senders reach 11 DNS lookups, IPv6 senders 3
    def zone(host: str) -> None:
        names = [f"x{n}.{host}" for n in range(8)] + [f"p{n}.{host}" for n in (1, 2)]
        for name in names:
            dns_server.set(name, "A", "198.51.100.9")
            dns_server.set(name, "AAAA", "2001:db8::9")
        inner = " ".join(f"a:{name}" for name in names[:8])
        dns_server.set(f"_inc.{host}", "TXT", f'"v=spf1 -ip6:::/0 {inner} -all"')
        dns_server.set(host, "TXT", f'"v=spf1 include:_inc.{host} a:{names[8]} a:{names[9]} -all"')

    body = await scanned(site_factory, scan_settings, "spf-fam-limit", zone)

    # Then the lookup limit is IPv4 senders' permerror, and IPv6 senders are refused
    found = spf_findings(body)
    assert set(found) == {"dns.spf_too_many_lookups", "dns.spf_strict"}
    assert "(for IPv4 senders" in found["dns.spf_too_many_lookups"]
    spf = body["dns"]["spf"]
    assert spf["results"] == {"IPv4": "permerror", "IPv6": "fail"}
    assert spf["lookups_for"] == {"IPv4": 11, "IPv6": 3}
