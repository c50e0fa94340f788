"""Which zone signs an MX host's TLSA records (records/dane.py): the fetch asks that zone's keys, the check
validates with them. A signature naming a zone that is not above the records (what a hostile zone can send) is
not followed: the fetch asks nothing of that name, and the check validates in the zone it would take anyway."""

from __future__ import annotations

import pytest

from websec_app.scanner.records.dane import dane_name, dane_zone
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
