"""A Teredo address (RFC 4380, 2001::/32) embeds two IPv4 addresses: its client's, where the packets go, and its
server's, where relays and peers send their bubbles (UDP 3544). The guard judged the client only, so a name
whose AAAA was a Teredo address with a public client and a loopback, private or metadata server was pinned and
connected to. Resolution only here: the fixed guard refuses before any connection is attempted."""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest

from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import SiteFactory
from websec_app.scanner.errors import TargetRefused
from websec_app.scanner.fetch.guard import refusal_reason
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.settings import Settings

PUBLIC_CLIENT = "8.8.8.8"


def teredo(server: str, client: str) -> str:
    """2001:0:<server>:<flags>:<port>:<client>, flags and port zero, the client obfuscated (RFC 4380 4)."""
    obfuscated_client = int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF
    return str(ipaddress.IPv6Address(0x20010000 << 96 | int(ipaddress.IPv4Address(server)) << 64 | obfuscated_client))


@pytest.fixture
def guarded(scan_settings: Settings) -> Settings:
    """The fixture DNS, the guard at its production default."""
    return dataclasses.replace(scan_settings, allow_private_targets=False)


def test_the_teredo_helper_builds_what_ipaddress_reads() -> None:
    assert ipaddress.IPv6Address(teredo("127.0.0.1", PUBLIC_CLIENT)).teredo == (
        ipaddress.IPv4Address("127.0.0.1"),
        ipaddress.IPv4Address(PUBLIC_CLIENT),
    )


@pytest.mark.parametrize(
    ("server", "category"),
    [
        ("127.0.0.1", "a loopback address"),
        ("10.0.0.5", "a private address"),
        ("169.254.169.254", "the cloud metadata service"),
        ("100.64.0.1", "a carrier-grade NAT (shared) address"),
        ("0.0.0.0", "an unspecified address"),
    ],
)
def test_a_teredo_address_with_a_public_client_and_a_non_public_server_is_refused(server: str, category: str) -> None:
    address = teredo(server, PUBLIC_CLIENT)
    reason = refusal_reason(address) or ""
    assert reason.startswith(f"{address} (a Teredo address whose server is {server}) is {category}"), reason


def test_a_teredo_address_whose_client_and_server_are_public_is_judged_by_them() -> None:
    assert refusal_reason(teredo("65.54.227.120", PUBLIC_CLIENT)) is None
    address = teredo("65.54.227.120", "127.0.0.1")
    assert refusal_reason(address) == f"{address} (Teredo form of 127.0.0.1) is a loopback address"


@pytest.mark.parametrize("server", ["127.0.0.1", "10.0.0.5", "169.254.169.254"])
async def test_a_name_whose_aaaa_is_a_teredo_address_with_a_private_server_is_refused(
    server: str, site_factory: SiteFactory, dns_server: AuthDnsServer, guarded: Settings
) -> None:
    # Given a public-looking name whose only address is a Teredo address with a public client and an inner server
    name = site_factory.unique_host("teredo")
    dns_server.add(name, "AAAA", teredo(server, PUBLIC_CLIENT))
    # When the scanner resolves and guards it (what every connection of a scan, a certificate download and a
    # callback goes through), Then it is refused, without naming the address
    with pytest.raises(TargetRefused) as refused:
        await Pinner(Resolver(guarded), guarded).pin(name)
    assert str(refused.value) == (
        f"Refusing to scan: {name} resolves to a private or reserved address. Only public addresses can be scanned."
    )
