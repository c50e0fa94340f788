"""End-to-end scans with fixture DNS zones: DNSSEC (signed, wrong DS, island, unsigned), SPF over 10
lookups, null MX, a dangling CNAME, MTA-STS and TLS-RPT for a domain that receives mail, a failed
lookup that must not fail the scan, and SPF terms whose lookup the server SERVFAILs or drops
(temperror). Each site is the best-practice site; only its zone differs. A zone for
`io.` serves alice.github.io under a platform's broken CAA RRset (fetched, checked and graded, no site)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from tests.factories import make_snapshot
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer, Faults, inject_faults
from tests.fixtures.sites import Response
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import diff_reports
from websec_app.scanner.fetch.dns import fetch_dns
from websec_app.scanner.fetch.resolve import Resolver
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.settings import DnsServer, Settings


def dns_problems(body: dict) -> dict[str, int]:
    return {f["check"]: f["deduction"] for f in body["dns"]["findings"] if f["status"] != "good"}


def dns_good(body: dict) -> set[str]:
    return {f["check"] for f in body["dns"]["findings"] if f["status"] == "good"}


async def scan_best(site_factory, scan_settings, prefix: str, *, records=None, dnssec: bool = True, after=None):
    """Scan a fresh best-practice site; `records(host)` adds DNS records, `after(host)` runs once it is up."""
    host = site_factory.unique_host(prefix)
    site = catalog.best_practices(host)
    site = dataclasses.replace(site, dns=(*site.dns, *(records(host) if records else ())), dnssec=dnssec)
    running = site_factory(site)
    if after is not None:
        after(host)
    return (await scan(running.url, scan_settings)).to_dict()


async def test_the_best_site_has_a_validated_signed_zone_null_mx_and_no_dns_deduction(best_site, scan_settings) -> None:
    body = (await scan(best_site.url, scan_settings)).to_dict()
    assert dns_problems(body) == {}
    assert {
        "dns.ipv6",
        "dns.null_mx",
        "dns.spf_strict",
        "dns.dmarc_enforced",
        "dns.dkim_not_needed",
        "dns.dnssec_valid",
        "dns.caa_present",
    } <= dns_good(body)
    dns = body["dns"]
    assert (dns["a"], dns["aaaa"], dns["cname"]) == ([best_site.ip], ["::1"], [])  # the natural fields stay
    assert dns["dnssec"]["status"] == "secure" and dns["mx"]["null_mx"] is True
    assert "mta_sts" not in dns and "tls_rpt" not in dns  # a domain that receives no mail needs neither


async def test_a_ds_that_matches_no_key_is_broken_dnssec(site_factory, dns_server, scan_settings) -> None:
    body = await scan_best(site_factory, scan_settings, "wrongds", after=lambda host: dns_server.set_ds(host, "wrong"))
    assert dns_problems(body) == {"dns.dnssec_broken": 10}
    assert "matches the DS" in body["dns"]["dnssec"]["note"]


async def test_a_signed_zone_without_ds_and_an_unsigned_zone(site_factory, dns_server, scan_settings) -> None:
    island = await scan_best(site_factory, scan_settings, "island", after=lambda h: dns_server.set_ds(h, "none"))
    unsigned = await scan_best(site_factory, scan_settings, "unsigned", dnssec=False)
    assert dns_problems(island) == {"dns.dnssec_no_ds": 3}
    assert dns_problems(unsigned) == {"dns.dnssec_unsigned": 3}
    assert (unsigned["score"], unsigned["grade"]) == (97, "A+")


async def test_an_spf_record_over_ten_lookups(site_factory, dns_server, scan_settings) -> None:
    def many_includes(host: str) -> None:
        includes = " ".join(f"include:i{n}.{host}" for n in range(6))
        dns_server.set(host, "TXT", f'"v=spf1 {includes} -all"')
        for n in range(6):
            dns_server.set(f"i{n}.{host}", "TXT", '"v=spf1 a mx -all"')
            # names that exist, with an address of each family, so the a and mx terms are not also void lookups
            # (RFC 7208 4.6.4: an empty AAAA answer is one for IPv6 senders)
            dns_server.set(f"i{n}.{host}", "A", "192.0.2.1")
            dns_server.set(f"i{n}.{host}", "AAAA", "2001:db8::1")
            dns_server.set(f"i{n}.{host}", "MX", f"10 i{n}.{host}.")

    body = await scan_best(site_factory, scan_settings, "spf11", after=many_includes)
    assert dns_problems(body) == {"dns.spf_too_many_lookups": 4}
    assert body["dns"]["spf"]["lookups"] > 10


async def test_spf_processing_limits_mx_records_and_void_lookups(site_factory, dns_server, scan_settings) -> None:
    # RFC 7208 4.6.4: an mx name with more than 10 MX records, and more than 2 void lookups
    def many_mx(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 mx:mail.{host} -all"')
        dns_server.set(f"mail.{host}", "MX", *(f"{n} mx{n}.{host}." for n in range(11)))

    def voids(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 include:_spf.{host} -all"')
        dns_server.set(f"_spf.{host}", "TXT", f'"v=spf1 a:gone1.{host} mx:gone2.{host} exists:gone3.{host} -all"')

    mx_body = await scan_best(site_factory, scan_settings, "spfmx", after=many_mx)
    void_body = await scan_best(site_factory, scan_settings, "spfvoid", after=voids)
    assert dns_problems(mx_body) == {"dns.spf_too_many_lookups": 4}
    assert dns_problems(void_body) == {"dns.spf_void_lookups": 4}
    assert void_body["dns"]["spf"]["void_lookups"] == 3


async def test_every_lookup_the_spf_evaluation_reaches_is_asked_in_its_order(
    site_factory, dns_server, scan_settings
) -> None:
    # Given two mx terms of 10 MX hosts each (RFC 7208 4.6.4 allows 10 a term), the second of prefix length 0 with
    # hosts that have an IPv4 address: every IPv4 server on the internet passes (5.4, 5.6). Each host has an A and
    # an AAAA record: an empty answer would be a void lookup for the senders of its family (4.6.4)
    def two_relays(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 mx:relay1.{host} mx:relay2.{host}/0 -all"')
        for relay in ("relay1", "relay2"):
            dns_server.set(f"{relay}.{host}", "MX", *(f"{n} h{n}.{relay}.{host}." for n in range(10)))
            for n in range(10):
                dns_server.set(f"h{n}.{relay}.{host}", "A", f"192.0.2.{n}")
                dns_server.set(f"h{n}.{relay}.{host}", "AAAA", f"2001:db8::{n}")

    body = await scan_best(site_factory, scan_settings, "spf-relays", after=two_relays)

    # Then the scan asks relay2's hosts too, and the record is open: the fetch's own cap of 20 host lookups left them
    # unasked, and the evaluation read them as answered (dns.spf_strict, a good finding)
    host = body["dns"]["domain"]
    assert dns_problems(body) == {"dns.spf_pass_all": 5}
    assert dns_server.queries_for(f"h9.relay2.{host}")


async def test_a_dangling_www_cname_is_critical(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("dangling")
    site = catalog.best_practices(host)
    site = dataclasses.replace(site, dns=(*site.dns, (f"www.{host}", "CNAME", "deleted-bucket.test")))
    body = (await scan(site_factory(site).url, scan_settings)).to_dict()
    assert dns_problems(body) == {"dns.dangling_cname": 25}
    finding = next(f for f in body["dns"]["findings"] if f["check"] == "dns.dangling_cname")
    assert finding["severity"] == "critical" and finding["subjects"] == [f"www.{host}"]
    assert finding["fix"].startswith(f"Delete the record now (www.{host} CNAME deleted-bucket.test)")
    assert (body["score"], body["grade"]) == (75, "B")


async def test_a_www_cname_that_resolves_is_fine(site_factory, scan_settings) -> None:
    body = await scan_best(site_factory, scan_settings, "alias", records=lambda host: ((f"www.{host}", "CNAME", host),))
    assert dns_problems(body) == {} and body["score"] == 100
    assert "dns.cnames_resolve" in dns_good(body)


def _mail_site(host: str, *, sts: bool = True):
    """The best-practice site, but for a domain that receives mail: MX, SPF mx, DKIM, TLS-RPT, MTA-STS."""
    site = catalog.best_practices(host)
    kept = tuple(r for r in site.dns if r[1] not in ("MX", "TXT"))  # AAAA and CAA stay
    return dataclasses.replace(site, dns=(*kept, *_mail_records(host, sts=sts)))


def _mail_records(host: str, *, sts: bool) -> tuple[tuple[str, str, str], ...]:
    records = [
        (host, "MX", f"10 mx.{host}"),
        (f"mx.{host}", "A", "127.0.0.9"),
        (host, "TXT", '"v=spf1 mx -all"'),
        (f"_dmarc.{host}", "TXT", f'"v=DMARC1; p=reject; rua=mailto:dmarc@{host}"'),
        (f"s1._domainkey.{host}", "TXT", '"v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="'),
        (f"_smtp._tls.{host}", "TXT", f'"v=TLSRPTv1; rua=mailto:tls@{host}"'),
    ]
    if sts:
        records.append((f"_mta-sts.{host}", "TXT", '"v=STSv1; id=20261122"'))
    return tuple(records)


POLICY = "version: STSv1\r\nmode: enforce\r\nmx: mx.{host}\r\nmax_age: 604800\r\n"


async def test_a_mail_domain_with_mta_sts_enforce_and_tls_rpt(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("mail")
    site_factory(_mail_site(host))
    policy = Response(200, [("Content-Type", "text/plain")], POLICY.format(host=host))
    policy_site = site_factory(catalog.simple_site(f"mta-sts.{host}", routes={"/.well-known/mta-sts.txt": policy}))

    body = (await scan(f"https://{host}/", scan_settings)).to_dict()

    assert dns_problems(body) == {}
    assert {"dns.mx_present", "dns.dkim_present", "dns.mta_sts_enforce", "dns.tlsrpt_present"} <= dns_good(body)
    assert body["dns"]["mta_sts"]["policy"] == {"mode": "enforce", "max_age": 604800, "mx": [f"mx.{host}"]}
    assert len(policy_site.requests_to("/.well-known/mta-sts.txt")) == 1
    assert body["score"] == 100


async def test_an_mta_sts_policy_host_with_a_wrong_certificate_is_invalid(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("mail-badcert")
    site_factory(_mail_site(host))
    policy = Response(200, [("Content-Type", "text/plain")], POLICY.format(host=host))
    site_factory(catalog.simple_site(f"mta-sts.{host}", cert="wrong_host", routes={"/.well-known/mta-sts.txt": policy}))
    body = (await scan(f"https://{host}/", scan_settings)).to_dict()
    assert dns_problems(body) == {"dns.mta_sts_invalid": 3}
    note = next(f["note"] for f in body["dns"]["findings"] if f["check"] == "dns.mta_sts_invalid")
    assert f"the certificate of mta-sts.{host} is not valid" in note


async def test_a_mail_domain_without_mta_sts(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("mail-nosts")
    site_factory(_mail_site(host, sts=False))
    body = (await scan(f"https://{host}/", scan_settings)).to_dict()
    assert dns_problems(body) == {"dns.mta_sts_missing": 1}


async def test_a_failed_lookup_is_could_not_check_never_a_failed_scan(site_factory, dns_server, scan_settings) -> None:
    # The fixture server refuses names outside its zones: the resolver reports SERVFAIL for them.
    body = await scan_best(
        site_factory,
        scan_settings,
        "refused",
        after=lambda host: dns_server.set(host, "TXT", '"v=spf1 include:spf.outside.example -all"'),
    )
    assert body["grade"] == "A+"
    errors = [f for f in body["dns"]["findings"] if f["check"] == "check.error"]
    assert errors and "spf.outside.example" in errors[0]["note"] and errors[0]["deduction"] == 0


async def test_the_worst_site_has_no_mail_authentication(worst_site, scan_settings) -> None:
    body = (await scan(worst_site.url, scan_settings)).to_dict()
    assert {
        "dns.no_ipv6",
        "dns.no_mx",
        "dns.spf_missing",
        "dns.dmarc_missing",
        "dns.dkim_missing",
        "dns.dnssec_unsigned",
        "dns.caa_missing",
    } <= set(dns_problems(body))
    assert body["grade"] == "F"
    assert all(f["severity"] == "minor" for f in body["dns"]["findings"])


@pytest.fixture
def io_dns_server() -> Iterator[AuthDnsServer]:
    """A second fixture DNS server, for `io.` (alice.github.io), beside the session's `.test` one."""
    with AuthDnsServer(tld="io") as server:
        yield server


async def test_a_broken_caa_rrset_of_the_platform_above_the_domain_is_overridden_at_the_domain(
    io_dns_server, scan_settings
) -> None:
    # Given alice.github.io, with no CAA records, under github.io (a public suffix), whose CAA RRset has an
    # unknown critical tag: the relevant RRset for alice.github.io (RFC 8659 3), so CAs must refuse (4.1)
    io_dns_server.add_zone("github.io")
    io_dns_server.add("alice.github.io", "A", "127.0.0.9")
    io_dns_server.add("github.io", "CAA", '128 futuretag "x"', '0 issue "digicert.com"')
    settings = dataclasses.replace(scan_settings, dns_servers=(DnsServer(io_dns_server.ip, io_dns_server.port),))
    snapshot = await fetch_dns("alice.github.io", Resolver(settings))

    result = check_dns(make_snapshot("https://alice.github.io/", dns=snapshot))
    report = grade([result], default_rulebook(), {"host": "alice.github.io", "domain": "alice.github.io"})

    # Then the fix is what the owner can do: publish their own RRset, which ends the climb before github.io's
    (finding,) = [f for f in report.sections["dns"]["findings"] if f["check"].startswith("dns.caa")]
    assert (finding["check"], finding["deduction"]) == ("dns.caa_invalid_inherited", 2)
    assert finding["fix"].startswith("Publish your own CAA records at alice.github.io, which certificate authorities")
    assert "ask whoever runs github.io to correct its CAA records" in finding["fix"]
    assert finding["note"].startswith("at github.io: unknown critical tag 'futuretag'")


# -- SPF terms whose lookup fails: temperror (RFC 7208 5), a check.error for spf, never an answer ------------------


@pytest.fixture
def faults(dns_server: AuthDnsServer, monkeypatch: pytest.MonkeyPatch) -> Faults:
    return inject_faults(dns_server, monkeypatch)


def spf_of(body: dict) -> list[tuple[str, list[str]]]:
    """The dns findings naming the spf family: (outcome, subjects)."""
    return [(f["check"], f["subjects"]) for f in body["dns"]["findings"] if "spf" in (f["families"] or ())]


def quick_dns(settings: Settings) -> Settings:
    """`settings` with 1 s for a DNS lookup (and the follow-ups), so a dropped query times out soon."""
    return dataclasses.replace(settings, limits=dataclasses.replace(settings.limits, dns_seconds=1.0))


async def test_an_spf_include_whose_record_servfails_is_a_temperror_not_a_verdict(
    site_factory, dns_server, scan_settings, faults
) -> None:
    # Given a record that includes another, whose TXT lookup the authoritative server answers SERVFAIL
    def include(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 include:_spf.{host} -all"')
        dns_server.set(f"_spf.{host}", "TXT", '"v=spf1 ip4:192.0.2.0/24 -all"')
        faults[(f"_spf.{host}", "TXT")] = "servfail"

    body = await scan_best(site_factory, scan_settings, "spf-inc-servfail", after=include)

    # Then receivers stop at the include with temperror (RFC 7208 5.2): SPF could not be checked, on that lookup,
    # and no verdict on "-all" is given
    host = body["dns"]["domain"]
    assert spf_of(body) == [("check.error", [f"_spf.{host} TXT"])]
    assert body["dns"]["spf"]["stopped_at"] == f"include:_spf.{host}"
    assert (dns_problems(body), body["grade"]) == ({"check.error": 0}, "A+")


async def test_an_spf_mx_term_whose_mx_host_address_servfails_is_a_temperror(
    site_factory, dns_server, scan_settings, faults
) -> None:
    # Given "mx:relay.<domain>", whose MX host's A lookup the authoritative server answers SERVFAIL
    def relay(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 mx:relay.{host} -all"')
        dns_server.set(f"relay.{host}", "MX", f"10 out.relay.{host}")
        dns_server.set(f"out.relay.{host}", "A", "192.0.2.25")
        faults[(f"out.relay.{host}", "A")] = "servfail"

    body = await scan_best(site_factory, scan_settings, "spf-mxhost", after=relay)

    # Then the scan asked the MX host's addresses, as the mx mechanism does (RFC 7208 5.4), and the failure stops
    # IPv4 senders with temperror; IPv6 senders' receivers ask AAAA alone, answered (none), and reach "-all"
    host = body["dns"]["domain"]
    assert spf_of(body) == [("check.error", [f"out.relay.{host} A"]), ("dns.spf_strict", [])]
    assert dns_server.queries_for(f"out.relay.{host}")


async def test_an_spf_a_term_whose_query_is_dropped_is_no_void_lookup(
    site_factory, dns_server, scan_settings, faults
) -> None:
    # Given two names that do not exist, and a third whose A query the server drops (its AAAA: NXDOMAIN)
    def voids(host: str, *, drop: bool) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 a:gone1.{host} a:gone2.{host} a:flaky.{host} -all"')
        faults.clear()
        if drop:
            faults[(f"flaky.{host}", "A")] = "drop"

    settings = quick_dns(scan_settings)
    host = site_factory.unique_host("spf-drop")
    site_factory(catalog.best_practices(host))
    voids(host, drop=False)
    good = (await scan(f"https://{host}/", settings)).to_dict()
    voids(host, drop=True)
    dropped = (await scan(f"https://{host}/", settings)).to_dict()

    # Then for IPv4 senders the timeout is no third void lookup (RFC 7208 4.6.4: NXDOMAIN or no records): no
    # permerror invented from it, but temperror (5); IPv6 senders' receivers ask AAAA alone, NXDOMAIN: their third
    # void lookup. The diff neither fixes nor brings a finding
    assert dns_problems(good) == {"dns.spf_void_lookups": 4}  # flaky does not exist either, when asked
    assert spf_of(dropped) == [("dns.spf_void_lookups", []), ("check.error", [f"flaky.{host} A"])]
    assert dns_problems(dropped) == {"check.error": 0, "dns.spf_void_lookups": 4}
    void = next(f for f in dropped["dns"]["findings"] if f["check"] == "dns.spf_void_lookups")
    assert "(for IPv6 senders: IPv4 senders stop before it, at a failed lookup)" in void["note"]
    changes = diff_reports(good, dropped)
    assert [c.name for c in (*changes.new, *changes.fixed, *changes.changed) if c.section == "dns"] == []


async def test_spf_terms_named_with_the_senders_values(site_factory, dns_server, scan_settings) -> None:
    # Given "a:%{h}": receivers look up the HELO name the sending server gives, which can be a domain of its own
    # resolving to its address (RFC 7208 7.3, 11.5); and a redirect= to a record named by the sender's local part
    def helo(host: str) -> None:
        dns_server.set(host, "TXT", '"v=spf1 a:%{h} -all"')

    def local_part(host: str) -> None:
        dns_server.set(host, "TXT", '"v=spf1 ip4:192.0.2.1 redirect=%{l}._spf.%{d}"')
        dns_server.set(f"alice._spf.{host}", "TXT", '"v=spf1 ip4:192.0.2.2 -all"')

    open_body = await scan_best(site_factory, scan_settings, "spf-helo", after=helo)
    unknown_body = await scan_best(site_factory, scan_settings, "spf-local", after=local_part)

    # Then every server passes (it was dns.spf_strict), the note naming the term and why
    assert dns_problems(open_body) == {"dns.spf_pass_all": 5}
    [finding] = [f for f in open_body["dns"]["findings"] if f["check"] == "dns.spf_pass_all"]
    assert "a:%{h} (a sending server chooses its HELO name, so it can name a domain that resolves" in finding["note"]
    # and the redirect is listed as not checked, with no verdict and no check.error (it was "SPF includes")
    assert spf_of(unknown_body) == [] and dns_problems(unknown_body) == {}
    assert unknown_body["dns"]["spf"]["not_checked"] == ["redirect=%{l}._spf.%{d}"]


@pytest.mark.parametrize(
    ("term", "zone"),
    [
        pytest.param("a:mail.{host}", lambda host: [("mail", "A", "192.0.2.25")], id="a-term"),
        pytest.param(
            "mx:relay.{host}",
            lambda host: [("relay", "MX", f"10 mail.{host}"), ("mail", "A", "192.0.2.25")],
            id="mx-term",
        ),
    ],
)
async def test_an_spf_terms_failed_aaaa_leaves_the_verdict_for_ipv4_senders(
    site_factory, dns_server, scan_settings, faults, term, zone
) -> None:
    # Given an a or mx term whose name has an A record, and whose AAAA lookup the server answers SERVFAIL
    def records(host: str) -> None:
        dns_server.set(host, "TXT", f'"v=spf1 {term.format(host=host)} -all"')
        for label, rdtype, value in zone(host):
            dns_server.set(f"{label}.{host}", rdtype, value)
        faults[(f"mail.{host}", "AAAA")] = "servfail"

    body = await scan_best(site_factory, scan_settings, "spf-aaaa", after=records)

    # Then receivers checking an IPv4 sender ask A alone (RFC 7208 5.3, 5.4) and reach "-all": the verdict stands
    # for them, and IPv6 senders' temperror is a check.error naming spf, on the AAAA lookup
    host = body["dns"]["domain"]
    assert spf_of(body) == [("check.error", [f"mail.{host} AAAA"]), ("dns.spf_strict", [])]
    strict = next(f for f in body["dns"]["findings"] if f["check"] == "dns.spf_strict")
    assert "(for IPv4 senders; IPv6 senders' result is not known: a lookup failed)" in strict["note"]
    assert body["dns"]["spf"]["all"] == "-all"
