"""Stories for the page analysis: mixed content, subresource integrity, <base href>, dependencies."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.page import check_page
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.grading import grade
from websec_app.scanner.records.html import srcset_urls as _srcset_urls
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.scan import run_checks

CONTEXT = {"host": "www.example.com", "domain": "example.com", "origin": "https://www.example.com"}
SHA384 = "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"


def page_of(
    body: str, url: str = "https://www.example.com/", headers: Sequence[tuple[str, str]] = (), **kwargs: object
) -> CheckResult:
    return check_page(make_snapshot(url, headers=list(headers), body=body, **kwargs))


def outcomes(result: CheckResult) -> set[str]:
    return {f.outcome for f in result.findings}


def section(result: CheckResult) -> dict[str, object]:
    return grade([result], default_rulebook(), CONTEXT).sections["page_analysis"]


# --- not a page -------------------------------------------------------------------------------


def test_a_json_response_is_not_analysed() -> None:
    result = page_of('{"ok": true}', content_type="application/json")
    assert outcomes(result) == {"page.not_html"}
    assert "application/json" in (result.findings[0].note or "")
    assert result.details["html"] is False and result.details["base"] is None


def test_an_empty_body_is_not_analysed() -> None:
    result = page_of("")
    assert outcomes(result) == {"page.empty"}
    assert section(result)["deduction"] == 0


def test_html_without_a_content_type_is_sniffed_like_browsers_do() -> None:
    result = page_of('<!DOCTYPE html><script src="http://cdn.other.net/a.js"></script>', content_type=None)
    assert "page.mixed_active" in outcomes(result)


def test_a_body_opening_with_a_div_and_no_content_type_is_analysed_as_html() -> None:
    # Given no Content-Type and a body opening with <div>, one of MIME Sniffing §7.1's HTML patterns
    body = '<div id="app"></div><script src="http://cdn.other.net/a.js"></script>'
    result = page_of(body, content_type=None)
    # Then it is analysed as the page browsers render (Chromium 156: text/html), as security.txt already took it
    assert outcomes(result) == {"page.mixed_active", "page.sri_missing_script"}
    assert result.details["html"] is True


def test_a_body_opening_with_a_byte_order_mark_and_no_content_type_is_not_a_page() -> None:
    # Given no Content-Type and an HTML body behind a UTF-8 byte order mark
    body = '\ufeff<!DOCTYPE html><script src="http://cdn.other.net/a.js"></script>'
    result = page_of(body, content_type=None)
    # Then it is no page: browsers sniff it as text/plain (MIME Sniffing 7.1) and run none of its scripts
    assert outcomes(result) == {"page.not_html"}
    # While a declared text/html page with a byte order mark is analysed
    assert "page.mixed_active" in outcomes(page_of(body))


def test_a_utf16_page_with_a_byte_order_mark_is_analysed() -> None:
    # The BOM wins over the header's charset=utf-8 (HTML §13.2.3.1): read as UTF-8 the page showed nothing
    body = '<!DOCTYPE html><html><body><script src="http://x.net/a.js"></script></body></html>'
    result = check_page(make_snapshot("https://www.example.com/", body=body.encode("utf-16")))
    assert outcomes(result) == {"page.mixed_active", "page.sri_missing_script"}


@pytest.mark.parametrize(
    ("charset", "encoding", "loads"),
    [
        ("cp037", "ascii", True),  # a Python codec, no label of the Encoding Standard: ignored, as Chromium 156 does
        ("utf-32", "ascii", True),
        ("UTF8", "ascii", True),
        (' "latin1" ', "ascii", True),  # windows-1252
        ("x-user-defined", "ascii", True),
        ("utf-16", "utf-16-le", True),  # UTF-16LE, no byte order mark needed
        ("utf-16be", "utf-16-be", True),
        ("iso-2022-kr", "ascii", False),  # the "replacement" encoding: one U+FFFD, nothing loads
        ("hz-gb-2312", "ascii", False),
    ],
)
def test_the_charset_is_read_by_the_encoding_standards_labels(charset: str, encoding: str, loads: bool) -> None:
    body = '<!DOCTYPE html><html><body><script src="http://x.net/a.js"></script></body></html>'.encode(encoding)
    result = page_of(body, content_type=f"text/html; charset={charset}")
    assert outcomes(result) == (
        {"page.mixed_active", "page.sri_missing_script"} if loads else {"page.no_mixed_content"}
    )


#: ESC $ B: in ISO-2022-JP, what follows is two-byte characters (text) until ESC ( B.
JIS, ASCII = b"\x1b$B", b"\x1b(B"
SCRIPT = b'<script src="http://x.net/a.js"></script>'


@pytest.mark.parametrize(
    ("content_type", "body", "loads"),
    [
        # What reads as a comment in UTF-8 is text in ISO-2022-JP: the script after it runs
        ("text/html", b"<meta charset=iso-2022-jp>" + JIS + b"<!--" + ASCII + SCRIPT + b"<!-- -->", True),
        # And a script written in two-byte mode is text
        ("text/html", b"<meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII, False),
        ("text/html", b'<?xml version="1.0" encoding="iso-2022-jp"?>' + JIS + SCRIPT + ASCII, False),
        ("text/html; charset=utf-8", b"<meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII, True),  # header wins
        ("text/html", b"<meta charset=iso-2022-kr>" + SCRIPT, False),  # the replacement encoding
    ],
)
def test_the_page_is_read_in_the_encoding_its_meta_declares(content_type: str, body: bytes, loads: bool) -> None:
    # Read as UTF-8, as before, the first page showed no script and the others one Chromium 156 never runs
    result = check_page(make_snapshot("https://www.example.com/", body=body, content_type=content_type))
    assert outcomes(result) == (
        {"page.mixed_active", "page.sri_missing_script"} if loads else {"page.no_mixed_content"}
    )


def test_a_page_opening_with_an_xml_declaration_is_analysed() -> None:
    # Given an XHTML-style page served as text/html, opening with an XML declaration that names its encoding
    body = '<?xml version="1.0" encoding="utf-8"?><html><body><script src="http://x.net/a.js"></script></body></html>'
    # Then it is analysed: lxml refused the text (ValueError), and page analysis, the headers and the fingerprint
    # checks crashed (check.crashed caps the grade at F)
    assert outcomes(page_of(body)) == {"page.mixed_active", "page.sri_missing_script"}
    results = run_checks(make_snapshot("https://www.example.com/", body=body))
    assert [r.section for r in results if "check.crashed" in outcomes(r)] == []
    # And a <template> content opening with one (parsed apart) too
    inert = '<template><?xml version="1.0" encoding="utf-8"?><script src="http://x.net/b.js"></script></template>'
    assert outcomes(page_of(inert)) == {"page.no_mixed_content"}


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        # Browsers ignore a <form> opened inside another (HTML 13.2.6.4.7, the form element pointer)
        ('<form action="/a"><form action="http://x.net/post"><input name=q></form></form>', "page.no_mixed_content"),
        # SVG elements named like HTML ones load and submit nothing; an SVG <base> sets no base URL
        ('<svg><form action="http://x.net/post"></form></svg>', "page.no_mixed_content"),
        ('<svg><iframe src="http://x.net/f"></iframe></svg>', "page.no_mixed_content"),
        ('<svg><base href="http://x.net/"/></svg><script src="/a.js"></script>', "page.no_mixed_content"),
        # <frame> outside <frameset> is dropped; <image> is an <img>; an SVG <image> loads its href
        ('<frame src="http://x.net/f">', "page.no_mixed_content"),
        ('<frameset><frame src="http://x.net/f"></frameset>', "page.no_mixed_content"),  # once <body> came
        ('<image src="http://x.net/i.png">', "page.mixed_passive"),
        # <image> is void: what follows is its parent's (libxml2 nested it: the source was no video's, unlisted)
        ('<video><image src="/p.png"><source src="http://x.net/v.mp4"></video>', "page.mixed_passive"),
        ('<svg><image href="http://x.net/i.png"/></svg>', "page.mixed_passive"),
    ],
)
def test_what_is_graded_is_the_tree_browsers_build(markup: str, expected: str) -> None:
    # The code before graded the first six page.mixed_active (the base one with page.base_foreign too) and
    # missed the two images: Chromium 156 builds and fetches as said (tests/scanner/test_tree_browser.py)
    assert outcomes(page_of(f"<!DOCTYPE html><body>{markup}")) == {expected}
    # While a frame in a frameset that stands for the body is loaded
    assert outcomes(page_of('<html><frameset><frame src="http://x.net/f"></frameset></html>')) == {"page.mixed_active"}


def test_a_clean_page_is_good() -> None:
    body = '<html><head><script src="/app.js"></script><link rel="stylesheet" href="/site.css"></head></html>'
    result = page_of(body)
    assert outcomes(result) == {"page.no_mixed_content"}
    assert result.details["external_origins"] == []
    assert section(result)["deduction"] == 0


# --- mixed content ----------------------------------------------------------------------------


def test_an_http_script_on_an_https_page_is_active_mixed_content_and_caps_the_grade() -> None:
    # Given an HTTPS page that loads jQuery over plain HTTP
    body = '<script src="http://code.jquery.com/jquery-3.7.1.min.js"></script>'
    result = page_of(body)
    # Then it is bad and important, and the grade cannot be better than B
    assert "page.mixed_active" in outcomes(result)
    assert result.details["mixed_content"]["active"] == ["http://code.jquery.com/jquery-3.7.1.min.js"]
    graded = grade([result], default_rulebook(), CONTEXT)
    finding = next(f for f in graded.sections["page_analysis"]["findings"] if f["check"] == "page.mixed_active")
    assert finding["status"] == "bad" and finding["severity"] == "important" and finding["cwe"] == "CWE-319"
    assert graded.grade == "B"


@pytest.mark.parametrize(
    "markup",
    [
        '<link rel="stylesheet" href="http://cdn.other.net/s.css">',
        '<link rel="alternate stylesheet" href="http://cdn.other.net/s.css">',
        '<iframe src="http://widgets.other.net/w"></iframe>',
        '<object data="http://cdn.other.net/movie.swf"></object>',
        '<embed src="http://cdn.other.net/movie.swf">',
        '<link rel="preload" as="script" href="http://cdn.other.net/a.js">',
        '<link rel="preload" as="font" href="http://cdn.other.net/f.woff2">',
        '<link rel="modulepreload" href="http://cdn.other.net/m.js">',
        '<form action="http://www.example.com/login" method="post"></form>',
        '<form><button formaction="http://www.example.com/send">Go</button></form>',
        # Mixed Content §4.3: images fetched for srcset or <picture> (initiator "imageset") are not upgraded
        '<img src="/a.png" srcset="http://img.other.net/a.png 2x">',
        '<img src="http://img.other.net/a.png" srcset="/b.png 2x">',
        '<img src="http://img.other.net/a.png" srcset="">',
        '<picture><img src="http://img.other.net/a.png"></picture>',
        '<picture><source srcset="http://img.other.net/a.webp" type="image/webp"><img src="/a.png"></picture>',
    ],
)
def test_blockable_resources_and_insecure_forms_are_active(markup: str) -> None:
    result = page_of(f"<html><body>{markup}</body></html>")
    assert "page.mixed_active" in outcomes(result)
    assert result.details["mixed_content"]["passive"] == []


@pytest.mark.parametrize(
    "markup",
    [
        '<img src="http://img.other.net/a.png">',
        '<img src="http://img.other.net/a.png" sizes="100px">',
        '<input type="image" src="http://img.other.net/a.png">',
        '<video src="http://media.other.net/v.mp4" poster="/p.png"></video>',
        '<audio><source src="http://media.other.net/a.mp3"></audio>',
        '<link rel="icon" href="http://img.other.net/favicon.ico">',
    ],
)
def test_images_and_media_are_passive(markup: str) -> None:
    result = page_of(f"<html><body>{markup}</body></html>")
    assert outcomes(result) == {"page.mixed_passive"}
    assert result.details["mixed_content"]["active"] == []
    assert section(result)["deduction"] == 5


@pytest.mark.parametrize(
    ("markup", "fetched"),
    [
        ('<script type="text/javascript; charset=utf-8" src="{url}"></script>', False),  # no parameters allowed
        ('<script type=" Text/JavaScript " src="{url}"></script>', True),
        ('<script type="  " src="{url}"></script>', False),
        ('<script type="" language="vbscript" src="{url}"></script>', True),
        ('<script language="vbscript" src="{url}"></script>', False),
        ('<script language="JavaScript1.2" src="{url}"></script>', True),
        ('<script nomodule src="{url}"></script>', False),
        ('<script type="module" nomodule src="{url}"></script>', True),
        ('<svg><script src="{url}"></script></svg>', False),  # SVG scripts load href
        ('<svg><script href="{url}"></script></svg>', True),
        ('<svg><script xlink:href="{url}"></script></svg>', True),
        ('<svg><script nomodule language="vbscript" href="{url}"></script></svg>', True),
        ('<math><script src="{url}"></script></math>', False),
        ('<svg><foreignObject><script src="{url}"></script></foreignObject></svg>', True),
        ('<link rel="stylesheet" disabled href="{url}">', False),
        ('<link rel="stylesheet" type="text/less" href="{url}">', False),
        ('<link rel="stylesheet" type="TEXT/CSS; charset=utf-8" href="{url}">', True),
        ('<link rel="preload" href="{url}">', False),
        ('<link rel="preload" as="bogus" href="{url}">', False),
        ('<link rel="preload" as=" script" href="{url}">', False),
        ('<link rel="preload" as="SCRIPT" href="{url}">', True),
        ('<link rel="preload" as="video" href="{url}">', False),
    ],
)
def test_only_what_browsers_fetch_is_mixed_content(markup: str, fetched: bool) -> None:
    # HTML §4.12.1.1, §4.2.4, SVG 2 §15.2; each row as Chromium 156 reads it (test_page_resources_browser.py)
    result = page_of(markup.replace("{url}", "http://cdn.other.net/a.js"))
    assert ("page.mixed_active" in outcomes(result)) is fetched
    assert ("page.no_mixed_content" in outcomes(result)) is not fetched


def test_an_svg_script_from_another_site_needs_integrity_too() -> None:
    result = page_of('<svg><script href="https://cdn.other.net/a.js"></script></svg>')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_missing_script"}
    pinned = page_of(f'<svg><script href="https://cdn.other.net/a.js" integrity="{SHA384}" crossorigin></script></svg>')
    assert outcomes(pinned) == {"page.no_mixed_content", "page.sri_ok"}


def test_srcset_urls_may_contain_commas() -> None:
    srcset = "https://res.cloudinary.com/x/w_100,h_100/a.jpg 1x, http://img.other.net/b.jpg 2x,/c.jpg"
    assert _srcset_urls(srcset) == [
        "https://res.cloudinary.com/x/w_100,h_100/a.jpg",
        "http://img.other.net/b.jpg",
        "/c.jpg",
    ]
    result = page_of(f'<img srcset="{srcset}">')
    assert result.details["mixed_content"]["active"] == ["http://img.other.net/b.jpg"]


def test_a_source_counts_only_where_its_parent_reads_it() -> None:
    # HTML §4.8.2, §4.8.9: <picture> reads a <source>'s srcset, <audio>/<video> its src; libxml2 nests what
    # follows an unclosed <source> inside it, so the parent is the element around the <source>s
    body = (
        '<video><source src="http://media.other.net/a.mp4"><source src="http://media.other.net/b.webm"></video>'
        '<video><source srcset="http://img.other.net/ignored.png"></video>'
        '<picture><source src="http://media.other.net/ignored.mp4"></picture>'
    )
    mixed = page_of(body).details["mixed_content"]
    assert mixed["passive"] == ["http://media.other.net/a.mp4", "http://media.other.net/b.webm"]
    assert mixed["active"] == []


def test_upgrade_insecure_requests_neutralises_mixed_content() -> None:
    # Given mixed content and a CSP that upgrades insecure requests
    script = f'<script src="http://cdn.other.net/a.js" integrity="{SHA384}" crossorigin></script>'
    body = script + '<img src="http://x.net/i">'
    result = page_of(body, headers=[("Content-Security-Policy", "default-src https:; Upgrade-Insecure-Requests")])
    # Then browsers fetch everything over HTTPS: good, with a note, and the URLs still listed
    assert "page.mixed_upgraded" in outcomes(result)
    assert not outcomes(result) & {"page.mixed_active", "page.mixed_passive"}
    assert result.details["mixed_content"]["upgraded_by_csp"] is True
    assert section(result)["deduction"] == 0


def test_upgrade_insecure_requests_in_a_meta_tag_counts_but_report_only_does_not() -> None:
    script = '<script src="http://cdn.other.net/a.js"></script>'
    meta = '<meta http-equiv="Content-Security-Policy" content="upgrade-insecure-requests">'
    in_meta = page_of(f"<html><head>{meta}{script}</head></html>")
    report_only = page_of(script, headers=[("Content-Security-Policy-Report-Only", "upgrade-insecure-requests")])
    in_body = page_of(f"<html><body>{meta}{script}</body></html>")
    in_noscript = page_of(f"<html><head><noscript>{meta}</noscript>{script}</head></html>")
    assert "page.mixed_active" in outcomes(in_noscript)
    assert "page.mixed_upgraded" in outcomes(in_meta)
    assert "page.mixed_active" in outcomes(report_only)
    assert "page.mixed_active" in outcomes(in_body)


def test_upgrade_insecure_requests_in_a_meta_tag_covers_only_what_follows_it() -> None:
    # CSP3 §3.3: a <meta> policy applies to what follows it; Chromium 156 blocks the script before it
    before = '<script src="http://cdn.other.net/before.js"></script>'
    after = '<img src="http://img.other.net/after.png">'
    meta = '<meta http-equiv="Content-Security-Policy" content="upgrade-insecure-requests">'
    result = page_of(f"<html><head>{before}{meta}</head><body>{after}</body></html>")
    assert outcomes(result) == {"page.mixed_active", "page.mixed_upgraded", "page.sri_missing_script"}
    assert [f.note for f in result.findings if f.outcome == "page.mixed_active"] == ["http://cdn.other.net/before.js"]
    assert result.details["mixed_content"]["upgraded_by_csp"] is False
    # a header policy covers the whole page
    header = page_of(
        f"<html><head>{before}</head></html>", headers=[("Content-Security-Policy", "upgrade-insecure-requests")]
    )
    assert outcomes(header) == {"page.mixed_upgraded", "page.sri_missing_script"}


def test_upgrade_insecure_requests_is_read_as_the_csp_check_reads_it() -> None:
    # Given the directive with a value after a tab, which browsers ignore (Chromium 156 upgrades:
    # tests/scanner/test_upgrade_insecure_requests_browser.py), and one in a policy that is only reported
    script = '<script src="http://cdn.other.net/a.js"></script>'
    with_value = page_of(script, headers=[("Content-Security-Policy", "upgrade-insecure-requests\tnow")])
    reported = page_of(script, headers=[("Content-Security-Policy-Report-Only", "upgrade-insecure-requests")])
    # Then page analysis counts what records/csp.upgrades_insecure_requests counts, as the CSP check does
    assert "page.mixed_upgraded" in outcomes(with_value)
    assert "page.mixed_active" in outcomes(reported)


def test_upgrade_insecure_requests_after_a_comma_in_a_meta_tag_counts() -> None:
    # Chromium 156 splits a <meta> policy on commas as a header and upgrades (test_upgrade_insecure_requests_browser);
    # CSP3 §3.3 would read one policy, img-src with the sources '*,' and 'upgrade-insecure-requests'
    meta = '<meta http-equiv="Content-Security-Policy" content="img-src *, upgrade-insecure-requests">'
    result = page_of(f'<html><head>{meta}<script src="http://cdn.other.net/a.js"></script></head></html>')
    assert "page.mixed_upgraded" in outcomes(result) and "page.mixed_active" not in outcomes(result)


def test_upgrade_insecure_requests_in_a_meta_tag_with_a_padded_http_equiv_does_not_count() -> None:
    # HTML matches http-equiv whole: Chromium ignores <meta http-equiv=" Content-Security-Policy">
    meta = '<meta http-equiv=" Content-Security-Policy" content="upgrade-insecure-requests">'
    result = page_of(f'<html><head>{meta}<script src="http://cdn.other.net/a.js"></script></head></html>')
    assert "page.mixed_active" in outcomes(result)
    assert result.details["mixed_content"]["upgraded_by_csp"] is False


def test_mixed_content_does_not_apply_to_plain_http_pages() -> None:
    result = page_of('<script src="http://cdn.other.net/a.js"></script>', url="http://www.example.com/")
    assert "page.http_page" in outcomes(result)
    assert result.details["mixed_content"]["active"] == []


def test_localhost_is_potentially_trustworthy_not_mixed() -> None:
    result = page_of('<script src="http://localhost:35729/livereload.js"></script><img src="http://127.0.0.1/x.png">')
    assert "page.no_mixed_content" in outcomes(result)
    assert result.details["mixed_content"] == {"active": [], "passive": [], "upgraded_by_csp": False}


def test_noscript_and_template_contents_are_not_fetched() -> None:
    body = (
        '<noscript><img src="http://track.other.net/p.gif"></noscript>'
        '<template><script src="http://x.net/a.js"></script></template>'
    )
    assert outcomes(page_of(body)) == {"page.no_mixed_content"}


@pytest.mark.parametrize(
    "hiding",
    ["<noscript><div>Enable JavaScript</noscript><main>x</main>", "<template><div>card</template>"],
)
def test_an_element_left_open_in_noscript_or_template_does_not_hide_the_rest_of_the_page(hiding: str) -> None:
    # Chromium 156 fetches and runs the script; libxml2 left the <noscript> or <template> open to the end
    result = page_of(f'<body>{hiding}<script src="http://cdn.other.net/a.js"></script></body>')
    assert outcomes(result) == {"page.mixed_active", "page.sri_missing_script"}


def test_a_script_after_the_end_of_html_is_analysed() -> None:
    # HTML §13.2.6.4.23: a start tag after </html> is reprocessed "in body": the script runs (Magecart, injected ads)
    body = '<html><head></head><body><p>x</p></body></html>\n<script src="http://cdn.other.net/evil.js"></script>\n'
    result = page_of(body)
    assert outcomes(result) == {"page.mixed_active", "page.sri_missing_script"}
    upgraded = page_of(body, headers=[("Content-Security-Policy", "upgrade-insecure-requests")])
    assert outcomes(upgraded) == {"page.mixed_upgraded", "page.sri_missing_script"}


def test_links_are_navigation_not_mixed_content() -> None:
    assert outcomes(page_of('<a href="http://other.net/">elsewhere</a>')) == {"page.no_mixed_content"}


# --- subresource integrity --------------------------------------------------------------------


def test_a_protocol_relative_cdn_script_in_uppercase_markup_needs_integrity() -> None:
    # Given an upper-case script tag loading from another site by a protocol-relative URL
    result = page_of('<HTML><HEAD><SCRIPT SRC="//cdn.other.net/lib.js"></SCRIPT></HEAD></HTML>')
    # Then it resolves to https:// (no mixed content) but lacks SRI
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_missing_script"}
    assert result.details["sri"]["missing"] == ["https://cdn.other.net/lib.js"]
    assert section(result)["deduction"] == 5


def test_a_cross_site_stylesheet_without_integrity_is_a_smaller_finding() -> None:
    result = page_of('<link rel="stylesheet" href="https://cdn.other.net/bootstrap.min.css">')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_missing_stylesheet"}


def test_pinned_cross_site_scripts_are_good() -> None:
    src = "https://cdn.jsdelivr.net/npm/lib@1.2.3"
    body = f'<script src="{src}" integrity="{SHA384}" crossorigin="anonymous"></script>'
    result = page_of(body)
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_ok"}
    assert result.details["sri"]["present"] == 1


@pytest.mark.parametrize(
    "markup",
    [
        '<script src="https://static.example.com/app.js"></script>',  # same site, other origin
        '<script src="/app.js"></script>',
        '<link rel="canonical" href="https://other.net/page">',
        '<link rel="icon" href="https://cdn.other.net/favicon.ico">',
        '<link rel="preconnect" href="https://fonts.gstatic.com">',
        '<script type="text/template" src="https://cdn.other.net/t.html"></script>',
        '<script src="https://js.stripe.com/v3/"></script>',  # a living script SRI cannot pin
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter">',
    ],
)
def test_integrity_is_not_asked_where_it_does_not_apply(markup: str) -> None:
    result = page_of(markup)
    assert not {o for o in outcomes(result) if o.startswith("page.sri_missing")}


def test_exempt_third_party_scripts_are_listed_as_not_applicable() -> None:
    result = page_of('<script src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>')
    assert result.details["sri"]["not_applicable"] == ["https://www.googletagmanager.com/gtag/js?id=G-1"]


def test_integrity_without_crossorigin_is_a_note_because_the_load_fails() -> None:
    result = page_of(f'<script src="https://cdn.other.net/a.js" integrity="{SHA384}"></script>')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_no_crossorigin", "page.sri_ok"}
    assert section(result)["deduction"] == 0


@pytest.mark.parametrize("module_type", ["module", " Module "])
def test_a_module_script_needs_no_crossorigin_to_be_verified(module_type: str) -> None:
    # HTML §8.1.4.2: module scripts are always fetched in CORS mode, so integrity is checked and the script loads
    body = f'<script type="{module_type}" src="https://cdn.other.net/m.js" integrity="{SHA384}"></script>'
    result = page_of(body)
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_ok"}


def test_an_integrity_value_with_only_unsupported_hashes_is_ignored_by_browsers() -> None:
    sha1 = "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="
    result = page_of(f'<script src="https://cdn.other.net/a.js" integrity="{sha1}" crossorigin></script>')
    assert "page.sri_missing_script" in outcomes(result)
    assert result.details["sri"]["invalid"] == ["https://cdn.other.net/a.js"]


def test_a_hash_of_the_wrong_length_blocks_the_load_and_is_noted() -> None:
    result = page_of('<script src="https://cdn.other.net/a.js" integrity="sha384-AAAA" crossorigin></script>')
    assert "page.sri_malformed" in outcomes(result)
    assert "page.sri_missing_script" not in outcomes(result)


@pytest.mark.parametrize(
    "integrity",
    [
        "sha384-not*base64",  # Chromium 156: "the digest must be a valid, base64-encoded value"
        f"{SHA384}!",
        SHA384.replace("sha384", "SHA384"),  # "the specified hash algorithm must be one of ..."
        "sha-384-" + SHA384.removeprefix("sha384-"),  # the SRI spec and Firefox split at the first '-'
        "sha384-",
        f"{SHA384}\u00a0x",  # a no-break space is no separator
    ],
)
def test_an_integrity_value_browsers_cannot_read_is_ignored_and_the_script_runs_unchecked(integrity: str) -> None:
    # SRI §3.3.3: a token whose algorithm or digest browsers cannot read is skipped; none left, no check at all
    result = page_of(f'<script src="https://cdn.other.net/a.js" integrity="{integrity}" crossorigin></script>')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_missing_script"}
    assert "browsers ignore it" in str(section(result)["findings"])


@pytest.mark.parametrize(
    "integrity",
    [
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",  # no '=' padding: Chromium verifies it
        SHA384.replace("+", "-").replace("/", "_"),  # base64url
        f"{SHA384}==",
        f"{SHA384}===",  # Chromium 156 drops every '=' at the end, however many
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU===",
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU==",  # 43 characters and two '='
        f"{SHA384}?foo",  # options are ignored
        f"{SHA384} sha512-!!!!",  # the unreadable sha512 is dropped before the strongest is chosen
        f"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\v{SHA384}",  # Chromium splits on vertical tabs too
    ],
)
def test_an_integrity_value_browsers_verify_pins_the_script(integrity: str) -> None:
    result = page_of(f'<script src="https://cdn.other.net/a.js" integrity="{integrity}" crossorigin></script>')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_ok"}


def test_only_the_strongest_hash_algorithm_counts() -> None:
    # SRI §3.3.4-3.3.5: browsers compare only the sha512 entries here, and "AAAA" matches nothing: blocked
    sha256 = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    blocked = page_of(
        f'<script src="https://cdn.other.net/a.js" integrity="{sha256} sha512-AAAA" crossorigin></script>'
    )
    malformed = page_of('<script src="https://cdn.other.net/a.js" integrity="sha512-AAAA" crossorigin></script>')
    assert "page.sri_malformed" in outcomes(blocked)
    assert outcomes(blocked) == outcomes(malformed)  # judged as if the sha256 were not there
    # a weaker entry that does not parse is never compared
    fine = page_of(f'<script src="https://cdn.other.net/a.js" integrity="sha256-AAAA {SHA384}" crossorigin></script>')
    assert outcomes(fine) == {"page.no_mixed_content", "page.sri_ok"}


# --- base and dependencies --------------------------------------------------------------------


def test_a_base_pointing_elsewhere_is_a_warning_and_moves_relative_urls() -> None:
    # Given a <base> on another origin and a relative script
    result = page_of('<html><head><base href="https://evil.other.net/"><script src="app.js"></script></head></html>')
    # Then the base is reported and the script counts as coming from there (so it lacks SRI)
    assert {"page.base_foreign", "page.sri_missing_script"} <= outcomes(result)
    assert result.details["base"] == "https://evil.other.net/"
    assert result.details["sri"]["missing"] == ["https://evil.other.net/app.js"]


def test_a_base_applies_only_to_what_follows_it_but_to_every_form() -> None:
    # HTML §4.2.3: what was fetched before the <base> was inserted used the page's URL (Chromium 156 loads the
    # first script from the page's origin); a form's action is resolved when it is submitted
    body = (
        '<html><head><script src="before.js"></script><form action="send"></form>'
        '<base href="http://www.example.com/"><script src="after.js"></script></head></html>'
    )
    result = page_of(body)
    assert result.details["mixed_content"]["active"] == [
        "http://www.example.com/send",
        "http://www.example.com/after.js",
    ]


def test_a_relative_base_on_the_same_origin_is_fine() -> None:
    result = page_of('<base href="/app/"><script src="main.js"></script>')
    assert "page.base_foreign" not in outcomes(result)
    assert result.details["base"] == "https://www.example.com/app/"


def test_an_http_base_on_an_https_page_makes_relative_scripts_mixed() -> None:
    result = page_of('<base href="http://www.example.com/"><script src="main.js"></script>')
    assert {"page.base_foreign", "page.mixed_active"} <= outcomes(result)


@pytest.mark.parametrize(
    "inert",
    [
        '<template><base href="http://www.example.com/"></template>',  # in the template's content, not the document
        '<noscript><base href="https://static.other.net/"></noscript>',  # raw text in <head> with scripting on
    ],
)
def test_a_base_inside_template_or_noscript_is_not_the_page_base(inert: str) -> None:
    # HTML §4.2.3, §4.12.3, §13.2.6.4.4: only a <base> of the document sets the base URL
    result = page_of(f'<html><head>{inert}</head><body><script src="app.js"></script></body></html>')
    assert outcomes(result) == {"page.no_mixed_content"}
    assert result.details["base"] is None
    # and the first base of the document after it still counts
    later = page_of(f'<html><head>{inert}<base href="/app/"></head><body><script src="m.js"></script></body></html>')
    assert later.details["base"] == "https://www.example.com/app/"


@pytest.mark.parametrize(
    "src",
    [
        "\\\\cdn.other.net\\lib.js",  # \\cdn.other.net\lib.js: "\\" is "/" in http(s) URLs
        "/\\cdn.other.net/lib.js",
        "https:\\\\cdn.other.net/lib.js",
        "///cdn.other.net/lib.js",  # more slashes than two still start the authority
        " \x01//cdn.other.net/li\tb.js\x1f",  # C0 controls and spaces stripped, tabs removed
    ],
)
def test_backslashes_in_a_url_are_slashes_as_browsers_read_them(src: str) -> None:
    # WHATWG URL §4.4: for special schemes "\\" is "/"; urljoin kept it a path character, hiding the CDN
    result = page_of(f'<script src="{src}"></script>')
    assert outcomes(result) == {"page.no_mixed_content", "page.sri_missing_script"}
    assert result.details["sri"]["missing"] == ["https://cdn.other.net/lib.js"]


def test_a_base_written_with_backslashes_is_still_foreign() -> None:
    result = page_of('<head><base href="\\\\static.other.net\\"></head><body><script src="lib.js"></script></body>')
    assert result.details["base"] == "https://static.other.net/"
    assert {"page.base_foreign", "page.sri_missing_script"} <= outcomes(result)


def test_another_special_scheme_without_slashes_still_names_a_host() -> None:
    # WHATWG URL "special authority ignore slashes state": http:cdn.other.net/a.js is http://cdn.other.net/a.js
    result = page_of('<script src="http:cdn.other.net/a.js"></script>')
    assert [(f.outcome, f.subject) for f in result.findings if f.outcome == "page.mixed_active"] == [
        ("page.mixed_active", "http://cdn.other.net")
    ]
    assert result.details["external_origins"][0]["origin"] == "http://cdn.other.net"


def test_external_dependencies_are_grouped_by_origin() -> None:
    body = """
    <link rel="stylesheet" href="https://cdn.other.net/a.css" integrity="{h}" crossorigin>
    <script src="https://cdn.other.net/a.js" integrity="{h}" crossorigin></script>
    <img src="https://img.other.net/x.png"><img src="https://static.example.com/logo.png">
    <iframe src="https://www.youtube.com/embed/abc"></iframe>
    """.replace("{h}", SHA384)
    result = page_of(body)
    assert result.details["external_origins"] == [
        {"origin": "https://cdn.other.net", "resources": 2, "types": ["stylesheet", "script"], "same_site": False},
        {"origin": "https://img.other.net", "resources": 1, "types": ["image"], "same_site": False},
        {"origin": "https://static.example.com", "resources": 1, "types": ["image"], "same_site": True},
        {"origin": "https://www.youtube.com", "resources": 1, "types": ["frame"], "same_site": False},
    ]
    assert result.details["external_origin_count"] == 4


def test_thousands_of_urls_are_listed_up_to_the_limit_with_a_count_of_the_rest() -> None:
    # Given a page of 3,000 cross-site http:// scripts, each from its own origin
    body = "".join(f'<script src="http://c{i}.other{i}.net/a.js"></script>' for i in range(3_000))

    # When it is graded
    data = section(page_of(body))

    # Then each finding names 50 of them and says how many more there are: a finding per URL made a 2.3 MB
    # report section of 9,990 scripts, every one a subject of both findings
    findings = {f["check"]: f for f in data["findings"]}
    for outcome in ("page.mixed_active", "page.sri_missing_script"):
        assert len(findings[outcome]["subjects"]) == 50
        assert findings[outcome]["subjects_not_listed"] == 2_950
        assert findings[outcome]["note"].endswith(
            "; and 2,950 more subjects like these, not listed; and 2,950 more notes like these, not listed"
        )
    assert len(data["external_origins"]) == 50
    assert data["external_origin_count"] == 3_000
    assert len(json.dumps(data)) < 30_000


def test_a_url_of_a_megabyte_is_cut_everywhere_the_report_shows_it() -> None:
    # Given a page of 2 MiB: a <base href> to a 1 MB host and an http:// script from another 1 MB host
    base_host = "b" * 1_000_000 + ".com"
    script_host = "s" * 1_000_000 + ".com"
    body = f'<base href="https://{base_host}/"><script src="http://{script_host}/"></script>'

    # When it is graded
    data = section(page_of(body))

    # Then the findings are those of any page with such a base and script
    findings = {f["check"]: f for f in data["findings"]}
    assert set(findings) == {"page.base_foreign", "page.mixed_active", "page.sri_missing_script"}
    # and each place that copied a URL (subjects, notes, the details' lists) shows its first 2,048 characters and
    # says how many more there were: the URL was copied whole 7 times, a 14.7 MB section for a 2 MiB page
    script_url = f"http://{script_host}/"
    cut = f"{script_url[:2048]} … ({len(script_url) - 2048:,} more characters not shown)"
    assert data["mixed_content"]["active"] == [cut]
    assert data["sri"]["missing"] == [cut]
    assert findings["page.mixed_active"]["note"] == cut
    assert findings["page.mixed_active"]["subjects"] == [
        f"http://{script_host}"[:2048] + f" … ({len(script_host) + 7 - 2048:,} more characters not shown)"
    ]
    assert data["base"].startswith(f"https://{base_host[:100]}") and data["base"].endswith(
        f"({len(base_host) + 9 - 2048:,} more characters not shown)"
    )
    assert findings["page.base_foreign"]["note"].endswith("more characters not shown)>")
    assert [e["origin"] for e in data["external_origins"]] == findings["page.mixed_active"]["subjects"]
    assert len(json.dumps(data)) < 40_000  # each note stored twice: joined in `note`, one by one in `notes`


def test_duplicate_attributes_keep_the_first_like_browsers() -> None:
    result = page_of('<script src="/local.js" src="http://cdn.other.net/a.js"></script>')
    assert outcomes(result) == {"page.no_mixed_content"}


def test_grading_turns_the_page_result_into_json() -> None:
    body = """<html><head><base href="https://other.net/"><script src="http://a.net/x.js"></script>
    <script src="https://cdn.other.net/y.js"></script></head><body><img src="http://b.net/i.png"></body></html>"""
    graded = grade([page_of(body)], default_rulebook(), CONTEXT)
    data = json.loads(json.dumps(graded.sections["page_analysis"]))
    assert {f["check"] for f in data["findings"]} == {
        "page.mixed_active",
        "page.mixed_passive",
        "page.sri_missing_script",
        "page.base_foreign",
    }
    assert data["mixed_content"]["active"] == ["http://a.net/x.js"]
    assert graded.grade in ("B", "C", "D", "F")
