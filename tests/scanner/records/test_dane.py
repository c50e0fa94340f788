"""Which zone signs an MX host's TLSA records (records/dane.py): the fetch asks that zone's keys, the check
validates with them. A signature naming a zone that is not above the records (what a hostile zone can send) is
not followed: the fetch asks nothing of that name, and the check validates in the zone it would take anyway."""

from __future__ import annotations

import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.fixtures.pki import IssuedCert, Pki
from websec_app.scanner.records.dane import (
    Tlsa,
    WebChain,
    dane_match,
    dane_name,
    dane_zone,
    parse_tlsa,
    spki_sha256,
    web_dane_match,
)
from websec_app.scanner.snapshot import DnsAnswer

TLSA = ("3 1 1 " + "a1" * 32,)


def _signed_by(signer: str) -> DnsAnswer:
    rrsig = f"TLSA 13 5 300 20270101000000 20261101000000 12345 {signer}. c2lnbmF0dXJl"
    return DnsAnswer(dane_name("mx.mail.example.com"), "TLSA", records=TLSA, signatures=(rrsig,))


@pytest.mark.parametrize(
    ("exchange", "tlsa", "zone"),
    [
        ("mx.example.com", None, "example.com"),  # the domain's own name, its own zone
        ("mx1.mail.example.net", None, "example.net"),  # a provider's: its registrable domain
        ("mx.mail.example.com", _signed_by("mail.example.com"), "mail.example.com"),  # a zone of its own
        ("mx.mail.example.com", _signed_by("MAIL.Example.COM"), "mail.example.com"),
        ("mx.mail.example.com", _signed_by("attacker.example"), "example.com"),  # not above the records
        ("mx.mail.example.com", _signed_by("mail.example.com.evil"), "example.com"),
    ],
)
def test_the_zone_of_the_tlsa_records(exchange: str, tlsa: DnsAnswer | None, zone: str) -> None:
    assert dane_zone(exchange, "example.com", tlsa) == zone


def test_the_tlsa_records_of_an_mx_host_are_at_port_25_over_tcp() -> None:
    assert dane_name("mx.example.com") == "_25._tcp.mx.example.com"


def _der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(Encoding.DER)


def test_tlsa_records_match_the_certificate_or_its_key_exact_or_hashed(pki: Pki) -> None:
    """RFC 6698 2.1: selector 0 the whole certificate, 1 its SubjectPublicKeyInfo; matching 0 exact, 1 SHA-256, 2
    SHA-512. PKIX-TA(0) and PKIX-EE(1) are unusable to SMTP (RFC 7672 3.1.3), as is a parameter no RFC defines."""
    leaf = pki.issue("valid", ("mx.dane-unit.test",))
    der = _der(leaf.certificate)
    spki = leaf.certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert spki_sha256(der) == hashlib.sha256(spki).hexdigest()
    for text in (
        f"3 0 0 {der.hex()}",
        f"3 0 1 {hashlib.sha256(der).hexdigest()}",
        f"3 1 1 {hashlib.sha256(spki).hexdigest()}",
        f"3 1 2 {hashlib.sha512(spki).hexdigest()}",
        "3 1 1 " + " ".join(hashlib.sha256(spki).hexdigest()[i : i + 16] for i in range(0, 64, 16)),  # dnspython's
    ):
        record = parse_tlsa(text)
        assert record is not None and record.usable and record.matches(der), text
    other = parse_tlsa("3 1 1 " + "00" * 32)
    assert other is not None and not other.matches(der)
    pkix = parse_tlsa(f"1 1 1 {hashlib.sha256(spki).hexdigest()}")  # a web client's, not SMTP's
    assert pkix is not None and not pkix.usable and pkix.usable_on_the_web and pkix.matches(der)
    assert dane_match([pkix], (der,), leaf_names_host=True, leaf_current=True) is None
    undefined = parse_tlsa(f"3 2 1 {hashlib.sha256(spki).hexdigest()}")
    assert undefined is not None and not undefined.usable_on_the_web and not undefined.matches(der)
    assert parse_tlsa("3 1 1 xyz") is None and parse_tlsa("3 1") is None


def test_dane_ta_needs_the_anchor_to_have_issued_the_chain_and_the_leaf_to_name_the_host(pki: Pki) -> None:
    leaf = pki.issue("valid", ("mx.dane-ta.test",))
    chain = tuple(_der(c) for c in leaf.chain)
    intermediate = parse_tlsa(f"2 0 1 {hashlib.sha256(chain[1]).hexdigest()}")
    assert intermediate is not None
    assert dane_match([intermediate], chain, leaf_names_host=True, leaf_current=True) == intermediate
    assert dane_match([intermediate], chain, leaf_names_host=False, leaf_current=True) is None
    assert dane_match([intermediate], chain, leaf_names_host=True, leaf_current=False) is None
    # the anchor must be sent above the leaf and have signed the way down: the same certificate after another's leaf
    stranger = tuple(_der(c) for c in pki.issue("untrusted_chain", ("mx.dane-ta.test",)).chain)
    assert dane_match([intermediate], (stranger[0], chain[1]), leaf_names_host=True, leaf_current=True) is None


def test_a_tlsa_rrset_of_hundreds_of_records_reads_each_certificate_once(pki: Pki) -> None:
    """A 64 KiB TLSA answer holds hundreds of records: each certificate of the chain is parsed once, not once a
    record."""
    from websec_app.scanner.records import dane

    leaf = pki.issue("valid", ("mx.dane-many.test",))
    chain = tuple(_der(c) for c in leaf.chain)
    issuer = leaf.chain[1].public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    decoys = [parse_tlsa(f"{usage} 1 1 {index:064x}") for usage in (3, 2) for index in range(250)]
    records = [record for record in decoys if record is not None]
    records.append(parse_tlsa(f"2 1 1 {hashlib.sha256(issuer).hexdigest()}"))  # type: ignore[arg-type]
    dane._spki.cache_clear()
    assert dane_match(records, chain, leaf_names_host=True, leaf_current=True) == records[-1]
    assert dane._spki.cache_info().misses == len(chain)


def test_a_certificate_cryptography_cannot_read_matches_no_key_record() -> None:
    record = parse_tlsa("3 1 1 " + "a1" * 32)
    assert record is not None and not record.matches(b"\x30\x03\x02\x01\x00")
    assert spki_sha256(b"\x30\x03\x02\x01\x00") is None


def _web_chain(
    pki: Pki, leaf: IssuedCert, *, trusted: bool = True, names_host: bool = True, current: bool = True
) -> WebChain:
    sent = tuple(_der(c) for c in leaf.chain)
    anchor = _der(pki.root_cert) if trusted else None
    return WebChain(sent, sent if trusted else (), anchor, names_host, current)


def _record(usage: int, certificate: x509.Certificate, selector: int = 1, matching: int = 1) -> Tlsa:
    selected = (
        _der(certificate)
        if selector == 0
        else certificate.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    )
    data = selected.hex() if matching == 0 else hashlib.new(("", "sha256", "sha512")[matching], selected).hexdigest()
    record = parse_tlsa(f"{usage} {selector} {matching} {data}")
    assert record is not None
    return record


def test_a_web_server_is_held_to_all_four_usages(pki: Pki) -> None:
    """RFC 6698 2.1.1 with RFC 7671: DANE-EE whatever the leaf's names and dates, DANE-TA with them, PKIX-EE and
    PKIX-TA only on a PKIX-valid chain (PKIX-TA's anchor known by its key's SHA-256)."""
    leaf = pki.issue("valid", ("www.dane-web.test",))
    intermediate, root = leaf.chain[1], pki.root_cert
    for usage, certificate in ((3, leaf.certificate), (2, intermediate), (1, leaf.certificate), (0, intermediate)):
        record = _record(usage, certificate)
        assert web_dane_match([record], _web_chain(pki, leaf)) == record, record.shown
    anchor = _record(0, root)
    assert web_dane_match([anchor], _web_chain(pki, leaf)) == anchor
    # DANE-EE alone stands without the PKIX checks; the others need the names, the dates, or the trusted path
    expired = _web_chain(pki, leaf, trusted=False, names_host=False, current=False)
    assert web_dane_match([ee := _record(3, leaf.certificate)], expired) == ee
    assert web_dane_match([_record(2, intermediate)], _web_chain(pki, leaf, names_host=False)) is None
    assert web_dane_match([_record(1, leaf.certificate)], _web_chain(pki, leaf, trusted=False)) is None
    assert web_dane_match([_record(0, intermediate)], _web_chain(pki, leaf, current=False)) is None
    # a record for another certificate (the test PKI's leaves share a key: the whole certificate tells them apart);
    # DANE-EE ranks first among several that match
    other = pki.issue("valid", ("other.dane-web.test",))
    assert web_dane_match([_record(3, other.certificate, selector=0)], _web_chain(pki, leaf)) is None
    assert web_dane_match([_record(1, leaf.certificate), ee], _web_chain(pki, leaf)) == ee


def test_a_pkix_ta_record_may_name_the_trust_anchor_the_server_does_not_send(pki: Pki) -> None:
    """The anchor comes from the trust store (fetch/tls.py keeps it): a PKIX-TA record of its certificate, whole or
    hashed, matches; one of another root does not."""
    leaf = pki.issue("valid", ("www.dane-web.test",))
    assert leaf.chain[-1] != pki.root_cert  # not sent
    for selector, matching in ((0, 0), (0, 1), (1, 2)):
        record = _record(0, pki.root_cert, selector, matching)
        assert web_dane_match([record], _web_chain(pki, leaf)) == record
    assert web_dane_match([_record(0, pki.untrusted_root_cert)], _web_chain(pki, leaf)) is None
