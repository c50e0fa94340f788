"""The DNS fetch against the fixture DNS server: the query table, the bounded second round, RRSIGs,
and the MTA-STS policy fetch (guarded client, no redirects)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import pytest

from tests.factories import make_snapshot
from tests.fixtures.catalog import simple_site
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Redirect, Response
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.checks.spf import LOOKUP_LIMIT
from websec_app.scanner.fetch.dns import (
    MAX_SPF_CHARS_ON_LOOP,
    dns_queries,
    fetch_dns,
)
from websec_app.scanner.fetch.http import make_client
from websec_app.scanner.fetch.mail_policy import fetch_mta_sts
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.records.caa import MAX_CAA_NAMES
from websec_app.scanner.records.spf import SpfRecord, parse_spf
from websec_app.settings import DnsServer


def test_the_query_table_covers_the_host_and_its_registrable_domain() -> None:
    queries = dns_queries("shop.example.co.uk")
    for expected in [
        ("shop.example.co.uk", "AAAA"),
        ("shop.example.co.uk", "CNAME"),
        ("www.example.co.uk", "CNAME"),
        ("shop.example.co.uk", "CAA"),
        ("example.co.uk", "CAA"),
        ("example.co.uk", "TXT"),
        ("example.co.uk", "MX"),
        ("example.co.uk", "DNSKEY"),
        ("example.co.uk", "DS"),
        ("_dmarc.example.co.uk", "TXT"),
        ("_domainkey.example.co.uk", "TXT"),
        ("_mta-sts.example.co.uk", "TXT"),
        ("_smtp._tls.example.co.uk", "TXT"),
    ]:
        assert expected in queries
    # RFC 8659 3: CAA is searched up to but not including the root, past the registrable domain
    assert [name for name, rdtype in queries if rdtype == "CAA"] == [
        "shop.example.co.uk",
        "example.co.uk",
        "co.uk",
        "uk",
    ]
    assert len(queries) == len(set(queries))


def test_caa_is_asked_at_every_parent_but_a_host_of_many_labels_costs_a_bounded_number() -> None:
    assert [n for n, t in dns_queries("alice.github.io") if t == "CAA"] == ["alice.github.io", "github.io", "io"]
    deep = ".".join(["a"] * 40) + ".example.com"
    asked = [n for n, t in dns_queries(deep) if t == "CAA"]
    # The names dropped are those just below the registrable domain: it and its parents are always asked
    assert len(asked) == MAX_CAA_NAMES and asked[0] == deep and asked[-2:] == ["example.com", "com"]
    eleven = "a.b.c.d.e.f.g.h.i.j.k.shop.example.co.uk"
    assert [n for n, t in dns_queries(eleven) if t == "CAA"][-3:] == ["example.co.uk", "co.uk", "uk"]


async def test_the_second_round_follows_cnames_mx_spf_includes_and_dmarc_consent(dns_server, scan_settings) -> None:
    domain = "follow-ups.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(f"www.{domain}", "CNAME", "gone-app.test")
    dns_server.set(domain, "MX", "10 mx.follow-ups.test")
    dns_server.set(domain, "TXT", '"v=spf1 include:spf-a.test -all"')
    dns_server.set("spf-a.test", "TXT", '"v=spf1 include:spf-b.test ~all"')
    dns_server.set("spf-b.test", "TXT", '"v=spf1 ip4:192.0.2.0/24 -all"')
    dns_server.set(f"_dmarc.{domain}", "TXT", '"v=DMARC1; p=reject; rua=mailto:d@reports-elsewhere.test"')

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    assert snapshot.get("gone-app.test", "A") is not None and snapshot.get("gone-app.test", "A").rcode == "NXDOMAIN"
    assert snapshot.get(f"mx.{domain}", "A") is not None
    assert snapshot.records("spf-b.test", "TXT") == ('"v=spf1 ip4:192.0.2.0/24 -all"',)
    assert snapshot.get(f"{domain}._report._dmarc.reports-elsewhere.test", "TXT") is not None


async def test_a_follow_up_that_fails_on_what_the_zone_sent_keeps_the_first_rounds_answers(
    dns_server, scan_settings, monkeypatch
) -> None:
    # Given a zone whose DMARC record trips the follow-ups (as pct=² once did: str.isdigit, then int())
    domain = "trips-follow-ups.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(f"_dmarc.{domain}", "TXT", '"v=DMARC1; p=reject; rua=mailto:d@reports-elsewhere.test"')

    def trips(text: str) -> object:
        raise ValueError("invalid literal for int() with base 10: '²'")

    monkeypatch.setattr("websec_app.scanner.fetch.dns.parse_dmarc", trips)
    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    # Then the DNS section still has the first round (a failed extra never sinks the scan)
    assert snapshot.records(f"_dmarc.{domain}", "TXT")
    assert snapshot.get(domain, "A") is not None


async def test_the_second_round_asks_what_spf_a_mx_and_exists_terms_need(dns_server, scan_settings) -> None:
    # RFC 7208 4.6.4: counting MX records per mx and void lookups needs these answers
    domain = "spf-terms.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "TXT", f'"v=spf1 a:web.{domain} include:inc.{domain} -all"')
    dns_server.set(f"inc.{domain}", "TXT", f'"v=spf1 mx exists:gone.{domain} exists:%{{i}}.x.{domain} -all"')

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    assert snapshot.get(f"web.{domain}", "A") is not None and snapshot.get(f"web.{domain}", "AAAA") is not None
    assert snapshot.get(f"inc.{domain}", "MX") is not None  # the bare mx of the included record
    assert snapshot.get(f"gone.{domain}", "A").rcode == "NXDOMAIN"  # type: ignore[union-attr]


async def test_spf_names_built_with_the_domain_macros_are_asked(dns_server, scan_settings) -> None:
    # RFC 7208 7.3: %{d} (the record's domain) and %{o} (the sender's: the scanned domain) are the same for every
    # sender, so the records and answers they name are fetched; %{i} (the sender's address) is not known ahead
    domain = "spf-macros.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "TXT", f'"v=spf1 include:_spf.%{{d}} exists:%{{i}}.x.{domain} redirect=%{{d}}.r.{domain}"')
    dns_server.set(f"_spf.{domain}", "TXT", '"v=spf1 a:out.%{o} mx:mail.%{d2} -all"')

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    assert snapshot.get(f"_spf.{domain}", "TXT") is not None and snapshot.get(f"{domain}.r.{domain}", "TXT") is not None
    assert snapshot.get(f"out.{domain}", "A") is not None and snapshot.get(f"mail.{domain}", "MX") is not None
    assert not [q for q in dns_server.queries if "%" in q.name or q.name.endswith(f".x.{domain}")]


async def test_the_mx_hosts_of_spf_mx_terms_are_asked_once_each_and_none_past_the_evaluations_end(
    dns_server, scan_settings
) -> None:
    # RFC 7208 5.4: an mx term looks up each MX host's addresses, and a failure of one is a temperror (5), which
    # only their answers can tell; none for a name of more than 10 MX records (a permerror first, 4.6.4)
    domain = "spf-mx-hosts.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "MX", f"10 mx.{domain}")
    dns_server.set(domain, "TXT", f'"v=spf1 mx mx:relay.{domain} mx:many.{domain} include:inc.{domain} -all"')
    dns_server.set(f"relay.{domain}", "MX", *(f"{n} host{n}.{domain}" for n in range(10)))
    dns_server.set(f"many.{domain}", "MX", *(f"{n} m{n}.{domain}" for n in range(11)))
    dns_server.set(f"inc.{domain}", "TXT", f'"v=spf1 mx:late.{domain} -all"')
    dns_server.set(f"late.{domain}", "MX", f"10 l0.{domain}")

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    # the 10 hosts of relay, both families
    assert all(snapshot.get(f"host{n}.{domain}", t) is not None for n in range(10) for t in ("A", "AAAA"))
    assert not [q for n in range(11) for q in dns_server.queries_for(f"m{n}.{domain}")]
    # the evaluation ends at many's 11 MX records: the include after it is never read, its mx never asked
    assert not dns_server.queries_for(f"late.{domain}") and not dns_server.queries_for(f"l0.{domain}")
    # the domain's own MX host, which the scan asks anyway, once
    assert sorted(q.rdtype for q in dns_server.queries_for(f"mx.{domain}")) == ["A", "AAAA"]


async def test_every_mx_host_the_spf_evaluation_compares_with_is_asked(dns_server, scan_settings) -> None:
    # Given two mx terms of 10 MX hosts each, the second with a prefix length of 0: every IPv4 sender passes once
    # one of its hosts has an IPv4 address (RFC 7208 5.4, 5.6). Each host has an A and an AAAA record: an empty
    # answer would be a void lookup for the senders of its family, the third a permerror (4.6.4)
    domain = "spf-two-relays.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "TXT", f'"v=spf1 mx:relay1.{domain} mx:relay2.{domain}/0 -all"')
    for relay in ("relay1", "relay2"):
        dns_server.set(f"{relay}.{domain}", "MX", *(f"{n} h{n}.{relay}.{domain}" for n in range(10)))
        for n in range(10):
            dns_server.set(f"h{n}.{relay}.{domain}", "A", f"192.0.2.{n}")
            dns_server.set(f"h{n}.{relay}.{domain}", "AAAA", f"2001:db8::{n}")

    snapshot = await fetch_dns(domain, Resolver(scan_settings))
    findings = check_dns(make_snapshot(f"https://{domain}/", dns=snapshot)).findings

    # Then the 40 lookups of the 20 hosts are asked (the fetch's own 20 left relay2's unasked, and the evaluation
    # read them as answered: dns.spf_strict for a record that lets every IPv4 server pass)
    hosts = [(f"h{n}.{relay}.{domain}", t) for relay in ("relay1", "relay2") for n in range(10) for t in ("A", "AAAA")]
    assert all(snapshot.get(*host) is not None for host in hosts)
    assert [f.outcome for f in findings if f.outcome.startswith("dns.spf")] == ["dns.spf_pass_all"]
    (note,) = [f.note for f in findings if f.outcome == "dns.spf_pass_all"]
    opener = f"mx:relay2.{domain}/0 -> h0.relay2.{domain} has an IPv4 address (RFC 7208 5.4)"
    assert note == f"{opener}: every IPv4 server on the internet passes; IPv6 senders are refused (-all)"


async def test_the_spf_lookups_are_asked_in_the_order_receivers_evaluate_the_terms(dns_server, scan_settings) -> None:
    # Given nine a terms after an include whose record holds four: receivers evaluate the include's first (RFC 7208
    # 5.2), and its u2, u3 and u4 do not exist: the third void lookup, the 5th DNS lookup, a permerror (4.6.4)
    domain = "spf-depth-first.test"
    dns_server.set(domain, "A", "127.0.0.9")
    tail = " ".join(f"a:t{n}.{domain}" for n in range(1, 10))
    dns_server.set(domain, "TXT", txt_strings(f"v=spf1 include:inc.{domain} {tail} -all"))
    dns_server.set(
        f"inc.{domain}", "TXT", txt_strings(" ".join(["v=spf1", *(f"a:u{n}.{domain}" for n in range(1, 5)), "-all"]))
    )
    for name in (*(f"t{n}" for n in range(1, 10)), "u1"):
        dns_server.set(f"{name}.{domain}", "A", "192.0.2.1")

    snapshot = await fetch_dns(domain, Resolver(scan_settings))
    findings = check_dns(make_snapshot(f"https://{domain}/", dns=snapshot)).findings

    # Then u4 is asked, and the record is the void-lookup permerror receivers reach: a fetch breadth first spent
    # its 24 term lookups on the nine a terms and three of the include's, and the evaluation, reading u4 as
    # answered, went on to the 11th lookup (dns.spf_too_many_lookups)
    assert snapshot.get(f"u4.{domain}", "A") is not None
    assert [f.outcome for f in findings if f.outcome.startswith("dns.spf")] == ["dns.spf_void_lookups"]


async def test_a_long_include_chain_is_followed_as_far_as_receivers_go(dns_server, scan_settings) -> None:
    domain = "include-chain.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(domain, "TXT", '"v=spf1 include:chain-0.include-chain.test -all"')
    for n in range(30):
        dns_server.set(f"chain-{n}.{domain}", "TXT", f'"v=spf1 include:chain-{n + 1}.{domain} -all"')

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    # RFC 7208 4.6.4: the 11th include is a permerror, its record never asked
    fetched = [a for a in snapshot.answers if a.name.startswith("chain-")]
    assert len(fetched) == LOOKUP_LIMIT


def txt_strings(text: str) -> str:
    """A TXT record in presentation format: `text` in character-strings of at most 255 octets."""
    return " ".join(f'"{text[i : i + 250]}"' for i in range(0, len(text), 250))


async def test_large_spf_records_are_read_off_the_event_loop(dns_server, scan_settings, monkeypatch) -> None:
    # A TXT record holds up to 64 KB, up to 0.27 s to read: the 12 records of one level read on the event loop
    # froze it for 2.5 s, every other scan of the process with it.
    domain = "large-spf.test"
    filler = " ".join(f"a:host{n}.{domain}" for n in range(800))  # 16 KB
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.set(
        domain, "TXT", txt_strings(" ".join(["v=spf1", *(f"include:i{n}.{domain}" for n in range(12)), "-all"]))
    )
    for n in range(12):
        dns_server.set(f"i{n}.{domain}", "TXT", txt_strings(f"v=spf1 {filler} -all"))
    read_on_a_loop = []

    def parse_spf_noting_the_loop(text: str) -> SpfRecord:
        read_on_a_loop.append(asyncio._get_running_loop() is not None)
        return parse_spf(text)

    monkeypatch.setattr("websec_app.scanner.fetch.dns.parse_spf", parse_spf_noting_the_loop)
    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    # The tree is followed as receivers evaluate it: i0, whose 10th a term is the 11th lookup (RFC 7208 4.6.4)
    assert snapshot.records(f"i0.{domain}", "TXT") and snapshot.get(f"host8.{domain}", "A") is not None
    assert snapshot.get(f"host9.{domain}", "A") is None and not dns_server.queries_for(f"i11.{domain}")
    # each record read once, and the included ones off the loop; the domain's own short record costs no thread
    assert read_on_a_loop == [True, False]
    assert len(filler) > 4 * MAX_SPF_CHARS_ON_LOOP


async def test_signatures_come_with_the_answers_of_a_signed_zone(dns_server, scan_settings) -> None:
    domain = "signed-fetch.test"
    dns_server.set(domain, "A", "127.0.0.9")
    dns_server.sign_zone(domain)

    snapshot = await fetch_dns(domain, Resolver(scan_settings))

    dnskey, soa, ds = snapshot.get(domain, "DNSKEY"), snapshot.get(domain, "SOA"), snapshot.get(domain, "DS")
    assert dnskey is not None and dnskey.records and dnskey.signatures
    assert soa is not None and soa.signatures[0].startswith("SOA 13 2 ")
    assert ds is not None and len(ds.records) == 1 and ds.signatures == ()  # the parent test. is unsigned


@pytest.fixture
def io_dns_server() -> Iterator[AuthDnsServer]:
    """A second fixture DNS server, for `io.` (alice.github.io), beside the session's `.test` one."""
    with AuthDnsServer(tld="io") as server:
        yield server


async def test_a_name_with_no_zone_of_its_own_is_followed_to_the_zone_holding_it(io_dns_server, scan_settings) -> None:
    # Given alice.github.io, a name in the signed github.io zone (its registrable domain by the private PSL)
    io_dns_server.add_zone("github.io")
    io_dns_server.add("alice.github.io", "A", "127.0.0.9")
    io_dns_server.sign_zone("github.io")
    settings = dataclasses.replace(scan_settings, dns_servers=(DnsServer(io_dns_server.ip, io_dns_server.port),))

    snapshot = await fetch_dns("alice.github.io", Resolver(settings))

    # Then the zone above it is found by its SOA, and its DNSKEY and DS are asked; io's zone is not
    soa, dnskey, ds = (snapshot.get("github.io", rdtype) for rdtype in ("SOA", "DNSKEY", "DS"))
    assert soa is not None and soa.records and dnskey is not None and dnskey.signatures and ds is not None
    assert ds.records
    assert snapshot.get("io", "SOA") is None and snapshot.get("io", "DNSKEY") is None


async def test_a_zone_apex_costs_no_query_for_the_zones_above_it(dns_server, scan_settings) -> None:
    domain = "own-zone.test"
    dns_server.set(domain, "A", "127.0.0.9")
    snapshot = await fetch_dns(domain, Resolver(scan_settings))
    assert snapshot.records(domain, "SOA")
    assert snapshot.get("test", "SOA") is None
    assert {(a.name, a.rdtype) for a in snapshot.answers if a.rdtype in ("SOA", "DNSKEY", "DS")} == {
        (domain, "SOA"),
        (domain, "DNSKEY"),
        (domain, "DS"),
    }


async def test_a_signed_zones_nsec3_parameters_are_asked_and_an_unsigned_zones_are_not(
    dns_server, scan_settings
) -> None:
    signed, unsigned = "nsec3-signed.test", "nsec3-unsigned.test"
    for domain in (signed, unsigned):
        dns_server.set(domain, "A", "127.0.0.9")
    dns_server.sign_zone(signed)
    dns_server.set(signed, "NSEC3PARAM", "1 0 10 aabb")

    signed_snapshot = await fetch_dns(signed, Resolver(scan_settings))
    unsigned_snapshot = await fetch_dns(unsigned, Resolver(scan_settings))

    assert signed_snapshot.records(signed, "NSEC3PARAM") == ("1 0 10 aabb",)
    assert unsigned_snapshot.get(unsigned, "NSEC3PARAM") is None
    assert [q for q in dns_server.queries_for(unsigned) if q.rdtype == "NSEC3PARAM"] == []


async def test_an_ip_literal_has_no_dns(scan_settings) -> None:
    assert (await fetch_dns("127.0.0.1", Resolver(scan_settings))).answers == ()


# -- MTA-STS policy -----------------------------------------------------------------------------------------


async def _mta_sts(host: str, settings):
    resolver = Resolver(settings)
    pinner = Pinner(resolver, settings)
    async with make_client(pinner, settings) as client:
        return await fetch_mta_sts(host, resolver, pinner, client, settings)


async def test_without_an_mta_sts_record_no_policy_is_fetched(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("nosts")
    policy_site = site_factory(simple_site(f"mta-sts.{host}"))
    assert await _mta_sts(host, scan_settings) == (None, None)
    assert policy_site.requests == []


async def test_the_policy_is_fetched_over_https_and_a_redirect_is_not_followed(
    site_factory, dns_server, scan_settings
) -> None:
    host = site_factory.unique_host("sts-redirect")
    dns_server.set(f"_mta-sts.{host}", "TXT", '"v=STSv1; id=1"')
    target = site_factory(simple_site(site_factory.unique_host("sts-elsewhere")))
    policy_site = site_factory(
        simple_site(
            f"mta-sts.{host}",
            routes={"/.well-known/mta-sts.txt": Redirect(f"https://{target.host}/policy.txt")},
        )
    )

    policy, tls = await _mta_sts(host, scan_settings)

    assert policy is not None and [r.status_code for r in policy.responses] == [301]
    assert policy.failure is not None and policy.failure.kind == "too_many_redirects"
    assert target.requests == [] and len(policy_site.requests_to("/.well-known/mta-sts.txt")) == 1
    assert tls is not None and tls.trusted and tls.hostname_matches and tls.protocols == ()


async def test_a_policy_host_that_does_not_resolve_is_recorded(dns_server, scan_settings) -> None:
    host = "sts-nohost.test"
    dns_server.set(host, "A", "127.0.0.9")
    dns_server.set(f"_mta-sts.{host}", "TXT", '"v=STSv1; id=1"')
    policy, tls = await _mta_sts(host, scan_settings)
    assert policy is not None and policy.failure is not None and policy.responses == ()
    assert tls is not None and tls.failure is not None and "does not exist" in tls.failure.message


async def test_the_policy_body_is_kept(site_factory, dns_server, scan_settings) -> None:
    host = site_factory.unique_host("sts-ok")
    dns_server.set(f"_mta-sts.{host}", "TXT", '"v=STSv1; id=1"')
    body = "version: STSv1\nmode: enforce\nmx: mx.example.test\nmax_age: 86400\n"
    site_factory(
        simple_site(
            f"mta-sts.{host}",
            routes={"/.well-known/mta-sts.txt": Response(200, [("Content-Type", "text/plain")], body)},
        )
    )
    policy, _ = await _mta_sts(host, scan_settings)
    assert policy is not None and policy.final is not None and policy.final.text() == body
