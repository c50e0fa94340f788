"""www under a policy that includes subdomains, on real sites (redirect.www_without_https).

example.com's HSTS with includeSubDomains makes every browser that keeps it open www.example.com over HTTPS only,
http:// links included, and a refused connection or a certificate error there has no way past it (RFC 6797 §12.1).
hstspreload.org refuses such a domain (`domain.www.no_tls`). The scan asks www's port 443 once, with no probes, and
only when the page's policy covers it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Redirect, RunningSite, Site, SiteFactory, TlsConfig, html
from websec_app.scanner import scan
from websec_app.scanner.fetch import _www_tls, fetch_snapshot
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.target import parse_target
from websec_app.settings import Settings


def _www_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["redirection"]["findings"] if f["check"] == "redirect.www_without_https"]


def _www_site(site_factory: SiteFactory, host: str, kind: str) -> RunningSite | None:
    """www.<host> as `kind`: nothing on port 443, an expired certificate; None for "apex-cert" (www is a name of the
    domain's own site, whose certificate names the domain alone)."""
    if kind == "refused":
        return site_factory(Site(names=(f"www.{host}",), tls=None, http=html("<p>the old www</p>")))
    if kind == "expired":
        return site_factory(catalog.simple_site(f"www.{host}", cert="expired"))
    return None


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("refused", "answers no HTTPS (connection refused"),
        ("expired", "is served with a certificate browsers refuse (the certificate expired on"),
        ("apex-cert", "is served with a certificate browsers refuse (the certificate names {host}, not www.{host})"),
    ],
)
async def test_a_domain_whose_policy_covers_a_www_without_working_https_is_told_so(
    kind: str, why: str, site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given example.test with every control right (HSTS with includeSubDomains and preload), and a www.example.test
    # that browsers keeping the policy cannot open over HTTPS
    host = site_factory.unique_host(f"www-{kind}")
    if kind == "apex-cert":
        tls = TlsConfig(cert_names=(host,), ciphers=catalog.MOZILLA_INTERMEDIATE_CIPHERS)
        site = site_factory(catalog.best_practices(host, extra_names=(f"www.{host}",), tls=tls))
    else:
        site = site_factory(catalog.best_practices(host))
    _www_site(site_factory, host, kind)

    # When the domain is scanned
    report = (await scan(site.url, scan_settings)).to_dict()

    # Then www is named with what fails there, at no cost to the grade, and the preload note says the list refuses it
    [finding] = _www_findings(report)
    assert finding["note"].startswith(f"www.{host} {why.format(host=host)}")
    assert finding["note"].endswith(
        f"the HSTS policy of {host} includes subdomains, so a browser that keeps it opens www.{host} over HTTPS only, "
        "and stops at that error"
    )
    assert (report["grade"], report["score"], finding["deduction"]) == ("A+", 100, 0)
    www = report["redirection"]["www_https"]  # the evidence says the same, what works or not
    assert (www["host"], www["works"]) == (f"www.{host}", False) and www["problem"].startswith(why.format(host=host))
    assert report["headers"]["Strict-Transport-Security"]["note"].startswith(
        f"preload is requested, but hstspreload.org refuses the domain while www.{host} "
    )


async def test_a_www_that_serves_https_under_the_policy_is_not_reported(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given example.test whose certificate names www.example.test too, on the same site
    host = site_factory.unique_host("www-works")
    site = site_factory(catalog.best_practices(host, extra_names=(f"www.{host}",)))
    report = (await scan(site.url, scan_settings)).to_dict()
    snapshot = await fetch_snapshot(parse_target(site.url), scan_settings)
    # Then the scan asked www (one handshake, no probes), found it working, and says so in the evidence alone
    assert snapshot.www_tls is not None and snapshot.www_tls.failure is None and snapshot.www_tls.protocols == ()
    assert _www_findings(report) == []
    assert report["redirection"]["www_https"] == {"host": f"www.{host}", "works": True, "problem": None}
    assert report["headers"]["Strict-Transport-Security"]["note"] == (
        "preload is requested; submit the domain at hstspreload.org to be built into browsers"
    )


@pytest.mark.parametrize(
    ("hsts", "www_exists"),
    [("max-age=63072000", True), ("max-age=63072000; includeSubDomains; preload", False)],
    ids=["no-includeSubDomains", "no-www"],
)
async def test_www_is_not_asked_when_the_policy_does_not_cover_it_or_it_has_no_address(
    hsts: str, www_exists: bool, site_factory: SiteFactory, scan_settings: Settings
) -> None:
    host = site_factory.unique_host("www-not-asked")
    site = site_factory(catalog.best_practices(host, replace_headers=[("Strict-Transport-Security", hsts)]))
    if www_exists:
        _www_site(site_factory, host, "refused")
    snapshot = await fetch_snapshot(parse_target(site.url), scan_settings)
    # Then there is nothing of www in the snapshot: with no includeSubDomains it was not asked at all, and without
    # a www its lookup found no address (the part ran, no handshake followed)
    assert snapshot.www_tls is None
    assert ("tls_www" in [t.part for t in snapshot.timings]) is not www_exists
    report = (await scan(site.url, scan_settings)).to_dict()
    assert _www_findings(report) == [] and "www_https" not in report["redirection"]


async def test_an_http_www_that_redirects_to_the_domain_is_judged_on_the_handshake_the_scan_made(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given http://www.example.test/ redirecting to https://example.test/ and nothing on www's port 443: the usual
    # "www to the bare domain" setup, which the domain's own policy then breaks for every browser that keeps it
    host = site_factory.unique_host("http-www")
    site_factory(catalog.best_practices(host))
    www = site_factory(Site(names=(f"www.{host}",), tls=None, http=Redirect(f"https://{host}/")))

    # When http://www.example.test/ is scanned
    report = (await scan(www.http_url, scan_settings)).to_dict()

    # Then www's port 443, which the scan tried anyway, is the finding's evidence
    assert report["final_url"] == f"https://{host}/"
    [finding] = _www_findings(report)
    assert finding["note"].startswith(f"www.{host} answers no HTTPS (connection refused")


async def test_a_www_whose_address_the_guard_refuses_is_not_connected_to(
    dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given the guard on (as in production) and a www whose name resolves inward: www.<domain> is a name the scanned
    # site's owner chooses, so it is guarded as every other name the scan reaches
    guarded = dataclasses.replace(scan_settings, allow_private_targets=False)
    dns_server.set("www.inward-www.test", "A", "10.0.0.1")
    # Then the handshake is not made (a handshake there would be a failure recorded, not None)
    assert await _www_tls("www.inward-www.test", Pinner(Resolver(guarded), guarded), guarded) is None
