"""Page analysis keeps the elements Chromium 156 builds, where libxml2's tree differs from HTML's: what a
`<select>` holds (Chromium's customizable select keeps it, as libxml2 does), a `<form>` opened inside another
(ignored: the "form element pointer", records/inert_content.py), `<image>` (an `<img>`, void, where libxml2 nests
what follows it), `<frame>` outside `<frameset>` (dropped), and SVG elements named like HTML ones (`<svg><iframe>`
loads nothing), and a second `<html>` or `<body>` start tag (its attributes the element lacks added to it, where
libxml2 drops them).

Given one fixture HTTPS site answering under one name per case, each name serving the case's markup in a page,
when headless Chromium (Debian's, through Playwright) loads it, then the elements page analysis keeps (records/html
KEPT, outside <template> and <noscript>) are the ones in Chromium's document, in order, with their namespace and
URL; what Chromium fetched is what raw_resources lists; and the inline event handlers and `style` attributes page
analysis counts are those of the elements Chromium built (a dropped element's are nowhere). Sync Playwright must not
run inside the test's event loop, so the tests are synchronous.
"""

from __future__ import annotations

import json

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory, html
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.records.html import KEPT, Element, base_url, join_url, parse_page, raw_resources

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: case -> markup in <body>. Each element's URL attribute tells it from the others.
TREES: dict[str, str] = {
    # <select>: Chromium 156 keeps its content (customizable select), closes it at <input> or another <select>
    "script in select": '<select><script src="/s"></script></select>',
    "iframe and img in select": '<select><iframe src="/f"></iframe><img src="/i"></select>',
    "form and button in select": '<select><form action="/a"><button formaction="/b">go</button></form></select>',
    "input closes the select": '<select><input formaction="/a" type=submit><img src="/i"></select>',
    "textarea in select": '<select><textarea><img src="/t"></textarea><img src="/i"></select>',
    "select in select": '<select><option><select><img src="/i"></select>',
    "meta in select": '<select><meta http-equiv="Content-Security-Policy" content="img-src none"></select>',
    "template and noscript in select": '<select><template><img src="/t"></template><noscript><img src="/n">',
    "table in select": '<select><table><tr><td><script src="/s"></script><form action="/a"></form></table>',
    "select in a table cell": '<table><tr><td><select><option><img src="/i"><td><script src="/s"></script></table>',
    "option content": '<select><optgroup><option><img src="/i"><link rel=stylesheet href="/l"></optgroup>',
    "svg in select": '<select><svg><script href="/s"></script><foreignObject><iframe src="/f"></iframe>',
    "select left open": '<select><option>a<p><script src="/s"></script>',
    # A <form> inside another is ignored, however it got there, until a </form> outside <template>
    "form in form": '<form action="/a"><form action="/b"></form></form><form action="/c"></form>',
    "form in select in form": '<form action="/a"><select><form action="/b"></form></select></form>',
    "form after a div closed the first": '<div><form action="/a"></div><form action="/b">',
    "form in a table": '<table><form action="/a"><tr><td><form action="/b"></td></tr></table>',
    "form in MathML text": '<form action="/a"><math><mi><form action="/b"></mi></math></form>',
    "</form> inside <template>": '<form action="/a"><template></form></template><form action="/b">',
    "form after a template's form": '<template><form action="/a"></template><form action="/b"><form action="/c">',
    "</form> inside <svg>": '<form action="/a"><svg></form></svg><form action="/b">',
    "a dropped form's button": '<form action="/a"><form action="/b"><button formaction="/c">x</button></form>',
    "FORM in capitals": '<FORM action="/a"><Form action="/b">',
    "form in svg": '<form action="/a"></form><svg><form action="/b"></form></svg>',
    # <image> is an <img>; <frame> needs a <frameset>
    "image": '<image src="/i">',
    "frame outside frameset": '<frame src="/f">',
    "frameset after body content": '<p>x</p><frameset><frame src="/f"></frameset>',
    "frameset for the body": '</head><frameset><frame src="/f"></frameset>',
}
URL_ATTRIBUTES = ("action", "formaction", "src", "href", "data")
DESCRIBE_IN_CHROMIUM = """JSON.stringify([...document.querySelectorAll('*')]
  .filter(e => KEPT.includes(e.localName))
  .map(e => [e.localName, e.namespaceURI.split('/').pop(),
             URLS.map(a => e.getAttribute(a)).find(v => v !== null) || '',
             e.localName === 'meta' ? !e.closest('head') : null]))"""
NAMESPACES = {"xhtml": "", "svg": "svg", "MathML": "math"}


def described(element: Element) -> list[object]:
    url = next((element.get(a) for a in URL_ATTRIBUTES if element.get(a) is not None), "")
    return [element.name, element.namespace, url, element.in_body if element.name == "meta" else None]


def body(markup: str) -> str:
    if markup.startswith("</head>"):  # a document with no <body>: a <frameset> stands for it
        return f"<!DOCTYPE html><html><head>{markup}</html>"
    return f"<!DOCTYPE html><html><head></head><body>{markup}</body></html>"


def test_page_analysis_keeps_the_elements_chromium_builds(site_factory: SiteFactory, pki: Pki) -> None:
    # Given one name per case, each serving the case's markup
    names = {site_factory.unique_host("tree"): case for case in TREES}

    def page(name: str) -> Behaviour:
        return html(body(TREES[names[name]]))

    # When Chromium loads each and lists the elements of its document that page analysis keeps
    evaluate = DESCRIBE_IN_CHROMIUM.replace("KEPT", json.dumps(sorted(KEPT))).replace(
        "URLS", json.dumps(URL_ATTRIBUTES)
    )
    seen, _ = pages_in_chromium(site_factory, pki, names, page, {}, evaluate=evaluate)

    # Then page analysis keeps those, in that order
    built = {
        case: [[name, NAMESPACES[space], url, in_body] for name, space, url, in_body in json.loads(elements)]
        for case, elements in seen.items()
    }
    kept = {}
    for case, markup in TREES.items():
        parsed = parse_page(make_snapshot(body=body(markup)).final)
        kept[case] = [described(element) for element in parsed.elements if not element.inert]
    assert kept == built


#: case -> (markup loading {url}, whether Chromium 156 fetches it).
FETCHES: dict[str, tuple[str, bool]] = {
    "image": ('<image src="{url}">', True),
    "svg image href": ('<svg><image href="{url}"></image></svg>', True),
    "svg image xlink:href": ('<svg><image xlink:href="{url}"></image></svg>', True),
    "svg image src": ('<svg><image src="{url}"></image></svg>', False),
    "svg iframe": ('<svg><iframe src="{url}"></iframe></svg>', False),
    "svg video": ('<svg><video src="{url}"></video></svg>', False),
    "math iframe": ('<math><iframe src="{url}"></iframe></math>', False),
    "iframe in foreignObject": ('<svg><foreignObject><iframe src="{url}"></iframe></foreignObject></svg>', True),
    "frame outside frameset": ('<frame src="{url}">', False),
    "iframe in select": ('<select><iframe src="{url}"></iframe></select>', True),
    "script in select": ('<select><option><script src="{url}"></script></select>', True),
    "svg base": ('<svg><base href="https://{cdn}/base/"></base></svg><img src="{path}">', True),
    # <image> is a void <img>: what follows is its parent's (libxml2 nests it in the <image>), at no more depth
    "source after image in video": ('<video><image src="/x.png"><source src="{url}" type="video/mp4"></video>', True),
    "source after image in audio": ('<audio><image><source src="{url}" type="audio/mpeg"></audio>', True),
    "script after 600 images": ("<image>" * 600 + '<script src="{url}"></script>', True),
}


def test_page_analysis_lists_what_chromium_fetches_inside_select_and_foreign_content(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving the case's markup loading its own path from the page's own name
    names = {site_factory.unique_host("fetch"): case for case in FETCHES}
    cdn = site_factory.unique_host("cdn")

    def path(case: str) -> str:
        return f"/{list(FETCHES).index(case)}"

    def markup(name: str) -> str:
        case = names[name]
        tag = FETCHES[case][0].replace("{url}", f"https://{name}{path(case)}")
        return tag.replace("{path}", path(case)).replace("{cdn}", cdn)

    def page(name: str) -> Behaviour:
        return html(body(markup(name)))

    ok = Response(200, [("Content-Type", "text/plain")], "")
    routes = {path(case): ok for case in FETCHES}

    # When Chromium loads each
    _, site = pages_in_chromium(site_factory, pki, names, page, routes, more_names=(cdn,))
    asked = {(request.host, request.target) for request in site.requests}

    # Then it fetched what the case says, from the page's own name (an SVG <base> sets no base URL)
    fetched = {case: (name, path(case)) in asked for name, case in names.items()}
    assert fetched == {case: fetches for case, (_, fetches) in FETCHES.items()}
    # And page analysis lists it exactly there, resolved as page analysis resolves it
    listed = {}
    for name, case in names.items():
        page_url = f"https://{name}/"
        parsed = parse_page(make_snapshot(page_url, body=body(markup(name))).final)
        base, _ = base_url(parsed, page_url)
        listed[case] = any(join_url(base, raw) == f"https://{name}{path(case)}" for raw, _, _ in raw_resources(parsed))
    assert listed == fetched


#: case -> markup in <body>, each handler `ran++`. Browsers ignore the start tag of a <form> inside another, of a
#: <frame> outside a <frameset> and of a <frameset> once the body began: no element, so no attribute.
HANDLERS: dict[str, str] = {
    "form in form": '<form action="/a"><form action="/b" onclick="ran++" style="color:red"></form>',
    "form after a div closed the first": '<div><form action="/a"></div><form onclick="ran++" style="color:tan">',
    "form after a closed form": '<form action="/a"></form><form onclick="ran++" style="color:purple">',
    "frame in body": '<frame src="/f" onclick="ran++" style="color:blue">',
    "frameset after body content": '<p>x</p><frameset onclick="ran++" style="color:olive"><frame onclick="ran++">',
    "frameset for the body": '</head><frameset onclick="ran++" style="color:teal"><frame onclick="ran++" style="x:y">',
    "svg frame and form": '<svg><frame onclick="ran++" style="color:green"/><form onclick="ran++" style="color:lime"/>',
    "svg in a form": '<form action="/a"><svg><form onclick="ran++" style="color:coral"/></svg></form>',
    "math form": '<math><form onclick="ran++" style="color:gray"></form></math>',
    "image": '<image onclick="ran++" style="color:maroon">',
}
#: Each element's click handler run once (not bubbling), and the distinct non-blank style attributes in order.
HANDLERS_IN_CHROMIUM = """(() => {
  window.ran = 0;
  const all = [...document.querySelectorAll('*')];
  all.forEach(e => e.dispatchEvent(new Event('click')));
  const styles = all.map(e => e.getAttribute('style')).filter(v => v !== null && v.trim());
  return JSON.stringify([window.ran, [...new Set(styles)]]);
})()"""


def test_page_analysis_counts_the_inline_handlers_and_styles_of_the_elements_chromium_builds(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving the case's markup
    names = {site_factory.unique_host("handlers"): case for case in HANDLERS}

    def page(name: str) -> Behaviour:
        return html(body(HANDLERS[names[name]]))

    # When Chromium loads each and fires a click at every element
    seen, _ = pages_in_chromium(site_factory, pki, names, page, {}, evaluate=HANDLERS_IN_CHROMIUM)

    # Then page analysis counts the handlers that ran and the style attributes Chromium's elements have
    counted = {}
    for case, markup in HANDLERS.items():
        parsed = parse_page(make_snapshot(body=body(markup)).final)
        counted[case] = [parsed.inline_handlers, list(parsed.style_attributes)]
    assert counted == {case: json.loads(found) for case, found in seen.items()}


#: case -> a whole document after its doctype. A second <html> or <body> start tag adds the attributes the element
#: lacks to it (HTML §13.2.6.4.7), the first value of each staying; libxml2 drops the tag, attributes and all.
MERGED: dict[str, str] = {
    "second body": '<body class=a style="color:red" onclick="ran++"><body onload="ran++" onclick="x" style="c:d">',
    "body after content": '<p>x</p><body onload="ran++" style="color:tan">',
    "second html": '<html lang=en style="color:red"><body><html onclick="ran++" lang=fr style="color:blue">',
    "body after </body>": '<body>a</body><body onclick="ran++"><body onkeyup="ran++" onclick="x">',
    "body and html after </html>": '<body>a</body></html><body onclick="ran++"><html onkeyup="ran++">',
    "body in the head": '<head><body onclick="ran++" style="color:red"></head><body onkeyup="ran++" style="a:b">',
    "body in a table": '<body><table><tr><td><body onclick="ran++" style="color:olive">',
    "body in select": '<body><select><option><body onclick="ran++"></select>',
    "body in svg": '<body><svg><body onclick="ran++" style="color:lime"></svg>',
    "body in MathML text": '<body><math><mi><body onclick="ran++"></mi></math>',
    "body and html in template": '<body><template><body onclick="ran++"><html onclick="ran++"></template>',
    "body in noscript, script, comment": (
        '<body><noscript><body onclick="ran++"></noscript><script>"<body onclick=ran++>"</script>'
        '<!-- <body onclick="ran++"> -->'
    ),
    "character references": '<body><body style="color:&amp;red &copy2 &quot;">',
    "body in frameset": '<frameset onclick="ran++"><body onclick="ran++" style="color:red"></frameset>',
    "body after frameset": '<frameset></frameset><body onclick="ran++" style="color:red">',
}
#: The event handler attributes of every element of the document, and its distinct non-blank style attributes.
ATTRIBUTES_IN_CHROMIUM = """(() => {
  const all = [...document.querySelectorAll('*')];
  const handlers = all.flatMap(e => [...e.attributes]).filter(a => a.name.startsWith('on')).length;
  const styles = all.map(e => e.getAttribute('style')).filter(v => v !== null && v.trim());
  return JSON.stringify([handlers, [...new Set(styles)]]);
})()"""


def test_page_analysis_merges_a_second_html_or_body_start_tag_as_chromium_does(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving the case's document
    names = {site_factory.unique_host("merged"): case for case in MERGED}

    def page(name: str) -> Behaviour:
        return html(f"<!DOCTYPE html>{MERGED[names[name]]}")

    # When Chromium loads each and lists the event handler and style attributes of its document
    seen, _ = pages_in_chromium(site_factory, pki, names, page, {}, evaluate=ATTRIBUTES_IN_CHROMIUM)

    # Then page analysis counts those: the attributes of a second <body> (or <html>) the first lacked, not its
    # others (the code before counted none: `<body><body onload=...>` had no inline handler)
    counted = {}
    for case, document in MERGED.items():
        parsed = parse_page(make_snapshot(body=f"<!DOCTYPE html>{document}").final)
        counted[case] = [parsed.inline_handlers, list(parsed.style_attributes)]
    assert counted == {case: json.loads(found) for case, found in seen.items()}
