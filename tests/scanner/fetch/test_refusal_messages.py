"""What the guard and the resolver say when they refuse: never what a name resolved to (issue 12).

Anyone can submit a scan, so a refusal that named the address would turn the scanner into an
oracle for internal DNS ("tenpriv.test resolves to 10.0.0.5"). The message names the host the
user (or the site's redirect) gave, and says the address is private or reserved: nothing more.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Redirect, SiteFactory
from websec_app.scanner import scan
from websec_app.scanner.errors import TargetRefused, TargetUnreachable
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.settings import DnsServer, Settings

NOT_SHOWN = ("10.0.0.5", "10.0.0.1", "127.0.0.1", "169.254.169.254", "fd00", "::ffff", "loopback", "metadata")


@pytest.fixture
def guarded(scan_settings: Settings) -> Settings:
    return dataclasses.replace(scan_settings, allow_private_targets=False)


def assert_reveals_nothing(message: str) -> None:
    for text in NOT_SHOWN:
        assert text not in message, f"{text!r} leaked in {message!r}"


@pytest.mark.parametrize(
    ("records", "kind"),
    [
        ([("A", "10.0.0.5")], "private"),
        ([("A", "127.0.0.1")], "loopback"),
        ([("A", "169.254.169.254")], "metadata"),
        ([("AAAA", "::ffff:10.0.0.5")], "mapped"),
        ([("AAAA", "fd00:ec2::254")], "ipv6 metadata"),
        ([("A", "93.184.216.34"), ("A", "10.0.0.5")], "one public, one private"),
    ],
)
async def test_a_name_resolving_to_a_private_address_is_refused_without_naming_the_address(
    records: list[tuple[str, str]], kind: str, site_factory: SiteFactory, dns_server: AuthDnsServer, guarded: Settings
) -> None:
    name = site_factory.unique_host("tenpriv")
    for rdtype, value in records:
        dns_server.add(name, rdtype, value)
    pinner = Pinner(Resolver(guarded), guarded)
    with pytest.raises(TargetRefused) as refused:
        await pinner.pin(name)
    message = str(refused.value)
    assert f"{name} resolves to a private or reserved address" in message
    assert message.endswith("Only public addresses can be scanned.")
    assert_reveals_nothing(message)


@pytest.mark.parametrize("address", ["0.0.0.0", "224.0.0.1"])
async def test_a_redirect_to_a_refused_name_is_refused_without_naming_the_address(
    address: str, site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Unspecified and multicast addresses are refused even when private targets are allowed (as for
    # the loopback test site), so a whole scan can show the redirect's message.
    hidden = site_factory.unique_host("hidden")
    dns_server.add(hidden, "A", address)
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("to-hidden"), routes={"/": Redirect(f"https://{hidden}/")})
    )
    with pytest.raises(TargetRefused) as refused:
        await scan(site.url, scan_settings)
    message = str(refused.value)
    assert f"redirects to https://{hidden}/" in message
    assert f"{hidden} resolves to a private or reserved address" in message
    assert address not in message and "unspecified" not in message and "multicast" not in message


async def test_a_dns_failure_does_not_name_the_scanner_s_own_resolver(guarded: Settings) -> None:
    # A resolver that refuses every query (nothing listens there: a closed UDP port answers ICMP).
    limits = dataclasses.replace(guarded.limits, dns_seconds=1.0)
    settings = dataclasses.replace(guarded, dns_servers=(DnsServer("127.0.53.9", 9),), limits=limits)
    pinner = Pinner(Resolver(settings), settings)
    with pytest.raises(TargetUnreachable) as failed:
        await pinner.pin("anything.test")
    assert "anything.test" in str(failed.value)
    assert "127.0.53.9" not in str(failed.value)
