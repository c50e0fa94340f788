"""The encoding a page is decoded in, as Chromium 156 picks it (records/html_encoding.py). The cases held to
Chromium itself are in tests/scanner/test_charset_browser.py; these are the decoder's own edges."""

from __future__ import annotations

import hashlib

import pytest

from websec_app.scanner.records.html_encoding import decode_page, page_encoding


@pytest.mark.parametrize(
    ("body", "media_type", "charset", "encoding"),
    [
        (b"<title>x</title>", "text/html", None, "windows-1252"),  # no label: windows-1252, not UTF-8
        (b"<title>x</title>", "application/xhtml+xml", None, "utf-8"),  # XML's default
        (b"<meta charset=gbk>", "", None, "gbk"),  # sniffed as HTML: the prescan runs
        (b"<meta charset=gbk>", "text/html", "UTF8", "utf-8"),
        (b"<meta charset=gbk>", "text/html", "cp037", "gbk"),  # a label browsers do not know is no label
        (b"<meta charset='utf-16be'>", "text/html", None, "utf-8"),
        (b"<meta charset=x-user-defined>", "text/html", None, "windows-1252"),
        (b'<?xml encoding="x-user-defined"?>', "text/html", None, "x-user-defined"),  # only a meta maps it
        (b'<meta charset="shift&#95;jis">', "text/html", None, "shift_jis"),  # a character reference
        (b"<body>" + b"x" * 1100 + b"<meta charset=gbk>", "text/html", None, "windows-1252"),
        (b"<head>" + b"<link rel=x>" * 200 + b"<meta charset=gbk>", "text/html", None, "gbk"),
    ],
)
def test_the_encoding_is_picked_as_chromium_picks_it(
    body: bytes, media_type: str, charset: str | None, encoding: str
) -> None:
    assert page_encoding(body, media_type, charset, 1.0) == (encoding, True)


def test_windows_1252_is_decoded_as_the_encoding_standard_decodes_it() -> None:
    # Given a page without a label whose inline script holds UTF-8 "é" and a byte cp1252 leaves undefined
    body = b"<script>var s = '\xc3\xa9\x81';</script>"
    # Then it is read as Chromium reads it, windows-1252: the script's text, and the hash a CSP allows it by, are
    # those of "Ã©" and U+0081 (Python's cp1252 gave U+FFFD for 0x81; UTF-8 gave "é")
    text = decode_page(body, "text/html", None, 1.0).text
    assert text == "<script>var s = '\u00c3\u00a9\u0081';</script>"
    assert hashlib.sha256(text.encode()).digest() != hashlib.sha256(body).digest()


def test_a_byte_order_mark_wins_over_every_declaration() -> None:
    body = b"\xef\xbb\xbf<meta charset=iso-2022-jp><title>\xc3\xa9</title>"
    assert decode_page(body, "text/html", "iso-2022-kr", 1.0).text == "<meta charset=iso-2022-jp><title>é</title>"


def test_past_its_cpu_time_the_prescan_stops_and_the_page_is_read_without_a_meta() -> None:
    # Given a head of 100,000 metas that might name an encoding but do not, then one that does, and no time at all
    body = b"<head>" + b"<meta charset=bogus>" * 100_000 + b"<meta charset=gbk>"
    # Then the prescan stops at its first look at the clock, and says so
    assert page_encoding(body, "text/html", None, 0.0) == ("windows-1252", False)
    assert decode_page(body, "text/html", None, 0.0).complete is False
    # While with time it reads on to the meta
    assert page_encoding(body, "text/html", None, 5.0) == ("gbk", True)


@pytest.mark.parametrize(
    "meta",
    [
        b"<meta>",
        b'<meta name="viewport" content="width=device-width, initial-scale=1">',
        b"<META NAME=x CONTENT='a>b' / x = y z=>",
        b'<meta property="og:description" content="Chars, sets, a char-set and a Charse">',
    ],
)
def test_metas_that_cannot_name_an_encoding_cost_the_prescan_no_step(meta: bytes) -> None:
    # Given a 2 MiB head of metas whose text holds neither "charset" nor "&" (a character reference could spell
    # it), then one naming an encoding, and no CPU time at all
    body = b"<head>" + meta * (2 * 1024 * 1024 // len(meta)) + b"<meta charset=gbk>"
    # Then the prescan reads them in one run, never reaching its first look at the clock (the code before took a
    # step per meta: 100,000 bare metas, 660 ms of CPU in the loop, past the page's budget)
    assert page_encoding(body, "text/html", None, 0.0) == ("gbk", True)


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        (b'<meta content="text/html; charset=gbk" http-equiv=content-type>', "gbk"),
        (b'<meta content="text/html; CHARSET=gbk" http-equiv=content-type>', "gbk"),
        (b'<meta content="text/html; &#99;harset=gbk" http-equiv=content-type>', "gbk"),
        (b'<meta content="text/html; &#x43;HARSET=gbk" http-equiv=content-type>', "gbk"),
        (b'<meta content="a>charset=gbk" http-equiv=content-type>', "gbk"),  # the tag ends after the quote
        (b"<meta content=charset=gbk http-equiv=content-type>", "gbk"),
        (b"<meta x= 'y' charset=gbk>", "gbk"),
        (b'<meta name="<meta charset=euc-kr>"><meta charset=gbk>', "gbk"),
        (b'<meta name= "a><meta charset=euc-kr>"><meta charset=gbk>', "gbk"),
        (b'<meta name=a"b content=c><meta charset=gbk>', "gbk"),
        (b"<meta name=x =charset><meta charset=gbk>", "gbk"),
    ],
)
def test_a_meta_whose_text_may_name_an_encoding_is_read_whole(head: bytes, encoding: str) -> None:
    # Each behind 2,000 bytes of metas the prescan skips in one run, so read past the first 1,024 bytes
    body = b"<head>" + b'<meta name="a" content="b>c">' * 70 + head
    assert page_encoding(body, "text/html", None, 1.0) == (encoding, True)
