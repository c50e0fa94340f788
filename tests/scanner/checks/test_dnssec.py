"""DNSSEC validation of one zone (checks/dnssec.py) from hand-signed DS, DNSKEY and SOA answers: the work a
hostile zone can demand is capped (KeyTrap), and real keys still validate."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import dns.dnssec
import dns.name
import dns.rdata
import dns.rrset
import pytest
from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa
from dns.dnssectypes import Algorithm
from dns.rdtypes.ANY.DNSKEY import DNSKEY

from tests.factories import FIXED_NOW, dns_answer, make_dns
from websec_app.scanner.checks import dnssec as dnssec_check
from websec_app.scanner.checks.dnssec import MAX_VERIFICATIONS, TOO_MUCH_WORK, DnssecVerdict, validate_zone
from websec_app.scanner.snapshot import DnsAnswer

DOMAIN = "example.com"
NAME = dns.name.from_text(DOMAIN)
SOA = f"ns1.{DOMAIN}. hostmaster.{DOMAIN}. 1 3600 600 86400 300"


@dataclass
class Zone:
    """A zone signed as a real signer signs it; tests add keys, signatures and DS records to it."""

    algorithm: Algorithm = Algorithm.ECDSAP256SHA256
    private: Any = None
    dnskey: DNSKEY = field(init=False)
    extra_keys: list[DNSKEY] = field(default_factory=list)
    keys_before: list[DNSKEY] = field(default_factory=list)  # listed before the zone's own key

    def __post_init__(self) -> None:
        self.private = self.private or private_key(self.algorithm)
        self.dnskey = dns.dnssec.make_dnskey(self.private.public_key(), self.algorithm, flags=257)

    @property
    def key_tag(self) -> int:
        return dns.dnssec.key_id(self.dnskey)

    def keys(self) -> dns.rrset.RRset:
        return dns.rrset.from_rdata_list(NAME, 300, [*self.keys_before, self.dnskey, *self.extra_keys])

    def sign(self, rrset: dns.rrset.RRset) -> str:
        inception, expiration = FIXED_NOW - timedelta(hours=1), FIXED_NOW + timedelta(days=7)
        return dns.dnssec.sign(
            rrset,
            self.private,
            NAME,
            self.dnskey,
            inception=inception,
            expiration=expiration,
            policy=dns.dnssec.allow_all_policy,  # retired algorithms too: zones still carry them
        ).to_text()

    def ds(self, digest: str = "SHA256") -> str:
        return dns.dnssec.make_ds(NAME, self.dnskey, digest, policy=dns.dnssec.allow_all_policy).to_text()

    def verdict(
        self,
        *,
        ds: tuple[str, ...] | None = None,
        key_signatures: Callable[[str], list[str]] = lambda real: [real],
        soa_signatures: Callable[[str], list[str]] = lambda real: [real],
        more: tuple[DnsAnswer, ...] = (),
    ) -> DnssecVerdict | None:
        keys = self.keys()
        soa = dns.rrset.from_text(NAME, 300, "IN", "SOA", SOA)
        answers = (
            dns_answer(DOMAIN, "DS", *(self.ds(),) if ds is None else ds),
            dns_answer(DOMAIN, "DNSKEY", *(k.to_text() for k in keys), signatures=key_signatures(self.sign(keys))),
            dns_answer(DOMAIN, "SOA", SOA, signatures=soa_signatures(self.sign(soa))),
            *more,
        )
        return validate_zone(DOMAIN, make_dns(DOMAIN, *answers), FIXED_NOW)


def private_key(algorithm: Algorithm) -> Any:
    if algorithm in (Algorithm.DSA, Algorithm.DSANSEC3SHA1):
        return dsa.generate_private_key(1024)
    if algorithm in (Algorithm.RSAMD5, Algorithm.RSASHA1, Algorithm.RSASHA1NSEC3SHA1, Algorithm.RSASHA256):
        return rsa.generate_private_key(65537, 2048)
    return ec.generate_private_key(ec.SECP256R1())


def colliding_key(tag: int) -> DNSKEY:
    """A real P-256 zone key whose key tag is `tag`: the tag is a 16-bit checksum (RFC 4034 B) and the flags
    field is summed into it, so some flags value (zone key set, revoke clear) gives any tag wanted."""
    while True:
        public = ec.generate_private_key(ec.SECP256R1()).public_key()
        unflagged = dns.dnssec.make_dnskey(public, Algorithm.ECDSAP256SHA256, flags=0)
        wire = unflagged.to_digestable()
        base = sum(byte << 8 if i % 2 == 0 else byte for i, byte in enumerate(wire))
        for flags in range(0x0100, 0x10000):
            total = base + flags
            if flags & 0x0080 == 0 and (total + (total >> 16)) & 0xFFFF == tag:
                key = dns.dnssec.make_dnskey(public, Algorithm.ECDSAP256SHA256, flags=flags)
                assert dns.dnssec.key_id(key) == tag
                return key


def forged(real_signature: str, tag: int, count: int) -> list[str]:
    """`count` signatures shaped like `real_signature` that name key `tag` and verify with no key."""
    rrsig = dns.rdata.from_text("IN", "RRSIG", real_signature)
    return [rrsig.replace(key_tag=tag, signature=os.urandom(64)).to_text() for _ in range(count)]


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the public-key verifications dnspython attempts (one per signature and key tried)."""
    attempts: list[int] = []
    verify = dns.dnssec._validate_signature  # type: ignore[attr-defined]

    def counted(*args: Any) -> None:
        attempts.append(1)
        verify(*args)

    monkeypatch.setattr(dns.dnssec, "_validate_signature", counted)
    yield attempts


# -- KeyTrap (CVE-2023-50387) ----------------------------------------------------------------------


def test_many_signatures_over_many_colliding_keys_cost_a_bounded_number_of_verifications(verifications) -> None:
    # Given a zone whose SOA carries 12 forged signatures naming a key tag that 12 of its keys share
    # (checked naively: 144 verifications; a real KeyTrap zone asks for ~460,000, ~40 s of CPU)
    tag = 4242
    zone = Zone(extra_keys=[colliding_key(tag) for _ in range(12)])

    # When it is validated
    verdict = zone.verdict(soa_signatures=lambda real: forged(real, tag, 12))

    # Then the work stops at the cap, and the zone is broken as validating resolvers find it
    assert verdict is not None and verdict.status == "broken"
    assert TOO_MUCH_WORK in verdict.note and "SOA" in verdict.note
    assert len(verifications) <= MAX_VERIFICATIONS


def test_many_forged_signatures_over_the_dnskey_set_are_capped_too(verifications) -> None:
    zone = Zone()
    verdict = zone.verdict(key_signatures=lambda real: [*forged(real, zone.key_tag, 40), real])
    assert verdict is not None and verdict.status == "broken" and TOO_MUCH_WORK in verdict.note
    assert len(verifications) <= dnssec_check.MAX_SIGNATURES_PER_RRSET


def test_a_ds_naming_a_tag_that_many_keys_share_is_compared_with_a_few_of_them_only() -> None:
    # Given the zone's own key listed after four other keys with the same key tag
    zone = Zone()
    zone.keys_before = [colliding_key(zone.key_tag) for _ in range(dnssec_check.MAX_KEYS_PER_TAG)]

    verdict = zone.verdict()

    assert verdict is not None and verdict.status == "broken" and TOO_MUCH_WORK in verdict.note


def test_real_keys_still_validate_past_a_forged_signature_and_beside_a_colliding_key() -> None:
    # Given a signed zone with one more key sharing its key tag, and a forged SOA signature before the real one
    zone = Zone()
    zone.extra_keys = [colliding_key(zone.key_tag)]

    verdict = zone.verdict(soa_signatures=lambda real: [*forged(real, zone.key_tag, 1), real])

    # Then it validates: the caps leave room for what real zones carry
    assert verdict is not None and verdict.status == "secure", verdict


# -- algorithms and digests validators do not accept ------------------------------------------------


@pytest.mark.parametrize("algorithm", [Algorithm.RSAMD5, Algorithm.DSA, Algorithm.DSANSEC3SHA1])
def test_a_zone_signed_only_with_a_retired_algorithm_is_unsigned_to_resolvers_not_broken(algorithm) -> None:
    # RFC 8624 3.1: MUST NOT validate; RFC 4035 5.2: no supported algorithm in the DS set means insecure
    verdict = Zone(algorithm).verdict()
    assert verdict is not None and verdict.status == "unsigned"
    assert (
        f"algorithm {algorithm.name} ({algorithm.value})" in verdict.note
        and "treat the zone as unsigned" in verdict.note
    )


def test_a_ds_set_of_gost_digests_only_is_unsigned_to_resolvers_not_an_error() -> None:
    zone = Zone()
    gost = dns.rdata.from_text("IN", "DS", zone.ds()).replace(digest_type=3, digest=b"\x01" * 32)
    verdict = zone.verdict(ds=(gost.to_text(),))
    assert verdict is not None and verdict.status == "unsigned"
    assert "digest type GOST (3)" in verdict.note


def test_a_retired_algorithm_beside_a_current_one_is_ignored() -> None:
    zone = Zone()
    retired = Zone(Algorithm.DSA)
    verdict = zone.verdict(ds=(retired.ds(), zone.ds()))
    assert verdict is not None and verdict.status == "secure"


# -- the strongest digest decides (RFC 4509 3) ------------------------------------------------------


def test_a_matching_sha1_ds_beside_a_sha256_ds_that_matches_nothing_is_broken() -> None:
    # Given the parent's SHA-256 DS names another key, and its SHA-1 DS the zone's key
    zone, other = Zone(), Zone()
    verdict = zone.verdict(ds=(zone.ds("SHA1"), other.ds("SHA256")))
    # Then a validator uses only the SHA-256 one: a downgrade to SHA-1 is not accepted
    assert verdict is not None and verdict.status == "broken"
    assert "matches the DS" in verdict.note


def test_a_zone_with_matching_sha1_and_sha256_ds_records_validates() -> None:
    zone = Zone()
    verdict = zone.verdict(ds=(zone.ds("SHA1"), zone.ds("SHA256")))
    assert verdict is not None and verdict.status == "secure"


# -- SHA-1, still validated, retired for signing (RFC 8624 3.1, 3.3) --------------------------------


@pytest.mark.parametrize("algorithm", [Algorithm.RSASHA1, Algorithm.RSASHA1NSEC3SHA1])
def test_a_zone_signed_with_a_sha1_algorithm_is_valid_with_a_note_to_re_sign_it(algorithm) -> None:
    verdict = Zone(algorithm).verdict()
    assert verdict is not None and verdict.status == "secure"
    assert f"signed with {algorithm.name} (algorithm {algorithm.value}), a SHA-1 algorithm" in verdict.note
    assert "re-sign it with ECDSAP256SHA256 (algorithm 13)" in verdict.note


def test_a_sha1_only_ds_is_valid_with_a_note_to_publish_a_sha256_one() -> None:
    zone = Zone()
    verdict = zone.verdict(ds=(zone.ds("SHA1"),))
    assert verdict is not None and verdict.status == "secure"
    assert "the DS in the parent uses only SHA-1 (digest type 1)" in verdict.note


def test_a_zone_signed_with_ecdsa_and_a_sha256_ds_has_no_such_note() -> None:
    verdict = Zone().verdict()
    assert verdict is not None
    assert verdict.note == "the DS in the parent matches the zone's key, and the DNSKEY and SOA signatures verify"


# -- NSEC3 parameters (RFC 9276 3.1) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("param", "said"),
    [
        ("1 0 500 aabbccddeeff0011", "NSEC3 uses 500 extra iterations and a salt of 8 bytes: RFC 9276 3.1"),
        ("1 1 1 -", "NSEC3 uses 1 extra iteration: RFC 9276 3.1"),
        ("1 0 0 ab", "NSEC3 uses a salt of 1 byte: RFC 9276 3.1"),
    ],
)
def test_nsec3_with_extra_iterations_or_a_salt_is_noted(param: str, said: str) -> None:
    verdict = Zone().verdict(more=(dns_answer(DOMAIN, "NSEC3PARAM", param),))
    assert verdict is not None and verdict.status == "secure" and said in verdict.note


def test_nsec3_as_rfc_9276_asks_and_no_nsec3_at_all_say_nothing() -> None:
    for more in ((dns_answer(DOMAIN, "NSEC3PARAM", "1 0 0 -"),), (dns_answer(DOMAIN, "NSEC3PARAM"),), ()):
        verdict = Zone().verdict(more=more)
        assert verdict is not None and "NSEC3" not in verdict.note
