"""The headers check reads a header the way Chromium does: what Chromium obeys counts, what it ignores does not.

Given one fixture HTTPS site answering under one name per case (so every case has its own HSTS state
and origin), each name serving the case's header or page, when headless Chromium (Debian's, through
Playwright) loads it, then what Chromium does (keep HSTS, send a full Referer, run an inline script)
is what the headers check's verdict on the same value says it does.

Chromium finds the names through --host-resolver-rules and accepts the test certificate through
--ignore-certificate-errors-spki-list, under which a connection counts as secure (HSTS is processed,
RFC 6797 §8.1); the HTTPS-Upgrades feature is off, so only HSTS turns an http:// navigation into https.
The tests are synchronous: sync Playwright must not run inside the test's event loop.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Request, RunningSite, Site, SiteFactory, TlsConfig, html
from websec_app.scanner.checks.headers import check_headers

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

CHROMIUM = Path(os.environ.get("WEBSEC_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-features=HttpsUpgrades",
]


def outcomes(subject: str, headers: Sequence[tuple[str, str]] = (), body: str = "") -> list[str]:
    snapshot = make_snapshot(headers=list(headers), body=body)
    return [f.outcome for f in check_headers(snapshot).findings if f.subject == subject]


def start_site(
    site_factory: SiteFactory, prefix: str, answers: Mapping[Any, Behaviour]
) -> tuple[dict[str, Any], RunningSite]:
    """One site whose name `<prefix>-N.test` answers `/` with the N-th answer (name -> its case's key), and
    a `<prefix>-echo-N.test` name, another origin."""
    names = {site_factory.unique_host(prefix): key for key in answers}

    def front(request: Request) -> Behaviour:
        return answers[names[request.host or ""]]

    return names, site_factory(
        Site(
            names=(*names, site_factory.unique_host(f"{prefix}-echo")),
            routes={"/": front, "/second": html("second"), "/echo": html("echo")},
            tls=TlsConfig(cert="service"),  # valid for decades around the suite's clock, whatever today is
        )
    )


@contextmanager
def chromium(site: RunningSite, pki: Pki) -> Iterator[Any]:
    """A browser context that reaches `site` under all its names and trusts its certificate."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    leaf = pki.issue("service", site.names).certificate
    spki = leaf.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    pin = base64.b64encode(hashlib.sha256(spki).digest()).decode()
    rules = "--host-resolver-rules=" + ", ".join(f"MAP {name} {site.ip}" for name in site.names)
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_ARGS, rules, f"--ignore-certificate-errors-spki-list={pin}"],
        )
        try:
            yield browser.new_context()
        finally:
            browser.close()


# --- Strict-Transport-Security --------------------------------------------------------------------

#: Header value -> whether Chromium 156 keeps it (an http:// navigation is then made over https://).
HSTS_CASES = {
    None: False,  # the control: no header, no upgrade
    "max-age=31536000; includeSubDomains": True,
    # RFC 6797 §6.1 ignores unknown directives; Chromium's ParseHSTSHeader rejects repeats of only these two
    "max-age=31536000; includeSubDomains; preload; preload": True,
    "max-age=31536000; foo; foo": True,
    'max-age=31536000; preload="a;b"': True,
    "max-age=31536000; max-age=31536000": False,
    "max-age=31536000; includeSubDomains; includeSubDomains": False,
    "max-age=31536000; foo=a=b": False,
}


def test_chromium_keeps_exactly_the_hsts_headers_the_check_accepts(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a name per header value, each sending it on its HTTPS page
    answers = {
        value: html("first", headers=[("Strict-Transport-Security", value)] if value else []) for value in HSTS_CASES
    }
    names, site = start_site(site_factory, "hsts", answers)
    try:
        # When Chromium visits each over HTTPS, then follows an http:// link to it (port 80 refuses)
        with chromium(site, pki) as context:
            tab = context.new_page()
            for name in names:
                tab.goto(f"https://{name}/")
            for name in names:
                try:
                    tab.goto(f"http://{name}/second", timeout=5000)
                except playwright_api.Error:
                    pass  # not upgraded: the connection to port 80 is refused
    finally:
        site.stop()

    # Then Chromium upgraded exactly the names whose header it kept...
    upgraded = {names[r.host or ""] for r in site.requests_to("/second") if r.scheme == "https"}
    assert {value: value in upgraded for value in HSTS_CASES} == HSTS_CASES
    # ...and the check calls exactly those headers valid
    accepted = {
        value: value is not None
        and outcomes("Strict-Transport-Security", [("Strict-Transport-Security", value)]) != ["hsts.invalid"]
        for value in HSTS_CASES
    }
    assert accepted == HSTS_CASES
