"""Which hosts browsers hold potentially trustworthy over http (W3C Secure Contexts §3.1): page analysis (mixed
content) and the CORS check (a cleartext origin allowed with credentials) read the one answer."""

from __future__ import annotations

import pytest

from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.cors import check_cors
from websec_app.scanner.checks.page import check_page
from websec_app.scanner.records.origins import same_site, trustworthy_host
from websec_app.scanner.snapshot import CorsProbe

TRUSTWORTHY = ["localhost", "app.localhost", "127.0.0.1", "127.8.9.10", "::1"]
NOT_TRUSTWORTHY = ["example.com", "localhost.example.com", "notlocalhost", "10.0.0.1", "::2", "0.0.0.0", ""]


@pytest.mark.parametrize("host", TRUSTWORTHY)
def test_localhost_and_loopback_addresses_are_trustworthy(host: str) -> None:
    assert trustworthy_host(host)


@pytest.mark.parametrize("host", NOT_TRUSTWORTHY)
def test_other_hosts_are_not(host: str) -> None:
    assert not trustworthy_host(host)


def _url(host: str) -> str:
    return f"http://[{host}]" if ":" in host else f"http://{host}"


@pytest.mark.parametrize("host", ["app.localhost", "127.8.9.10", "::1", "example.com", "10.0.0.1"])
def test_page_analysis_and_cors_agree_on_a_cleartext_origin(host: str) -> None:
    # Given an https page loading a script from http://<host>, and one allowing http://<host> with credentials
    page = make_snapshot(body=f'<html><head><script src="{_url(host)}/a.js"></script></head></html>')
    credentials = [("Access-Control-Allow-Origin", _url(host)), ("Access-Control-Allow-Credentials", "true")]
    probe = CorsProbe("null", "null", make_response(headers=[*credentials, ("Vary", "Origin")]))
    cors = check_cors(make_snapshot(cors_probes=(probe,)))

    # Then both call it cleartext exactly when the host is not potentially trustworthy
    mixed = any(f.outcome.startswith("page.mixed") for f in check_page(page).findings)
    cleartext = any(f.outcome == "cors.http_origin_credentials" for f in cors.findings)
    assert mixed == cleartext == (not trustworthy_host(host))


@pytest.mark.parametrize(
    ("origin", "url", "same"),
    [
        ("https://www.example.com", "https://example.com/a", True),
        ("https://example.com:8443", "https://api.example.com/", True),  # the port is no part of a site
        ("https://alice.github.io", "https://alice.github.io/", True),
        ("https://192.0.2.1", "https://192.0.2.1:8443/", True),
        ("http://example.com", "https://example.com/", False),  # schemeful: http:// is another site
        ("https://bob.github.io", "https://alice.github.io/", False),  # github.io is a public suffix
        ("https://example.com.websecprobeexample.com", "https://example.com/", False),
        ("https://evilexample.com", "https://example.com/", False),
        ("https://192.0.2.2", "https://192.0.2.1/", False),
        ("null", "https://example.com/", False),  # an opaque origin is the same site as nothing
        ("https://[::1", "https://example.com/", False),  # not an origin at all
    ],
)
def test_same_site_is_the_scheme_and_the_registrable_domain(origin: str, url: str, same: bool) -> None:
    assert same_site(origin, url) is same
