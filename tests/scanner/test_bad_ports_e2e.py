"""Ports browsers refuse to connect to (the Fetch Standard's bad ports: SMTP, IRC, SIP ...) are refused for
every connection the product makes: the scanned URL, a redirect hop, a certificate download, a callback.

Before, a scan of a public host's :25, or a site's redirect there, had the scanner send its HTTP request (a path,
Host and headers chosen by a stranger) to a mail server, and a callback_url could aim our POST at one. The test
sites listen on such ports (6667 and 6697, IRC's, which need no privilege) on their own loopback addresses, with
private targets allowed, as for every loopback site: the port is refused whatever that setting, before anything
is sent, so each site must count no connection at all."""

from __future__ import annotations

import httpx
import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Redirect, RunningSite, Site, SiteFactory, text
from websec_app.jobs.callbacks import checked_address, deliver
from websec_app.scanner import TargetRefused, scan
from websec_app.scanner.fetch.http import fetch_one, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.fetch.tls import guarded_ca_issuers
from websec_app.settings import Settings

IRC = 6667
IRC_TLS = 6697
REFUSED = "browsers refuse to connect to port"


def _on_port(site_factory: SiteFactory, prefix: str, port: int, *, tls: bool) -> RunningSite:
    """A site that would answer anything on `port`: HTTPS there when `tls`, plain HTTP otherwise."""
    routes = {"/": text("reached"), "/ca.crt": text("not a certificate"), "/hook": text("", status=204)}
    name = site_factory.unique_host(prefix)
    if tls:
        return site_factory(Site(names=(name,), routes=routes, default=text("reached"), https_port=port))
    return site_factory(Site(names=(name,), tls=None, http=routes, http_port=port))


def _untouched(site: RunningSite) -> None:
    assert site.accepted == {"https": 0, "http": 0}, "a connection reached the port"
    assert site.requests == []


def test_the_ports_of_these_tests_are_bad_ports() -> None:
    from websec_app.scanner.fetch.guard import BAD_PORTS

    assert {IRC, IRC_TLS, 25, 5060} <= BAD_PORTS
    assert not {80, 443, 8080, 8443, 6379} & BAD_PORTS


@pytest.mark.parametrize(("port", "tls"), [(IRC_TLS, True), (IRC, False)])
async def test_a_target_on_a_bad_port_is_refused_before_any_connection(
    port: int, tls: bool, site_factory: SiteFactory, scan_settings: Settings
) -> None:
    site = _on_port(site_factory, "badport", port, tls=tls)
    url = f"{'https' if tls else 'http'}://{site.host}:{port}/"
    with pytest.raises(TargetRefused) as refused:
        await scan(url, scan_settings)
    assert f"{REFUSED} {port}" in str(refused.value)
    _untouched(site)


async def test_a_redirect_to_a_bad_port_is_refused_before_any_connection(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    smtp_like = _on_port(site_factory, "badport-hop", IRC, tls=False)
    hop = f"http://{smtp_like.host}:{IRC}/"
    site = site_factory(catalog.simple_site(site_factory.unique_host("to-badport"), routes={"/": Redirect(hop)}))
    with pytest.raises(TargetRefused) as refused:
        await scan(site.url, scan_settings)
    assert str(refused.value).startswith(f"The site redirects to {hop}. Refusing to scan: {REFUSED} {IRC}")
    _untouched(smtp_like)


async def test_a_ca_issuers_url_on_a_bad_port_is_not_downloaded(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # The URL comes from the site's certificate: as untrusted as a redirect
    site = _on_port(site_factory, "badport-aia", IRC, tls=False)
    assert await guarded_ca_issuers(scan_settings)(f"http://{site.host}:{IRC}/ca.crt") is None
    _untouched(site)


async def test_the_scans_client_never_connects_to_a_bad_port_whoever_asks(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # The single fetches (the CORS probes, certificate downloads) go through the scan's client without
    # fetch_chain's check: its connections refuse the port themselves
    site = _on_port(site_factory, "badport-client", IRC, tls=False)
    pinner = Pinner(Resolver(scan_settings), scan_settings)
    address = await pinner.pin(site.host)
    async with make_client(pinner, scan_settings) as client:
        with pytest.raises(httpx.ConnectError, match=f"port {IRC}"):
            await fetch_one(client, f"http://{site.host}:{IRC}/", address, scan_settings.limits)
    _untouched(site)


async def test_a_callback_to_a_bad_port_is_refused_when_given_and_when_delivered(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    receiver = _on_port(site_factory, "badport-hook", IRC, tls=False)
    url = f"http://{receiver.host}:{IRC}/hook"
    with pytest.raises(TargetRefused, match=f"{REFUSED} {IRC}"):
        await checked_address(url, scan_settings)
    with pytest.raises(TargetRefused, match=f"{REFUSED} {IRC}"):
        await deliver(url, b"{}", "sha256=x", scan_settings)
    _untouched(receiver)


@pytest.mark.parametrize("port", ["0", "65536", "99999"])
async def test_a_callback_url_with_an_invalid_port_is_refused_when_given(
    port: str, best_site: RunningSite, scan_settings: Settings
) -> None:
    # Before, it was accepted, and every delivery then failed on it (a ValueError) or went to the default port
    with pytest.raises(TargetRefused, match="invalid port"):
        await checked_address(f"https://{best_site.host}:{port}/hook", scan_settings)
