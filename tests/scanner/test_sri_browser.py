"""Page analysis reads an `integrity` attribute as Chromium does: which values it ignores, verifies or never
matches (SRI §3.3.3 "parse metadata", Chromium's SubresourceIntegrity::ParseIntegrityAttribute).

Given one fixture HTTPS page that loads, for each case, two cross-site scripts with the case's integrity value
(computed from the first script's body): the first script's body and another one, when headless Chromium
(Debian's, through Playwright) loads the page, then which of the two ran says how Chromium read the value:
both ran (ignored: the script runs unchecked), the right one alone (verified) or neither (blocked whatever is
served). Page analysis must say the same of the value: page.sri_missing_script, page.sri_ok or
page.sri_malformed. Sync Playwright must not run inside the test's event loop, so the test is synchronous.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig, html
from tests.scanner.browser import chromium_for_site
from websec_app.scanner.checks.page import check_page

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser


def digest(algorithm: str, body: str) -> str:
    return base64.b64encode(hashlib.new(algorithm, body.encode()).digest()).decode()


def sri(algorithm: str, body: str) -> str:
    return f"{algorithm}-{digest(algorithm, body)}"


#: case -> (the integrity value for a script whose body is given, how Chromium 156 reads it).
CASES: dict[str, tuple[Callable[[str], str], str]] = {
    "sha384": (lambda body: sri("sha384", body), "verified"),
    "base64url": (lambda body: sri("sha384", body).replace("+", "-").replace("/", "_"), "verified"),
    "no padding": (lambda body: sri("sha256", body).rstrip("="), "verified"),
    "extra padding": (lambda body: sri("sha384", body) + "==", "verified"),
    "sha256 padded with three '='": (lambda body: sri("sha256", body) + "==", "verified"),
    "sha384 padded with one '='": (lambda body: sri("sha384", body) + "=", "verified"),
    "sha384 padded with three '='": (lambda body: sri("sha384", body) + "===", "verified"),
    "sha512 padded with six '='": (lambda body: sri("sha512", body) + "====", "verified"),
    "43 characters of sha256 and two '='": (lambda body: sri("sha256", body).rstrip("=") + "==", "verified"),
    "an option": (lambda body: sri("sha384", body) + "?foo", "verified"),
    "a bad stronger token": (lambda body: sri("sha384", body) + " sha512-!!!!", "verified"),
    "tokens split by a vertical tab": (lambda body: sri("sha256", "other") + "\v" + sri("sha384", body), "verified"),
    "not base64": (lambda body: "sha384-not*base64", "ignored"),
    "a character after the digest": (lambda body: sri("sha384", body) + "!", "ignored"),
    "uppercase algorithm": (lambda body: sri("sha384", body).replace("sha384", "SHA384"), "ignored"),
    "an empty digest": (lambda body: "sha384-", "ignored"),
    "sha1": (lambda body: sri("sha1", body), "ignored"),
    "a no-break space": (lambda body: sri("sha384", body) + "\xa0x", "ignored"),
    "too short": (lambda body: "sha384-AAAA", "blocked"),
    "a short stronger token": (lambda body: sri("sha256", body) + " sha512-AAAA", "blocked"),
    "'=' inside": (lambda body: (lambda v: v[:12] + "=" + v[12:])(sri("sha384", body)), "blocked"),
    "one character too many": (lambda body: sri("sha384", body) + "A", "blocked"),
}
#: How page analysis says each reading (a blocked script comes with page.sri_ok too: nothing runs unchecked).
OUTCOME = {"blocked": "page.sri_malformed", "ignored": "page.sri_missing_script", "verified": "page.sri_ok"}


def body_of(number: int) -> str:
    return f"window.ran = (window.ran || []).concat(['{number}'])"


def test_page_analysis_reads_integrity_values_as_chromium_does(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a page loading, per case, the script its integrity was computed from and another body
    page_host, cdn_host = site_factory.unique_host("sri"), site_factory.unique_host("cdn")
    tags, routes = [], {}
    for number, (integrity, _) in enumerate(CASES.values()):
        value = integrity(body_of(number)).replace('"', "&quot;")
        for kind, body in (("right", body_of(number)), ("wrong", body_of(number + 1000))):
            path = f"/{number}-{kind}.js"
            headers = [("Content-Type", "text/javascript"), ("Access-Control-Allow-Origin", "*")]
            routes[path] = Response(200, headers, body)
            tags.append(f'<script src="https://{cdn_host}{path}" integrity="{value}" crossorigin="anonymous"></script>')
    routes["/"] = html("<!DOCTYPE html><html><head>" + "".join(tags) + "</head><body></body></html>")
    site = site_factory(Site(names=(page_host, cdn_host), routes=routes, tls=TlsConfig(cert="service")))
    try:
        # When Chromium loads it
        with chromium_for_site(site, pki) as browser:
            tab = browser.new_context().new_page()
            tab.goto(f"https://{page_host}/", wait_until="load")
            ran = set(tab.evaluate("window.ran || []"))
    finally:
        site.stop()

    # Then each value was read as the case says: both ran (ignored), the right one (verified), neither (blocked)
    readings = {}
    for number, case in enumerate(CASES):
        right, wrong = str(number) in ran, str(number + 1000) in ran
        readings[case] = {(True, True): "ignored", (True, False): "verified", (False, False): "blocked"}.get(
            (right, wrong), "the wrong body alone ran"
        )
    assert readings == {case: reading for case, (_, reading) in CASES.items()}
    # And page analysis says the same of each value
    said = {}
    for number, (case, (integrity, _)) in enumerate(CASES.items()):
        value = integrity(body_of(number)).replace('"', "&quot;")
        tag = f'<script src="https://cdn.other.net/a.js" integrity="{value}" crossorigin="anonymous"></script>'
        outcomes = {f.outcome for f in check_page(make_snapshot("https://www.example.com/", body=tag)).findings}
        said[case] = next((reading for reading, outcome in OUTCOME.items() if outcome in outcomes), str(outcomes))
    assert said == readings
