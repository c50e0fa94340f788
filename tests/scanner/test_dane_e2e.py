"""DANE for the domain's mail (RFC 7672, checks/dns_dane.py) against the fixture DNS server's signed zones: TLSA
records count only when DNSSEC proves them and the MX records, and protect the domain's mail only when every MX
host has them. A domain with DANE and no MTA-STS is told what MTA-STS would add, not that nothing protects it."""

from __future__ import annotations

import dataclasses

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import SiteFactory
from tests.scanner.test_dns_e2e import _mail_records, dns_good, dns_problems
from websec_app.scanner import scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.fetch import fetch_snapshot
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings

TLSA = "3 1 1 " + "a1" * 32  # DANE-EE, the SPKI, SHA-256 (RFC 7671 5.1)


async def _scan_mail_domain(
    site_factory: SiteFactory, scan_settings: Settings, prefix: str, *, records=(), dnssec=True
):
    """A best-practice site whose domain receives mail at mx.<host> (no MTA-STS), with `records(host)` added."""
    host = site_factory.unique_host(prefix)
    site = catalog.best_practices(host)
    kept = tuple(r for r in site.dns if r[1] not in ("MX", "TXT"))
    extra = tuple(records(host)) if callable(records) else tuple(records)
    site = dataclasses.replace(site, dns=(*kept, *_mail_records(host, sts=False), *extra), dnssec=dnssec)
    running = site_factory(site)
    return host, (await scan(running.url, scan_settings)).to_dict()


def _dane(body: dict) -> list[dict]:
    return [f for f in body["dns"]["findings"] if f["check"].startswith("dns.dane")]


async def test_signed_tlsa_records_for_the_mx_host_are_dane_and_mta_sts_is_what_it_adds(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    host, body = await _scan_mail_domain(
        site_factory, scan_settings, "dane", records=lambda host: [(f"_25._tcp.mx.{host}", "TLSA", TLSA)]
    )
    [dane] = _dane(body)
    assert dane["check"] == "dns.dane_valid" and dane["status"] == "good"
    assert dane["note"] == f"TLSA records for mx.{host}, and the MX records, DNSSEC-valid"
    assert body["dns"]["dane"]["mx_hosts"] == {f"mx.{host}": "secure"}
    assert body["dns"]["dane"]["not_checked"] == [
        f"whether the TLSA records match the certificate of mx.{host}, which the scan could not ask (this scanner asks "
        "no mail server: WEBSEC_SMTP_PORT is 0)"
    ]
    # MTA-STS still counts its point, and its note says what it adds beside DANE
    assert dns_problems(body) == {"dns.mta_sts_missing": 1}
    [missing] = [f for f in body["dns"]["findings"] if f["check"] == "dns.mta_sts_missing"]
    assert missing["note"].endswith("MTA-STS adds those that do not (Gmail among them)")


async def test_a_domain_without_tlsa_records_is_told_nothing_of_dane(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    _, body = await _scan_mail_domain(site_factory, scan_settings, "nodane")
    assert _dane(body) == [] and "dane" not in body["dns"]
    [missing] = [f for f in body["dns"]["findings"] if f["check"] == "dns.mta_sts_missing"]
    assert "DANE" not in missing["note"]


async def test_tlsa_records_in_an_unsigned_zone_prove_nothing(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    host, body = await _scan_mail_domain(
        site_factory,
        scan_settings,
        "dane-unsigned",
        records=lambda host: [(f"_25._tcp.mx.{host}", "TLSA", TLSA)],
        dnssec=False,
    )
    [dane] = _dane(body)
    assert (dane["check"], dane["status"], dane["deduction"]) == ("dns.dane_incomplete", "warn", 0)
    # the zone's problem said once, for the MX records and the TLSA records alike
    assert dane["note"] == (
        f"the MX records and the TLSA records of mx.{host} prove nothing: the {host} zone is not DNSSEC-secure "
        "(no DS record in the parent zone and no DNSKEY)"
    )
    assert body["dns"]["dane"]["mx_hosts"] == {f"mx.{host}": "unproven"}
    assert "dns.mta_sts_missing" in dns_problems(body)
    assert "DANE" not in next(f["note"] for f in body["dns"]["findings"] if f["check"] == "dns.mta_sts_missing")


async def test_an_mx_host_without_tlsa_records_leaves_mail_to_it_unprotected(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    def records(host: str) -> list[tuple[str, str, str]]:
        return [
            (host, "MX", f"20 mx2.{host}"),
            (f"mx2.{host}", "A", "127.0.0.9"),
            (f"_25._tcp.mx.{host}", "TLSA", TLSA),
        ]

    host, body = await _scan_mail_domain(site_factory, scan_settings, "dane-half", records=records)
    [dane] = _dane(body)
    assert dane["check"] == "dns.dane_incomplete" and dane["note"] == f"mx2.{host} has no TLSA records"
    assert body["dns"]["dane"]["mx_hosts"] == {f"mx.{host}": "secure", f"mx2.{host}": "none"}


async def test_a_providers_mx_is_validated_in_the_providers_signed_zone(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    provider = site_factory.unique_host("mailprov")
    dns_server.add(f"mx1.{provider}", "A", "127.0.0.9")
    dns_server.add(f"_25._tcp.mx1.{provider}", "TLSA", TLSA)
    dns_server.sign_zone(provider)

    def records(host: str) -> list[tuple[str, str, str]]:
        return [(host, "MX", f"5 mx1.{provider}")]

    host, body = await _scan_mail_domain(site_factory, scan_settings, "dane-prov", records=records)
    # the domain's own MX host (mx.<host>, from the mail records) has none: one of two covered
    assert body["dns"]["dane"]["mx_hosts"] == {f"mx.{host}": "none", f"mx1.{provider}": "secure"}
    assert _dane(body)[0]["note"] == f"mx.{host} has no TLSA records"


async def test_a_mail_subdomain_signed_as_a_zone_of_its_own_is_validated_with_its_own_keys(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    """mail.<host> delegated as a zone of its own: its TLSA records are signed by that zone (the signer their RRSIG
    names), not by <host>'s, whose keys would refuse them."""
    holder: dict[str, str] = {}

    def after(host: str) -> None:
        mail = f"mail.{host}"
        dns_server.add_zone(mail)
        dns_server.add(f"mx.{mail}", "A", "127.0.0.9")
        dns_server.add(f"_25._tcp.mx.{mail}", "TLSA", TLSA)
        dns_server.sign_zone(mail)
        holder["mail"] = mail

    host = site_factory.unique_host("dane-sub")
    site = catalog.best_practices(host)
    kept = tuple(r for r in site.dns if r[1] not in ("MX", "TXT"))
    mail_records = [r for r in _mail_records(host, sts=False) if r[1] != "MX" and not r[0].startswith("mx.")]
    mx = (host, "MX", f"10 mx.mail.{host}")
    running = site_factory(dataclasses.replace(site, dns=(*kept, *mail_records, mx), dnssec=True))
    after(host)
    body = (await scan(running.url, scan_settings)).to_dict()
    assert body["dns"]["dane"]["mx_hosts"] == {f"mx.{holder['mail']}": "secure"}
    assert [f["check"] for f in _dane(body)] == ["dns.dane_valid"]


async def test_a_tlsa_name_that_is_an_alias_is_not_judged(site_factory: SiteFactory, scan_settings: Settings) -> None:
    def records(host: str) -> list[tuple[str, str, str]]:
        return [(f"_25._tcp.mx.{host}", "CNAME", f"_dane.{host}"), (f"_dane.{host}", "TLSA", TLSA)]

    host, body = await _scan_mail_domain(site_factory, scan_settings, "dane-alias", records=records)
    assert _dane(body) == []
    errors = [f for f in body["dns"]["findings"] if f["check"] == "check.error" and f.get("note")]
    assert any(f"_25._tcp.mx.{host} is an alias" in f["note"] for f in errors), errors
    assert dns_good(body) >= {"dns.mx_present"}


async def test_tlsa_records_their_signature_does_not_cover_are_not_dane(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    """The records as fetched, then changed under their signature (what a forged answer looks like): the
    signature is verified, not only counted."""
    host = site_factory.unique_host("dane-forged")
    site = catalog.best_practices(host)
    kept = tuple(r for r in site.dns if r[1] not in ("MX", "TXT"))
    tlsa = (f"_25._tcp.mx.{host}", "TLSA", TLSA)
    running = site_factory(dataclasses.replace(site, dns=(*kept, *_mail_records(host, sts=False), tlsa), dnssec=True))
    snapshot = await fetch_snapshot(parse_target(running.url), scan_settings)
    assert check_dns(snapshot).details["dane"]["mx_hosts"] == {f"mx.{host}": "secure"}
    forged = tuple(
        dataclasses.replace(a, records=("3 1 1 " + "b2" * 32,)) if a.rdtype == "TLSA" else a
        for a in snapshot.dns.answers
    )
    result = check_dns(dataclasses.replace(snapshot, dns=dataclasses.replace(snapshot.dns, answers=forged)))
    [dane] = [f for f in result.findings if f.outcome.startswith("dns.dane")]
    assert dane.outcome == "dns.dane_incomplete"
    assert dane.note is not None and dane.note.startswith(f"the TLSA records of mx.{host} do not validate: ")
