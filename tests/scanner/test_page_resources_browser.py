"""Page analysis lists the subresources Chromium fetches, no more, no fewer (records/html.raw_resources):
script types and `language`, `nomodule`, SVG and MathML scripts, disabled or non-CSS stylesheets, preloads.

Given one fixture HTTPS page holding one element per case, each loading its own path from a second name, when
headless Chromium (Debian's, through Playwright) loads it, then the paths the fixture was asked for are exactly
the ones raw_resources lists for the page. Sync Playwright must not run inside the test's event loop, so the
test is synchronous.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, Site, SiteFactory, TlsConfig, html
from tests.scanner.browser import chromium_for_site, pages_in_chromium
from websec_app.scanner.records.html import parse_page, raw_resources

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: case -> (markup loading {url}, whether Chromium 156 fetches it).
CASES: dict[str, tuple[str, bool]] = {
    "classic script": ('<script src="{url}.js"></script>', True),
    "type with parameters": ('<script type="text/javascript; charset=utf-8" src="{url}.js"></script>', False),
    "type padded, any case": ('<script type=" TEXT/JavaScript " src="{url}.js"></script>', True),
    "empty type": ('<script type="" language="vbscript" src="{url}.js"></script>', True),
    "blank type": ('<script type="  " src="{url}.js"></script>', False),
    "language vbscript": ('<script language="vbscript" src="{url}.js"></script>', False),
    "language JavaScript1.2": ('<script language="JavaScript1.2" src="{url}.js"></script>', True),
    "nomodule": ('<script nomodule src="{url}.js"></script>', False),
    "module with nomodule": ('<script type="module" nomodule src="{url}.js"></script>', True),
    "import map": ('<script type="importmap" src="{url}.json"></script>', False),
    "svg script src": ('<svg><script src="{url}.js"></script></svg>', False),
    "svg script href": ('<svg><script href="{url}.js"></script></svg>', True),
    "svg script xlink:href": ('<svg><script xlink:href="{url}.js"></script></svg>', True),
    "svg script nomodule, language": (
        '<svg><script nomodule language="vbscript" href="{url}.js"></script></svg>',
        True,
    ),
    "math script src": ('<math><script src="{url}.js"></script></math>', False),
    "script in foreignObject": ('<svg><foreignObject><script src="{url}.js"></script></foreignObject></svg>', True),
    "stylesheet": ('<link rel="stylesheet" href="{url}.css">', True),
    "disabled stylesheet": ('<link rel="stylesheet" disabled href="{url}.css">', False),
    "stylesheet text/less": ('<link rel="stylesheet" type="text/less" href="{url}.css">', False),
    "stylesheet TEXT/CSS with a charset": (
        '<link rel="stylesheet" type="TEXT/CSS; charset=utf-8" href="{url}.css">',
        True,
    ),
    "preload without as": ('<link rel="preload" href="{url}.js">', False),
    "preload as bogus": ('<link rel="preload" as="bogus" href="{url}.js">', False),
    "preload as padded": ('<link rel="preload" as=" script" href="{url}.js">', False),
    "preload as SCRIPT": ('<link rel="preload" as="SCRIPT" href="{url}.js">', True),
    "preload as style": ('<link rel="preload" as="style" href="{url}.css">', True),
    "preload as fetch": ('<link rel="preload" as="fetch" crossorigin href="{url}.json">', True),
    "preload as track": ('<link rel="preload" as="track" href="{url}.vtt">', True),
    "preload as video": ('<link rel="preload" as="video" href="{url}.mp4">', False),
    "preload as document": ('<link rel="preload" as="document" href="{url}.html">', False),
}


def test_page_analysis_lists_what_chromium_fetches(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a page with one element per case, each loading /<n>.<ext> from the cdn name
    page_host, cdn_host = site_factory.unique_host("page"), site_factory.unique_host("cdn")
    markup = "".join(tag.replace("{url}", f"https://{cdn_host}/{n}") for n, (tag, _) in enumerate(CASES.values()))
    body = f"<!DOCTYPE html><html><head></head><body>{markup}</body></html>"
    routes = {"/": html(body)}
    for n, (tag, _) in enumerate(CASES.values()):
        extension = tag.split("{url}")[1].split('"')[0]
        routes[f"/{n}{extension}"] = Response(
            200, [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "*")]
        )
    site = site_factory(Site(names=(page_host, cdn_host), routes=routes, tls=TlsConfig(cert="service")))
    try:
        # When Chromium loads it
        with chromium_for_site(site, pki) as browser:
            tab = browser.new_context().new_page()
            tab.goto(f"https://{page_host}/", wait_until="load")
            time.sleep(0.5)  # preloads may still be on their way
            asked = {request.path for request in list(site.requests) if request.host == cdn_host}
    finally:
        site.stop()

    # Then it fetched what the case says
    fetched = {case: any(path.startswith(f"/{n}.") for path in asked) for n, case in enumerate(CASES)}
    assert fetched == {case: fetches for case, (_, fetches) in CASES.items()}
    # And raw_resources lists exactly those
    page = parse_page(make_snapshot(f"https://{page_host}/", body=body).final)
    listed = {urlsplit(url).path for url, _, _ in raw_resources(page)}
    assert {case: any(path.startswith(f"/{n}.") for path in listed) for n, case in enumerate(CASES)} == fetched


SCRIPT = '<script src="{url}"></script>'
#: case -> (the page's <body> loading {url}, whether Chromium 156 fetches it): what <noscript> (raw text with
#: scripting on) and <template> (its end tag pops up to it) hide, and what they do not.
INERT_CASES: dict[str, tuple[str, bool]] = {
    "after a noscript left with an open div": (f"<noscript><div>Enable JS</noscript><main>x</main>{SCRIPT}", True),
    "after a noscript left with an open table": (f"<noscript><table><tr><td>x</noscript>{SCRIPT}", True),
    "after a noscript whose end tag is in a comment": (f"<noscript><!-- </noscript> -->{SCRIPT}", True),
    "after a template left with an open div": (f"<template><div>card</template>{SCRIPT}", True),
    "after nested templates": (f"<template><template><p></template><table></template>{SCRIPT}", True),
    "after a noscript tag inside an attribute": (f'<div title="<noscript>">{SCRIPT}</div>', True),
    "after a script holding a noscript tag": (f'<script>var s = "<noscript>";</script>{SCRIPT}', True),
    "in an svg noscript": ('<svg><noscript><script href="{url}"></script></noscript></svg>', True),
    "inside a noscript": (f"<noscript><div>{SCRIPT}</div></noscript>", False),
    "inside a template": (f"<template><div>{SCRIPT}</div></template>", False),
    "inside a template's inner template": (f"<template><template></template>{SCRIPT}</template>", False),
    "after a self-closed noscript": (f"<noscript/>{SCRIPT}", False),
    "after a template never closed": (f"<template><p>{SCRIPT}", False),
    # An HTML breakout tag (§13.2.6.5) leaves <svg>/<math>, which libxml2 never does; <font> only with color,
    # face or size; annotation-xml holds HTML only with an HTML encoding (§13.2.6.1)
    "in a div that breaks out of svg": (f"<svg><div>{SCRIPT}</div></svg>", True),
    "after a p that broke out of svg": (f"<svg><p>x</p>{SCRIPT}</svg>", True),
    "after an svg font and noscript": (f"<svg><font><noscript></svg>{SCRIPT}</noscript>", True),
    "after a font color that broke out of svg": (f"<svg><font color=red><noscript></svg>{SCRIPT}</noscript>", False),
    "after a b in a plain annotation-xml": (
        f"<math><annotation-xml><noscript><b>x</b>{SCRIPT}</noscript></annotation-xml></math>",
        True,
    ),
    "in a noscript of an html annotation-xml": (
        f'<math><annotation-xml encoding="Text/HTML"><noscript><b>x</b>{SCRIPT}</noscript></annotation-xml></math>',
        False,
    ),
    "a stylesheet in a noscript after svg was left": (
        '<svg><div>x</div><noscript><link rel=stylesheet href="{url}"></noscript></svg>',
        False,
    ),
    "an image in a noscript after svg was left": (
        '<svg><div>x</div><noscript><img src="{url}"></noscript></svg>',
        False,
    ),
}


def test_what_noscript_and_template_hide_is_what_chromium_does_not_fetch(site_factory: SiteFactory, pki: Pki) -> None:
    # Given one name per case, each serving a page whose script comes from /app.js of the cdn name
    cdn_host = site_factory.unique_host("cdn")
    names = {site_factory.unique_host("inert"): case for case in INERT_CASES}
    url = f"https://{cdn_host}/app.js"
    pages = {name: INERT_CASES[case][0].replace("{url}", f"{url}?{name}") for name, case in names.items()}

    def page(name: str) -> Behaviour:
        return html(f"<!DOCTYPE html><html><head></head><body>{pages[name]}</body></html>")

    # When Chromium loads each
    script = Response(200, [("Content-Type", "text/javascript")], "")
    _, site = pages_in_chromium(site_factory, pki, names, page, {"/app.js": script}, more_names=(cdn_host,))
    asked = {request.target.partition("?")[2] for request in site.requests_to("/app.js")}

    # Then the script was fetched where the case says
    fetched = {case: name in asked for name, case in names.items()}
    assert fetched == {case: fetches for case, (_, fetches) in INERT_CASES.items()}
    # And raw_resources lists it exactly there
    listed = {}
    for name, case in names.items():
        page = parse_page(make_snapshot(f"https://{name}/", body=f"<html><body>{pages[name]}</body></html>").final)
        listed[case] = any(raw.startswith(url) for raw, _, _ in raw_resources(page))
    assert listed == fetched
