"""DANE for the web server (RFC 6698, RFC 7671; checks/tls_dane.py): TLSA records at the host's HTTPS port, in the
fixture DNS server's zones, held to the certificate the site serves. The records are added once the site is up, at
the port it listens on (the TLSA name carries the port: _<port>._tcp.<host>)."""

from __future__ import annotations

import dataclasses
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.fixtures import catalog
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SiteFactory, TlsConfig
from tests.pdf_text import pdf_pages
from websec_app.scanner import scan
from websec_app.services.pdf import render_scan_pdf
from websec_app.settings import Settings


def _spki_sha256(certificate: x509.Certificate) -> str:
    spki = certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).hexdigest()


async def _scan_with_tlsa(
    site_factory: SiteFactory,
    pki: Pki,
    scan_settings: Settings,
    prefix: str,
    tlsa,
    *,
    dnssec: bool = True,
    kind: str = "valid",
) -> tuple[str, dict]:
    """The best-practice site at a host of its own, serving a certificate of `kind` (tests/fixtures/pki.py), with
    `tlsa(leaf, intermediate)`'s records at its HTTPS port."""
    host = site_factory.unique_host(prefix)
    issued = pki.issue(kind, (host,))
    site = catalog.best_practices(host, tls=TlsConfig(context=issued.server_context()))
    running = site_factory(dataclasses.replace(site, dnssec=dnssec))
    for record in tlsa(issued.certificate, issued.chain[1]):
        site_factory.dns.add(f"_{running.https_port}._tcp.{host}", "TLSA", record)
    return f"_{running.https_port}._tcp.{host}", (await scan(running.url, scan_settings)).to_dict()


def _dane(body: dict) -> list[dict]:
    return [f for f in body["tls"]["findings"] if f["check"].startswith("tls.dane")]


async def test_a_record_for_the_served_key_is_dane_and_a_single_one_is_told_to_roll_over(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    name, body = await _scan_with_tlsa(
        site_factory, pki, scan_settings, "webdane", lambda leaf, _: [f"3 1 1 {_spki_sha256(leaf)}"]
    )
    [dane] = _dane(body)
    assert (dane["check"], dane["status"], dane["deduction"]) == ("tls.dane_valid", "good", 0)
    assert dane["note"].startswith(f"{name}: 3 1 1 matches the certificate presented, and DNSSEC proves the records")
    assert "it is the only usable record: publish the next key's" in dane["note"]
    assert body["tls"]["tlsa"] == {
        "name": name,
        "records": [body["tls"]["tlsa"]["records"][0]],
        "dnssec": "secure",
        "matches": True,
    }
    assert body["grade"] == "A+"


async def test_a_record_for_the_issuing_ca_and_a_pkix_record_match_without_rollover_advice(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    _, body = await _scan_with_tlsa(
        site_factory,
        pki,
        scan_settings,
        "webdane-ta",
        lambda _, intermediate: [f"2 1 1 {_spki_sha256(intermediate)}", f"0 1 1 {_spki_sha256(intermediate)}"],
    )
    [dane] = _dane(body)
    assert dane["check"] == "tls.dane_valid" and ": 2 1 1 matches" in dane["note"]
    assert "roll" not in dane["note"] and "only usable record" not in dane["note"]


async def test_a_certificate_renewed_with_a_new_key_fails_its_records_and_is_given_the_record_to_publish(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    stale = "3 1 1 " + "a1" * 32  # the key before the renewal
    name, body = await _scan_with_tlsa(site_factory, pki, scan_settings, "webdane-stale", lambda *_: [stale])
    [dane] = _dane(body)
    assert (dane["check"], dane["status"], dane["deduction"]) == ("tls.dane_mismatch", "bad", 2)
    assert f"matches none of the TLSA records at {name}" in dane["note"]
    leaf = pki.issue("valid", (name.split(".", 2)[2],)).certificate
    assert f"`{name}. IN TLSA 3 1 1 {_spki_sha256(leaf)}`" in dane["fix"]
    assert "--reuse-key" in dane["fix"]
    assert body["tls"]["tlsa"]["matches"] is False
    # the PDF names the records for what they are (the dns section's "dane" is the mail servers')
    text = " ".join(" ".join(pdf_pages(render_scan_pdf(body))).split())
    assert f"DANE (TLSA records for HTTPS) Name: {name}; Records: {stale}" in text


async def test_records_in_an_unsigned_zone_have_no_effect(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    name, body = await _scan_with_tlsa(
        site_factory,
        pki,
        scan_settings,
        "webdane-unsigned",
        lambda leaf, _: [f"3 1 1 {_spki_sha256(leaf)}"],
        dnssec=False,
    )
    [dane] = _dane(body)
    assert (dane["check"], dane["status"], dane["deduction"]) == ("tls.dane_ignored", "warn", 0)
    assert dane["note"].endswith(": clients ignore them") and "not DNSSEC-secure" in dane["note"]
    assert "Sign the zone" in dane["fix"] and name in dane["fix"]
    assert body["tls"]["tlsa"]["dnssec"] == "unproven"


async def test_a_host_without_tlsa_records_is_told_nothing_of_dane(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    _, body = await _scan_with_tlsa(site_factory, pki, scan_settings, "webdane-none", lambda *_: [])
    assert _dane(body) == [] and "tlsa" not in body["tls"]
    assert body["grade"] == "A+"


async def test_a_pkix_record_for_the_root_the_server_does_not_send_matches_the_trust_stores(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    """A PKIX-TA(0) record of the root's whole certificate: the server sends leaf and intermediate, and the scan holds
    the record to the root its trust store holds (`TlsHandshake.anchor`)."""
    root = hashlib.sha256(pki.root_cert.public_bytes(Encoding.DER)).hexdigest()
    _, body = await _scan_with_tlsa(site_factory, pki, scan_settings, "webdane-root", lambda *_: [f"0 0 1 {root}"])
    [dane] = _dane(body)
    assert dane["check"] == "tls.dane_valid" and ": 0 0 1 matches" in dane["note"]


async def test_a_pkix_ee_record_for_a_certificate_browsers_refuse_says_why_it_does_not_hold(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    """PKIX-EE(1) names the served key, but the chain is not one browsers trust: DANE clients refuse it too (RFC 6698
    2.1.1), and the note says why rather than that nothing matched."""
    _, body = await _scan_with_tlsa(
        site_factory,
        pki,
        scan_settings,
        "webdane-pkix",
        lambda leaf, _: [f"1 1 1 {_spki_sha256(leaf)}"],
        kind="untrusted_chain",
    )
    [dane] = _dane(body)
    assert dane["check"] == "tls.dane_mismatch"
    assert "(its PKIX-TA and PKIX-EE records hold only for a certificate browsers accept: " in dane["note"]
