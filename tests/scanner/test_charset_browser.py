"""Page analysis decodes a page in the encoding Chromium picks (records/html_encoding.py): the Content-Type
charset by the Encoding Standard's labels, not Python's codec names; then an XML declaration, a `<meta charset>`
found as Blink's prescan finds it, else windows-1252.

Given one fixture HTTPS site answering under one name per case, each name serving the case's page, a script from
another name, when headless Chromium (Debian's, through Playwright) loads it, then the script was fetched exactly
where page analysis reads the page and lists it; and the encoding Chromium reports (`document.characterSet`) is
the one page analysis decodes the page in. Sync Playwright must not run inside the test's event loop, so the tests
are synchronous.
"""

from __future__ import annotations

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.records.html import parse_page, raw_resources
from websec_app.scanner.records.html_encoding import page_encoding

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


SCRIPT = b'<script src="https://{cdn}/app.js?{name}"></script>'
#: In ISO-2022-JP, ESC $ B turns the ASCII after it into two-byte characters (text), ESC ( B turns it back.
JIS, ASCII = b"\x1b$B", b"\x1b(B"
#: case -> (Content-Type, page, whether Chromium 156 fetches the script). The page's encoding decides whether the
#: script is markup: read as UTF-8, as before, the first case hid it in a comment and the second invented it.
DECLARED: dict[str, tuple[str, bytes, bool]] = {
    "meta iso-2022-jp: what reads as a comment in UTF-8 is text": (
        "text/html",
        b'<meta charset="iso-2022-jp">' + JIS + b"<!--" + ASCII + SCRIPT + b"<!-- -->",
        True,
    ),
    "meta iso-2022-jp: the script is text": (
        "text/html",
        b'<meta charset="iso-2022-jp">' + JIS + SCRIPT + ASCII,
        False,
    ),
    "http-equiv Content-Type": (
        "text/html",
        b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-2022-JP">' + JIS + SCRIPT + ASCII,
        False,
    ),
    "a label the header names but browsers do not know: the meta decides": (
        "text/html; charset=utf-7",
        b"<meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII,
        False,
    ),
    "a known label in the header wins over the meta": (
        "text/html; charset=utf-8",
        b"<meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII,
        True,
    ),
    "the meta's last charset attribute": (
        "text/html",
        b"<meta charset=utf-8 charset=iso-2022-jp>" + JIS + SCRIPT + ASCII,
        False,
    ),
    "a meta inside <title> is text": (
        "text/html",
        b"<title><meta charset=iso-2022-jp></title>" + JIS + SCRIPT + ASCII,
        True,
    ),
    "a meta inside <noscript> counts (the prescan reads with scripting off)": (
        "text/html",
        b"<noscript><meta charset=iso-2022-jp></noscript>" + JIS + SCRIPT + ASCII,
        False,
    ),
    "a meta past 1,024 bytes of the head": (
        "text/html",
        b"<head><title>" + b"x" * 1100 + b"</title><meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII,
        False,
    ),
    "a meta past 1,024 bytes of the body": (
        "text/html",
        b"<body>" + b"x" * 1100 + b"<meta charset=iso-2022-jp>" + JIS + SCRIPT + ASCII,
        True,
    ),
    "a meta naming the replacement encoding": ("text/html", b"<meta charset=iso-2022-kr>" + SCRIPT, False),
    "an XML declaration": (
        "text/html",
        b'<?xml version="1.0" encoding="iso-2022-jp"?>' + JIS + SCRIPT + ASCII,
        False,
    ),
    "UTF-16 without a byte order mark, by its XML declaration": (
        "text/html",
        b'<\0?\0x\0m\0l\0 \0v\0e\0r\0s\0i\0o\0n\0=\0"\0\x31\0.\0\x30\0"\0?\0>\0{utf16-script}',
        True,
    ),
}


def test_chromium_fetches_the_script_exactly_where_the_page_declares_an_encoding_that_hides_it(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving a page whose declared encoding decides whether its script is markup
    cdn = site_factory.unique_host("cdn")
    names = {site_factory.unique_host("declared"): case for case in DECLARED}

    def body(name: str) -> bytes:
        script = SCRIPT.replace(b"{cdn}", cdn.encode()).replace(b"{name}", name.encode())
        page = DECLARED[names[name]][1].replace(b"{utf16-script}", script.decode().encode("utf-16-le"))
        return page.replace(SCRIPT, script)

    def page(name: str) -> Behaviour:
        return Response(200, [("Content-Type", DECLARED[names[name]][0])], body(name))

    # When Chromium loads each
    script = Response(200, [("Content-Type", "text/javascript")], "")
    _, site = pages_in_chromium(site_factory, pki, names, page, {"/app.js": script}, more_names=(cdn,))
    asked = {request.target.partition("?")[2] for request in site.requests_to("/app.js")}

    # Then the script was fetched where the case says
    fetched = {case: name in asked for name, case in names.items()}
    assert fetched == {case: fetches for case, (_, _, fetches) in DECLARED.items()}
    # And page analysis lists it exactly there
    listed = {}
    for name, case in names.items():
        snapshot = make_snapshot(f"https://{name}/", body=body(name), content_type=DECLARED[case][0])
        listed[case] = any(f"https://{cdn}/app.js" in raw for raw, _, _ in raw_resources(parse_page(snapshot.final)))
    assert listed == fetched


PAD = b"x" * 2000
#: case -> (Content-Type, None to send none; the page). Every page is ASCII: Chromium's guess from the bytes (CED),
#: which a page without a label gets, finds nothing to guess from.
ENCODINGS: dict[str, tuple[str | None, bytes]] = {
    "no label": ("text/html", b"<!DOCTYPE html><title>a</title>"),
    "meta iso-8859-2": ("text/html", b'<meta charset="iso-8859-2">'),
    "meta utf-16le is UTF-8": ("text/html", b'<meta charset="utf-16le">'),
    "meta unicode (UTF-16) is UTF-8": ("text/html", b'<meta charset="unicode">'),
    "meta x-user-defined is windows-1252": ("text/html", b'<meta charset="x-user-defined">'),
    "meta with an unknown label": ("text/html", b'<meta charset="utf-7">'),
    "meta latin1": ("text/html", b'<meta charset="latin1">'),
    "meta gbk": ("text/html", b'<meta charset="gbk">'),
    "meta label with spaces": ("text/html", b'<meta charset=" shift_jis ">'),
    "meta in capitals": ("text/html", b"<META CHARSET=SHIFT_JIS>"),
    "meta/charset": ("text/html", b"<meta/charset=shift_jis>"),
    "pragma": ("text/html", b'<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">'),
    "pragma after content": ("text/html", b'<meta content="text/html; charset=shift_jis" http-equiv="content-type">'),
    "content without pragma": ("text/html", b'<meta content="text/html; charset=shift_jis">'),
    "pragma with another http-equiv": ("text/html", b'<meta http-equiv="refresh" content="charset=shift_jis">'),
    "pragma http-equiv with a space": ("text/html", b'<meta content="charset=shift_jis" http-equiv="content-type ">'),
    "pragma charset quoted": (
        "text/html",
        b"<meta http-equiv=content-type content=\"text/html; charset='shift_jis'\">",
    ),
    "pragma charset quote unclosed": ("text/html", b'<meta http-equiv=content-type content="charset=\'shift_jis">'),
    "pragma charset inside a word": (
        "text/html",
        b'<meta http-equiv=content-type content="xcharset=euc-kr;charset=gbk">',
    ),
    "pragma charset spaced": ("text/html", b'<meta http-equiv=content-type content="charset = shift_jis ;x">'),
    "charset before content": (
        "text/html",
        b'<meta charset=bogus content="charset=shift_jis" http-equiv=content-type>',
    ),
    "content before charset": ("text/html", b'<meta content="charset=euc-kr" http-equiv=content-type charset=gbk>'),
    "two contents": ("text/html", b'<meta http-equiv=content-type content="charset=euc-kr" content="charset=gbk">'),
    "an unknown label, then another meta": ("text/html", b'<meta charset="bogus"><meta charset="shift_jis">'),
    "meta in a comment": ("text/html", b"<!-- <meta charset=shift_jis> -->"),
    "meta in a bogus comment": ("text/html", b"<!x <meta charset=euc-kr> ><meta charset=shift_jis>"),
    "meta in an attribute": ("text/html", b'<link title="<meta charset=shift_jis>">'),
    "meta in <script>": ("text/html", b'<script>"<meta charset=shift_jis>"</script>'),
    "meta in an escaped <script>": ("text/html", b"<script><!--<script></script><meta charset=gbk>--></script>"),
    "meta in <style>": ("text/html", b"<style><meta charset=shift_jis></style>"),
    "meta in <textarea>": ("text/html", b"<textarea><meta charset=shift_jis></textarea>"),
    "meta in <xmp>": ("text/html", b"<xmp><meta charset=shift_jis></xmp>"),
    "meta in <plaintext>": ("text/html", b"<plaintext><meta charset=shift_jis>"),
    "meta in <template>": ("text/html", b"<template><meta charset=shift_jis></template>"),
    "meta in <svg>": ("text/html", b"<svg><meta charset=shift_jis></svg>"),
    "meta after a <div>": ("text/html", b"<div>x</div><meta charset=shift_jis>"),
    "meta after 2,000 bytes of <script>": ("text/html", b"<script>/*" + PAD + b"*/</script><meta charset=gbk>"),
    "meta after 2,000 bytes of a comment": ("text/html", b"<!--" + PAD + b"--><meta charset=gbk>"),
    "meta after 2,000 bytes of head text": ("text/html", b"<head>" + PAD + b"<meta charset=gbk>"),
    "meta after 2,000 bytes of <noscript>": ("text/html", b"<noscript>" + PAD + b"</noscript><meta charset=gbk>"),
    "meta after 2,000 bytes of <template>": ("text/html", b"<template>" + PAD + b"</template><meta charset=gbk>"),
    "meta after </head> and 2,000 spaces": ("text/html", b"<head></head>" + b" " * 2000 + b"<meta charset=gbk>"),
    "meta after 2,000 bytes of end tags": ("text/html", b"<head>" + b"</x>" * 500 + b"<meta charset=gbk>"),
    "meta starting before byte 1,024 of the body": ("text/html", b"<body>" + b"x" * 1010 + b"<meta charset=gbk>"),
    "meta left open": ("text/html", b'<meta charset="shift_jis"'),
    # The prescan skips in one run the metas whose text holds neither "charset" nor "&"; these read the others
    "2,000 bytes of metas naming nothing, then a meta": (
        "text/html",
        b"<head>" + b'<meta name="viewport" content="a>b" / x=\'y\'>' * 50 + b"<meta charset=gbk>",
    ),
    "pragma after > in a quoted value": ("text/html", b'<meta http-equiv=content-type content="x>charset=gbk">'),
    "pragma spelled with a character reference": (
        "text/html",
        b'<meta http-equiv=content-type content="text/html; &#99;harset=gbk">',
    ),
    "an attribute named xcharset": ("text/html", b"<meta xcharset=euc-kr><meta charset=gbk>"),
    "a meta in a meta's value": ("text/html", b'<meta name="<meta charset=euc-kr>"><meta charset=gbk>'),
    "a quote inside an unquoted value": ("text/html", b"<meta name=a\"b content=c'd><meta charset=gbk>"),
    "a value quoted after a space": ("text/html", b'<meta name= "a><meta charset=euc-kr>"><meta charset=gbk>'),
    "XML declaration": ("text/html", b'<?xml version="1.0" encoding="shift_jis"?><title>t</title>'),
    "XML declaration then meta": ("text/html", b'<?xml encoding="shift_jis"?><meta charset=euc-kr>'),
    "XML declaration in capitals": ("text/html", b'<?XML version="1.0" encoding="shift_jis"?>'),
    "XML declaration after a space": ("text/html", b' <?xml version="1.0" encoding="shift_jis"?>'),
    "XML declaration utf-16 is UTF-8": ("text/html", b'<?xml version="1.0" encoding="utf-16"?>'),
    "XML declaration x-user-defined": ("text/html", b'<?xml version="1.0" encoding="x-user-defined"?><p>x'),
    "XML declaration unquoted": ("text/html", b'<?xml version="1.0" encoding=shift_jis?>'),
    "UTF-16BE by its XML declaration": ("text/html", '<?xml version="1.0"?><meta charset=gbk>'.encode("utf-16-be")),
    "header charset over XML declaration": ("text/html; charset=euc-kr", b'<?xml encoding="shift_jis"?>'),
    "header charset unknown, meta": ("text/html; charset=bogus", b"<meta charset=shift_jis>"),
    "XHTML ignores the meta": (
        "application/xhtml+xml",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="shift_jis"/></head></html>',
    ),
    "XHTML by its XML declaration": (
        "application/xhtml+xml",
        b'<?xml version="1.0" encoding="shift_jis"?><html xmlns="http://www.w3.org/1999/xhtml"/>',
    ),
    "no Content-Type, sniffed as HTML": (None, b"<html><meta charset=shift_jis><title>t</title>"),
}


def test_chromium_decodes_each_page_in_the_encoding_page_analysis_picks(site_factory: SiteFactory, pki: Pki) -> None:
    # Given one name per case, each serving the case's page
    names = {site_factory.unique_host("encoding"): case for case in ENCODINGS}

    def page(name: str) -> Behaviour:
        content_type, body = ENCODINGS[names[name]]
        return Response(200, [("Content-Type", content_type)] if content_type else [], body)

    # When Chromium loads each
    seen, _ = pages_in_chromium(site_factory, pki, names, page, {}, evaluate="document.characterSet")

    # Then it decoded each in the encoding page analysis picks
    picked = {}
    for case, (content_type, body) in ENCODINGS.items():
        response = make_snapshot(body=body, content_type=content_type).final
        picked[case] = page_encoding(body, response.content_type, response.charset, 1.0)[0]
    assert picked == {case: encoding.lower() for case, encoding in seen.items()}
