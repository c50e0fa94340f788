"""The cookies section of whole scans of loopback sites: every response a visitor's browser takes cookies
from is graded, and the report says which response set each cookie."""

from __future__ import annotations

from tests.fixtures import catalog
from tests.fixtures.sites import Redirect, SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings


async def test_a_session_cookie_set_by_the_port_80_redirect_of_an_https_site_is_graded(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given an otherwise best-practice site whose HTTPS page sets its Laravel session cookie with Secure,
    # but whose http:// redirect on port 80 sets the same cookie without it (a browser that types the bare
    # name gets that one first, over plain HTTP)
    host = site_factory.unique_host("cookiehop")
    leak = ("Set-Cookie", "laravel_session=eyJpdiI6IjEifQ; path=/; httponly; samesite=lax")
    site = site_factory(
        catalog.best_practices(
            host,
            cookie="laravel_session=eyJpdiI6IjEifQ; path=/; secure; httponly; samesite=lax",
            http=Redirect("https://{host}{path}", 301, headers=[leak]),
        )
    )
    try:
        # When the scan starts at https://
        body = (await scan(site.url, scan_settings)).to_dict()
    finally:
        site.stop()

    # Then the redirect's cookie is graded as a session cookie without Secure, named after the http:// URL
    cookies = body["cookies"]
    finding = next(f for f in cookies["findings"] if f["check"] == "cookie.session_no_secure")
    assert finding["subjects"] == ["laravel_session"]
    assert f"http://{host}/" in finding["note"]
    assert [(c["set_by"], c["secure"]) for c in cookies["cookies"]] == [
        (f"https://{host}/", True),
        (f"http://{host}/", False),
    ]
    assert cookies["deduction"] == finding["deduction"] == 10
