"""Which zone signs an MX host's TLSA records (records/dane.py): the fetch asks that zone's keys, the check
validates with them. A signature naming a zone that is not above the records (what a hostile zone can send) is
not followed: the fetch asks nothing of that name, and the check validates in the zone it would take anyway."""

from __future__ import annotations

import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.fixtures.pki import Pki
from websec_app.scanner.records.dane import dane_match, dane_name, dane_zone, parse_tlsa, spki_sha256
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
    for unusable in (f"1 1 1 {hashlib.sha256(spki).hexdigest()}", f"3 2 1 {hashlib.sha256(spki).hexdigest()}"):
        record = parse_tlsa(unusable)
        assert record is not None and not record.usable and not record.matches(der)
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
