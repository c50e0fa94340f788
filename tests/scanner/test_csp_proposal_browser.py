"""The CSP the scanner proposes lets the page it was built from load everything, in a real browser (issue 15).

Given a fixture HTTPS site whose page loads its own script, stylesheet (with an @font-face font and a
background image the scanner cannot see), image, an inline script (non-ASCII text), an inline <style>,
a `style=""` attribute, a JSON-LD data block, <svg> scripts and a style (character references, CDATA
sections), and a script and an image from a second fixture origin,
when the real scanner scans it, then its Content-Security-Policy `fix` is a policy; and a third
fixture site serving the same page WITH that policy as an enforcing Content-Security-Policy header,
loaded in headless Chromium (Debian's, through Playwright), gets no `securitypolicyviolation` event,
no CSP console error, and every resource loads (scripts set markers, images have a width, the font is
loaded, the styles apply). As a control, the old generic policy on the same page does raise violations,
so the listener would see them.

Chromium finds the fixture names through --host-resolver-rules and accepts the test CA's certificates
with ignore_https_errors (TLS is graded elsewhere); sync Playwright runs in a worker thread, away from
the test's event loop.
"""

from __future__ import annotations

import asyncio
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.catalog import HTTPS_REDIRECT
from tests.fixtures.sites import Response, RunningSite, Site, SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

CHROMIUM = Path(os.environ.get("WEBSEC_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
# Installed by `make run` / `make test` (fonts-noto-core, Makefile RUN_APT_PACKAGES).
FONT = Path("/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf")
#: What the old generic fix said, for the control.
GENERIC = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'"

# Records what the page does before any of its scripts run.
LISTENER = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def png(width: int, height: int) -> bytes:
    """A valid RGB PNG of one colour (the browser must decode it for naturalWidth to be set)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x20\x80\xc0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def page(cdn: str) -> str:
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<link rel="stylesheet" href="/style.css">
<script src="/app.js"></script>
<script src="https://{cdn}/lib.js"></script>
<script>window.inlineRan = "héllo ✓";</script>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Organization"}}</script>
<style>#inline-styled {{ color: rgb(4, 5, 6); }}</style>
</head><body>
<h1 class="fancy">Shop</h1>
<p id="inline-styled">styled by a style element</p>
<p id="attr-styled" style="color: rgb(1, 2, 3)">styled by its attribute</p>
<img id="own" src="/logo.png" alt="logo">
<img id="remote" src="https://{cdn}/pic.png" alt="remote">
<form action="/search"><input name="q"></form>
<svg width="1" height="1"><script>window.svgRan = 1 &amp;&amp; "sv&lt;g";</script></svg>
<p id="cdata-styled">styled by an svg style with a CDATA section</p>
<svg width="1" height="1"><style><![CDATA[#cdata-styled {{ color: rgb(7, 8, 9); }}]]></style>
<script>window.svgCdata = "x&amp;"<![CDATA[ + "&lt;" + (1 < 2);]]></script></svg>
</body></html>"""


STYLE = """
@font-face { font-family: "ShopFont"; src: url("/font.ttf") format("truetype"); }
.fancy { font-family: "ShopFont", sans-serif; }
body { background: url("/bg.png") repeat; }
"""


def routes(cdn: str, page_headers: list[tuple[str, str]]) -> dict[str, Any]:
    html_type = ("Content-Type", "text/html; charset=utf-8")
    return {
        "/": Response(200, [html_type, *page_headers], page(cdn)),
        "/style.css": Response(200, [("Content-Type", "text/css")], STYLE),
        "/app.js": Response(200, [("Content-Type", "text/javascript")], "window.appLoaded = true;"),
        "/logo.png": Response(200, [("Content-Type", "image/png")], png(16, 8)),
        "/bg.png": Response(200, [("Content-Type", "image/png")], png(2, 2)),
        "/font.ttf": Response(200, [("Content-Type", "font/ttf")], FONT.read_bytes()),
    }


@dataclass(frozen=True)
class Loaded:
    violations: list[str]
    console: list[str]
    state: dict[str, Any]


#: What the shop page did, read once it has loaded.
PAGE_STATE = """async () => {
  const faces = await document.fonts.load('16px "ShopFont"');
  await new Promise((done) => setTimeout(done, 200));  // late violation events
  const color = (id) => getComputedStyle(document.getElementById(id)).color;
  return {
    app: window.appLoaded === true,
    cdn: window.cdnLoaded === true,
    inline: window.inlineRan,
    svg: window.svgRan,
    svgCdata: window.svgCdata,
    own: document.getElementById('own').naturalWidth,
    remote: document.getElementById('remote').naturalWidth,
    font: faces.length > 0 && faces.every((face) => face.status === 'loaded'),
    inlineStyle: color('inline-styled'),
    attrStyle: color('attr-styled'),
    cdataStyle: color('cdata-styled'),
  };
}"""


def load_in_chromium(sites: list[RunningSite], url: str, state_script: str | None = None) -> Loaded:
    """Load `url`; `state_script` (a JS function) reads what the page did, PAGE_STATE by default."""
    rules = "--host-resolver-rules=" + ", ".join(f"MAP {site.host} {site.ip}" for site in sites)
    console: list[str] = []
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, rules])
        try:
            context = browser.new_context(ignore_https_errors=True)
            context.add_init_script(LISTENER)
            tab = context.new_page()
            tab.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            tab.goto(url, wait_until="load")
            state = tab.evaluate(state_script or PAGE_STATE)
            violations = tab.evaluate("window.__violations")
        finally:
            browser.close()
    return Loaded(violations, console, state)


async def test_the_proposed_csp_lets_the_page_load_everything_in_chromium(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    if not FONT.exists():
        pytest.skip(f"{FONT} is missing (make run installs fonts-noto-core)")

    # Given a second origin with a script and an image, and the site that uses them
    cdn_host = site_factory.unique_host("csp-cdn")
    cdn = site_factory(
        Site(
            names=(cdn_host,),
            routes={
                "/lib.js": Response(200, [("Content-Type", "text/javascript")], "window.cdnLoaded = true;"),
                "/pic.png": Response(200, [("Content-Type", "image/png")], png(24, 12)),
            },
        )
    )
    shop = site_factory(
        Site(names=(site_factory.unique_host("csp-shop"),), routes=routes(cdn_host, []), http=HTTPS_REDIRECT)
    )

    try:
        # When the real scanner scans it
        body = (await scan(shop.url, scan_settings)).to_dict()
        header = body["headers"]["Content-Security-Policy"]
        proposal = header["fix"]

        # Then the fix is a policy built from the page, with the rollout in the fix's note (not in what was found)
        assert header["status"] == "missing"
        assert f"https://{cdn_host}" in proposal and "'sha256-" in proposal
        assert "upgrade-insecure-requests" in proposal
        assert "Content-Security-Policy-Report-Only" in header["fix_note"]
        assert header["note"] is None

        # And the same page, sent WITH that policy enforced by another site, loads completely in Chromium
        enforced_routes = routes(cdn_host, [("Content-Security-Policy", proposal)])
        enforced_routes["/generic"] = Response(
            200, [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", GENERIC)], page(cdn_host)
        )
        enforced = site_factory(Site(names=(site_factory.unique_host("csp-enforced"),), routes=enforced_routes))
        try:
            loaded = await asyncio.to_thread(load_in_chromium, [cdn, enforced], enforced.url)
            control = await asyncio.to_thread(load_in_chromium, [cdn, enforced], enforced.url + "generic")
        finally:
            enforced.stop()
    finally:
        shop.stop()
        cdn.stop()

    csp_errors = [line for line in loaded.console if "Content Security Policy" in line]
    assert loaded.violations == [] and csp_errors == [], (loaded.violations, csp_errors)
    assert loaded.state == {
        "app": True,
        "cdn": True,
        "inline": "héllo ✓",
        "svg": "sv<g",  # an <svg> script's text is hashed as browsers read it: character references decoded
        "svgCdata": "x&&lt;true",  # ... except inside a CDATA section, taken literally without its markers
        "own": 16,
        "remote": 24,
        "font": True,
        "inlineStyle": "rgb(4, 5, 6)",
        "attrStyle": "rgb(1, 2, 3)",
        "cdataStyle": "rgb(7, 8, 9)",
    }
    # The control: the generic policy blocks the inline script, the other origin and the inline styles
    assert (
        control.state["inline"] is None
        and control.state["svg"] is None
        and control.state["svgCdata"] is None
        and not control.state["cdn"]
        and control.state["remote"] == 0
    )
    assert len(control.violations) >= 4, control.violations


async def test_a_repaired_policy_keeps_the_pages_base_and_embedded_objects_working_in_chromium(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")

    # Given a page whose scripts resolve against <base href> on another origin, which also serves an <object>,
    # under the site's own policy: it restricts scripts but sets neither object-src nor base-uri
    static_host = site_factory.unique_host("csp-static")
    static = site_factory(
        Site(
            names=(static_host,),
            routes={
                "/assets/app.js": Response(200, [("Content-Type", "text/javascript")], "window.appLoaded = true;"),
                "/doc.txt": Response(200, [("Content-Type", "text/plain")], "hello"),
            },
        )
    )
    body = (
        f'<!doctype html><html><head><base href="https://{static_host}/assets/"><script src="app.js"></script>'
        f'</head><body><object data="https://{static_host}/doc.txt" type="text/plain"></object></body></html>'
    )
    own_policy = f"script-src 'self' https://{static_host}"
    html_type = ("Content-Type", "text/html; charset=utf-8")
    site = site_factory(
        Site(
            names=(site_factory.unique_host("csp-based"),),
            routes={"/": Response(200, [html_type, ("Content-Security-Policy", own_policy)], body)},
            http=HTTPS_REDIRECT,
        )
    )
    state = """async () => {
      await new Promise((done) => setTimeout(done, 300));  // the object's load, late violation events
      return {app: window.appLoaded === true, base: document.baseURI};
    }"""

    try:
        # When the real scanner scans it, the fix repairs the site's own policy
        header = (await scan(site.url, scan_settings)).to_dict()["headers"]["Content-Security-Policy"]
        proposal = header["fix"]
        assert proposal.startswith(own_policy) and f"object-src https://{static_host}" in proposal, proposal

        # Then the page, sent with the repaired policy enforced, still loads from its base and shows its object;
        # the fixed object-src 'none' and base-uri 'self' a repair used to add block both
        old_repair = f"{own_policy}; object-src 'none'; base-uri 'self'"
        served = site_factory(
            Site(
                names=(site_factory.unique_host("csp-repaired"),),
                routes={
                    "/": Response(200, [html_type, ("Content-Security-Policy", proposal)], body),
                    "/old": Response(200, [html_type, ("Content-Security-Policy", old_repair)], body),
                },
            )
        )
        try:
            loaded = await asyncio.to_thread(load_in_chromium, [static, served], served.url, state)
            control = await asyncio.to_thread(load_in_chromium, [static, served], served.url + "old", state)
        finally:
            served.stop()
    finally:
        site.stop()
        static.stop()

    assert loaded.violations == [], loaded.violations
    assert loaded.state == {"app": True, "base": f"https://{static_host}/assets/"}
    assert not control.state["app"] and {v.split()[0] for v in control.violations} == {"base-uri", "object-src"}
