"""Page analysis calls an http:// subresource upgradeable (passive) or blockable (active) where Chromium upgrades
or blocks it (Mixed Content §4.3, HTML §4.8.4.3.5 "update the image data").

Given one fixture HTTPS site answering under one name per case, each name serving a page whose probe element
(an image, or a script setting `window.ran`) is loaded from `http://<name>/...`, when headless Chromium (Debian's,
through Playwright) loads it, then the probe loaded (upgraded to https://) or not (blocked), and page analysis
says page.mixed_passive exactly where it loaded and page.mixed_active where it was blocked. Sync Playwright must
not run inside the test's event loop, so the test is synchronous.
"""

from __future__ import annotations

import base64

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory, html
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.checks.page import check_page

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
IMG = "http://{name}/a.png"
#: case -> (the page's <body>, whether Chromium 156 loads the probe: upgraded, not blocked).
CASES: dict[str, tuple[str, bool]] = {
    "img src": (f'<img id="probe" src="{IMG}">', True),
    "img src and sizes": (f'<img id="probe" src="{IMG}" sizes="100px">', True),
    "img srcset": (f'<img id="probe" srcset="{IMG} 1x">', False),
    "img src beside a srcset": (f'<img id="probe" src="{IMG}" srcset="http://{{name}}/b.png 2x">', False),
    "img src beside an empty srcset": (f'<img id="probe" src="{IMG}" srcset="">', False),
    "img src in a picture": (f'<picture><img id="probe" src="{IMG}"></picture>', False),
    "picture source srcset": (f'<picture><source srcset="{IMG}"><img id="probe" src="/missing.png"></picture>', False),
}
PROBE = "(() => { const probe = document.getElementById('probe'); return probe.complete && probe.naturalWidth > 0 })()"


def test_chromium_upgrades_or_blocks_exactly_where_page_analysis_says(site_factory: SiteFactory, pki: Pki) -> None:
    # Given one name per case, each serving its page
    names = {site_factory.unique_host("mixed"): case for case in CASES}

    def page(name: str) -> Behaviour:
        return html("<!DOCTYPE html><html><body>" + CASES[names[name]][0].replace("{name}", name) + "</body></html>")

    # When Chromium loads each
    image = Response(200, [("Content-Type", "image/png")], PNG)
    routes = {"/a.png": image, "/b.png": image}
    loaded, _ = pages_in_chromium(site_factory, pki, names, page, routes, over_http=True, evaluate=PROBE)

    # Then the probe loaded where the case says
    expected = {case: loads for case, (_, loads) in CASES.items()}
    assert loaded == expected
    # And page analysis calls it upgradeable (passive) exactly there, blockable (active) elsewhere
    said = {}
    for case, (body, _) in CASES.items():
        snapshot = make_snapshot("https://www.example.com/", body=body.replace("{name}", "img.other.net"))
        outcomes = {f.outcome for f in check_page(snapshot).findings}
        said[case] = {"page.mixed_passive": True, "page.mixed_active": False}.get(" ".join(outcomes), str(outcomes))
    assert said == expected
