"""Page analysis decodes a page as Chromium does by its Content-Type charset: the Encoding Standard's labels,
not Python's codec names (records/html.py, `_decoded_as_labelled`).

Given one fixture HTTPS site answering under one name per case, each name serving the same page, a script from
another name, with the case's charset (the body encoded to match), when headless Chromium (Debian's, through
Playwright) loads it, then the script was fetched exactly where page analysis reads the page and lists it.
Sync Playwright must not run inside the test's event loop, so the test is synchronous.
"""

from __future__ import annotations

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.records.html import parse_page, raw_resources

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: case -> (the Content-Type charset, the codec the body is written in, whether Chromium 156 fetches the script).
CASES: dict[str, tuple[str, str, bool]] = {
    "utf-8": ("utf-8", "ascii", True),
    "cp037, a label browsers do not know": ("cp037", "ascii", True),
    "utf-32, a label browsers do not know": ("utf-32", "ascii", True),
    "latin1": ("latin1", "ascii", True),
    "x-user-defined": ("x-user-defined", "ascii", True),
    "utf-16, without a byte order mark": ("utf-16", "utf-16-le", True),
    "iso-2022-kr, the replacement encoding": ("iso-2022-kr", "ascii", False),
    "replacement": ("replacement", "ascii", False),
}
PAGE = '<!DOCTYPE html><html><head><script src="https://{cdn}/app.js?{name}"></script></head><body>x</body></html>'


def test_chromium_fetches_the_script_exactly_where_page_analysis_reads_the_page(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving the page in the case's charset
    cdn = site_factory.unique_host("cdn")
    names = {site_factory.unique_host("charset"): case for case in CASES}

    def body(name: str) -> bytes:
        _, codec, _ = CASES[names[name]]
        return PAGE.replace("{cdn}", cdn).replace("{name}", name).encode(codec)

    def page(name: str) -> Behaviour:
        charset = CASES[names[name]][0]
        return Response(200, [("Content-Type", f"text/html; charset={charset}")], body(name))

    # When Chromium loads each
    script = Response(200, [("Content-Type", "text/javascript")], "")
    _, site = pages_in_chromium(site_factory, pki, names, page, {"/app.js": script}, more_names=(cdn,))
    asked = {request.target.partition("?")[2] for request in site.requests_to("/app.js")}

    # Then the script was fetched where the case says
    fetched = {case: name in asked for name, case in names.items()}
    assert fetched == {case: fetches for case, (_, _, fetches) in CASES.items()}
    # And page analysis lists it exactly there
    listed = {}
    for name, case in names.items():
        content_type = f"text/html; charset={CASES[case][0]}"
        page = parse_page(make_snapshot(f"https://{name}/", body=body(name), content_type=content_type).final)
        listed[case] = any(f"https://{cdn}/app.js" in raw for raw, _, _ in raw_resources(page))
    assert listed == fetched
