# Test cases adapted from web-platform-tests (https://github.com/web-platform-tests/wpt, BSD 3-Clause licence:
# tests/conformance/files/wpt.LICENSE).
"""Chromium 156 on the WPT header cases where websec and the suite part (docs/conformance.md), with a control of
each kind: what the browser does is websec's truth.

Given one fixture HTTPS site under two names, serving each case's exact header lines, when headless Chromium
(Debian's, through Playwright) loads, for each case, a script (X-Content-Type-Options: the script is served as
x/x), a same-origin and a cross-origin frame (X-Frame-Options), a same-origin popup (Cross-Origin-Opener-Policy)
or a page holding a same-origin frame (Cross-Origin-Embedder-Policy), then the documents that ran report
themselves to /seen, and which did is what Chromium made of the lines. The test is synchronous: sync Playwright
must not run inside the test's event loop.
"""

from __future__ import annotations

import pytest

from tests.conformance.test_wpt_headers import CASES
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Request, Response, Site, SiteFactory, TlsConfig
from tests.scanner.browser import chromium_for_site

pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

XCTO = "X-Content-Type-Options"
XFO = "X-Frame-Options"
COOP = "Cross-Origin-Opener-Policy"
COEP = "Cross-Origin-Embedder-Policy"

#: header lines -> whether Chromium 156 applies nosniff (blocks a script served as x/x)
NOSNIFF: dict[tuple[bytes, ...], bool] = {
    (b"X-Content-Type-Options: nosniff",): True,  # the controls
    (b"X-Content-Type-Options: no",): False,
    # the suite expects nosniff past a form feed; Chromium does not apply it. websec's fetch refused these three
    # (and the COOP values between form feeds or vertical tabs below) until fetch/_h11_field_values.py
    (b"X-Content-Type-Options: nosniff\x0c",): False,
    (b"X-Content-Type-Options: nosniff\x0b",): False,
    (b"X-Content-Type-Options: nosniff\x0b,nosniff",): False,
}
#: header lines -> (whether a same-origin frame loads, whether a cross-origin frame loads) in Chromium 156
FRAMING: dict[tuple[bytes, ...], tuple[bool, bool]] = {
    (b"X-Frame-Options: SAMEORIGIN",): (True, False),  # the control
    # HTML "X-Frame-Options" processing: several distinct values, one of them DENY, SAMEORIGIN or ALLOWALL, refuse
    # every frame, an invalid one included (the stored multiple.sub.html and commas.sub.html expect SAMEORIGIN)
    (b"X-Frame-Options: SAMEORIGIN,DENY",): (False, False),
    (b"X-Frame-Options: INVALID", b"X-Frame-Options: SAMEORIGIN"): (False, False),
    (b"X-Frame-Options: SAMEORIGIN", b"X-Frame-Options: INVALID"): (False, False),
    (b"X-Frame-Options: INVALID,SAMEORIGIN",): (False, False),
    (b"X-Frame-Options: SAMEORIGIN,INVALID",): (False, False),
    (b'X-Frame-Options: SAMEORIGIN,"DENY"',): (False, False),
}
#: header lines -> whether Chromium 156 severs a same-origin popup's opener (applies same-origin)
OPENER_CUT: dict[tuple[bytes, ...], bool] = {
    (b"Cross-Origin-Opener-Policy: same-origin",): True,  # the controls
    (b"Cross-Origin-Opener-Policy: Same-origin",): False,
    # tabs around the value are HTTP whitespace, trimmed before the structured field is parsed (the suite expects
    # no policy)
    (b"Cross-Origin-Opener-Policy: \tsame-origin",): True,
    (b"Cross-Origin-Opener-Policy: same-origin\t",): True,
    (b"Cross-Origin-Opener-Policy: \x0bsame-origin\x0b",): False,
    (b"Cross-Origin-Opener-Policy: \x0csame-origin\x0c",): False,
}
#: header lines -> whether Chromium 156 enforces require-corp (blocks a same-origin frame without COEP)
EMBEDDER_ENFORCED: dict[tuple[bytes, ...], bool] = {
    (b"Cross-Origin-Embedder-Policy: require-corp",): True,  # the controls
    (b"Cross-Origin-Embedder-Policy: jibberish",): False,
    # RFC 8941 parameters are allowed on the item (the stored test, written before, expects no policy)
    (b"Cross-Origin-Embedder-Policy: require-corp; foo=bar",): True,
    (b"Cross-Origin-Embedder-Policy: require-corp;require-corp",): True,
}
KINDS = {"xcto": NOSNIFF, "xfo": FRAMING, "coop": OPENER_CUT, "coep": EMBEDDER_ENFORCED}
#: A document that runs tells /seen its case, its host and whether it has an opener.
REPORT = (
    "<script>fetch('/seen?' + location.search.slice(1) + '&' + location.host"
    " + '&opener=' + (window.opener !== null))</script>"
)


def keyed(kind: str) -> dict[str, tuple[bytes, ...]]:
    return {f"{kind}-{index}": lines for index, lines in enumerate(KINDS[kind])}


def test_chromium_reads_the_disputed_wpt_header_cases_as_docs_conformance_says(
    site_factory: SiteFactory, pki: Pki
) -> None:
    home, other = site_factory.unique_host("wpt-browser"), site_factory.unique_host("wpt-browser-other")
    cases = {key: lines for kind in KINDS for key, lines in keyed(kind).items()}
    html = [("Content-Type", "text/html")]

    def case(request: Request) -> Response:
        lines = cases[request.query]
        if request.query.startswith("xcto"):
            body = f"fetch('/seen?{request.query}&script')"
            return Response(200, [("Content-Type", "x/x"), *lines], body)
        if request.query.startswith("coep"):
            return Response(200, [*html, *lines], f'<iframe src="/framed?{request.query}"></iframe>')
        return Response(200, [*html, *lines], REPORT)

    def driver(request: Request) -> Response:
        kind = request.query
        if kind == "xcto":
            body = "".join(f'<script src="/case?{key}"></script>' for key in keyed(kind))
        elif kind == "xfo":
            body = "".join(
                f'<iframe src="/case?{key}"></iframe><iframe src="https://{other}/case?{key}"></iframe>'
                for key in keyed(kind)
            )
        elif kind == "coop":
            body = "<script>" + "".join(f"window.open('/case?{key}');" for key in keyed(kind)) + "</script>"
        else:
            body = "".join(f'<iframe src="/case?{key}"></iframe>' for key in keyed(kind))
        return Response(200, html, body)

    routes = {
        "/driver": driver,
        "/case": case,
        "/framed": Response(200, html, REPORT),
        "/seen": Response(200, [("Content-Type", "text/plain")], "ok"),
    }
    site = site_factory(Site(names=(home, other), routes=routes, tls=TlsConfig(cert="service")))
    try:
        with chromium_for_site(site, pki) as browser:
            tab = browser.new_context().new_page()
            for kind in KINDS:
                tab.goto(f"https://{home}/driver?{kind}")
                tab.wait_for_timeout(1500)
    finally:
        site.stop()

    seen = [r.query.split("&") for r in site.requests_to("/seen")]
    ran = {(parts[0], parts[1]) for parts in seen}
    opener_kept = {parts[0] for parts in seen if parts[-1] == "opener=true"}
    assert {lines: (key, "script") not in ran for key, lines in keyed("xcto").items()} == NOSNIFF
    assert {lines: ((key, home) in ran, (key, other) in ran) for key, lines in keyed("xfo").items()} == FRAMING
    assert {lines: (key, home) in ran and key not in opener_kept for key, lines in keyed("coop").items()} == OPENER_CUT
    assert {lines: (key, home) not in ran for key, lines in keyed("coep").items()} == EMBEDDER_ENFORCED
    # every disputed case of the port is among those Chromium ran here
    disputed = {case.lines for case in CASES if case.why is not None}
    assert disputed <= {lines for table in KINDS.values() for lines in table}
