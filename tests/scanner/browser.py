"""Headless Chromium pointed at a fixture site, for the tests that hold a check to what the browser does.

Chromium finds the site's names through --host-resolver-rules and accepts its certificate through
--ignore-certificate-errors-spki-list (pinned to the leaf's key), under which a connection counts as secure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Request, Route, RunningSite, Site, SiteFactory, TlsConfig

K = TypeVar("K")

CHROMIUM = Path(os.environ.get("WEBSEC_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]


def reaching(site: RunningSite, pki: Pki, leaf: x509.Certificate | None = None) -> list[str]:
    """The switches that make Chromium find `site` under all its names and accept its certificate."""
    leaf = leaf or pki.issue("service", site.names).certificate
    spki = leaf.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    pin = base64.b64encode(hashlib.sha256(spki).digest()).decode()
    rules = "--host-resolver-rules=" + ", ".join(f"MAP {name} {site.ip}" for name in site.names)
    return [rules, f"--ignore-certificate-errors-spki-list={pin}"]


def _playwright() -> Any:
    playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    return playwright_api


@contextmanager
def chromium_for_site(
    site: RunningSite, pki: Pki, *extra_args: str, leaf: x509.Certificate | None = None
) -> Iterator[Any]:
    """A browser that reaches `site` under all its names and trusts its certificate (the test leaves' usual key;
    `leaf` for a certificate with another, such as an RSA one)."""
    playwright_api = _playwright()
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_ARGS, *extra_args, *reaching(site, pki, leaf)],
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_window_for_site(site: RunningSite, pki: Pki, profile: Path) -> Iterator[Any]:
    """A regular Chromium profile kept in `profile` (a Playwright persistent context, one window's cookies), which
    reaches `site` as `chromium_for_site`'s browser does, with third-party cookies allowed.

    Browser.new_context() is off the record, and this Chromium 156 (Debian's, started by Playwright without
    field trials) keeps `cookie_controls_mode` at 1 by default (chrome://prefs-internals), which blocks every
    cookie of a request from another site. Chrome's regular windows send the SameSite=None ones, and an attacker
    targets those visitors: the profile's preferences set the mode to 0 (allow), as a user's setting would."""
    playwright_api = _playwright()
    (profile / "Default").mkdir(parents=True, exist_ok=True)
    (profile / "Default" / "Preferences").write_text(json.dumps({"profile": {"cookie_controls_mode": 0}}))
    with playwright_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_ARGS, *reaching(site, pki, None)],
        )
        try:
            yield context
        finally:
            context.close()


def visit_each(site: RunningSite, pki: Pki, names: Mapping[str, K], *, evaluate: str | None = None) -> dict[K, Any]:
    """Load https://<name>/ for each of `names` in turn, in one tab of Chromium for `site` (until "load"), and
    return by each name's value what the JavaScript expression `evaluate` gave on its page (None without one).
    The site keeps every request it got, for the test to read."""
    seen: dict[K, Any] = {}
    with chromium_for_site(site, pki) as browser:
        tab = browser.new_context().new_page()
        for name, key in names.items():
            tab.goto(f"https://{name}/", wait_until="load")
            seen[key] = tab.evaluate(evaluate) if evaluate else None
    return seen


def pages_in_chromium(
    site_factory: SiteFactory,
    pki: Pki,
    names: Mapping[str, K],
    page: Callable[[str], Behaviour],
    routes: Mapping[str, Route],
    *,
    more_names: tuple[str, ...] = (),
    over_http: bool = False,
    evaluate: str | None = None,
) -> tuple[dict[K, Any], RunningSite]:
    """One fixture site answering https://<name>/ with `page(name)` for each of `names`, `routes` beside it (on
    port 80 too with `over_http`; `more_names` are served but not loaded), each page loaded in Chromium in turn
    (`visit_each`), then the site stopped: what `evaluate` gave on each page, and the site, whose requests the
    test then reads."""

    def front(request: Request) -> Behaviour:
        return page(request.host or "")

    served = {"/": front, **routes}
    site = site_factory(
        Site(
            names=(*more_names, *names),
            routes=served,
            http=served if over_http else None,
            tls=TlsConfig(cert="service"),
        )
    )
    try:
        return visit_each(site, pki, names, evaluate=evaluate), site
    finally:
        site.stop()
