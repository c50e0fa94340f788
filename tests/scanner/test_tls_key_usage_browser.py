"""A certificate's Key Usage fails the connection in Chromium exactly where the scanner reports tls.cert_key_usage.

Given fixture HTTPS sites serving test leaves whose Key Usage sets only some bits, over TLS 1.3 (a signed key
exchange) or over TLS 1.2 with RSA key exchange suites only, when headless Chromium (Debian's, through
Playwright) loads each, then it refuses with ERR_SSL_KEY_USAGE_INCOMPATIBLE exactly where the scanner's TLS
check finds tls.cert_key_usage: a signed exchange needs digitalSignature, RSA key exchange keyEncipherment
(RFC 8446 4.4.2.2, RFC 5246 7.4.2). OpenSSL, which the scanner's handshake uses, completes all of them.

Chromium trusts the leaf through --ignore-certificate-errors-spki-list (tests/scanner/browser.py), which clears
certificate verification errors only: the Key Usage check is BoringSSL's, in the handshake. Sync Playwright must
not run inside an event loop, so the test is synchronous and runs the fetch with asyncio.run.
"""

from __future__ import annotations

import asyncio
import ssl

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from tests.scanner.browser import chromium_for_site
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.settings import Settings

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: (leaf kind, Key Usage bits, RSA key exchange suites only?) -> does Chromium 156 refuse it over Key Usage?
CASES: dict[tuple[str, tuple[str, ...], bool], bool] = {
    ("service", ("digital_signature",), False): False,
    ("service", ("key_encipherment",), False): True,
    ("service", ("key_agreement",), False): True,
    ("rsa2048", ("digital_signature", "key_encipherment"), False): False,
    ("rsa2048", ("key_encipherment",), False): True,
    ("rsa2048", ("key_encipherment",), True): False,
    ("rsa2048", ("digital_signature",), True): True,
}


def test_chromium_refuses_over_key_usage_exactly_where_the_scanner_finds_it(
    site_factory: SiteFactory, pki: Pki, scan_settings: Settings
) -> None:
    refused, found = {}, {}
    for case in CASES:
        kind, key_usage, rsa_key_exchange = case
        # Given a site serving a leaf with these Key Usage bits
        name = site_factory.unique_host("ku-browser")
        issued = pki.issue(kind, (name,), key_usage=key_usage)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if rsa_key_exchange:
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            context.set_ciphers("AES128-GCM-SHA256:AES256-GCM-SHA384")
        context.load_cert_chain(issued.chain_path, issued.key_path)
        site = site_factory(Site(names=(name,), routes={"/": Response(200, [], b"ok")}, tls=TlsConfig(context=context)))
        try:
            # When Chromium loads it, and the scanner grades it
            with chromium_for_site(site, pki, leaf=issued.certificate) as browser:
                tab = browser.new_context().new_page()
                try:
                    tab.goto(f"https://{name}/")
                    refused[case] = False
                except playwright_api.Error as exc:
                    assert "ERR_SSL_KEY_USAGE_INCOMPATIBLE" in str(exc), (case, str(exc))
                    refused[case] = True
            tls = asyncio.run(fetch_tls(name, 443, site.ip, scan_settings, probes=False))
        finally:
            site.stop()
        assert tls.failure is None and tls.trusted, case
        findings = check_tls(make_snapshot(url=f"https://{name}/", tls=tls)).findings
        found[case] = "tls.cert_key_usage" in [f.outcome for f in findings]

    # Then Chromium refused exactly the connections the scanner reports
    assert refused == CASES
    assert found == CASES
