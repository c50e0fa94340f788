"""Whether a response is HTML, by its media type or by its first bytes as browsers sniff them.

Kept apart from the page parser (records/html.py, which re-exports both functions): the fetch layer asks it of
security.txt answers (records/security_txt.py) and must not import lxml and the page analysis for that, which
only grading needs (issue 14: the command line's imports before the fetch starts).
"""

from __future__ import annotations

__all__ = ["is_html_type", "sniffs_as_html"]

#: The media types browsers render as an HTML document.
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: MIME Sniffing §7.1 "rules for identifying an unknown MIME type": the HTML patterns, matched ASCII
#: case-insensitively after leading whitespace.
_HTML_OPENINGS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font", b"<table", b"<a",
    b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--",
)  # fmt: skip
#: §7.1's whitespace bytes, and the vertical tab Chromium skips too (base::IsAsciiWhitespace).
_SNIFFED_WHITESPACE = b"\t\n\x0b\x0c\r "
_SNIFFED_BYTES = 512  # Chromium's SniffForHTML reads no further


def is_html_type(content_type: str) -> bool:
    """Whether a media type, as `HttpResponse.content_type` gives it (lowercase, no parameters), is HTML's."""
    return content_type in _HTML_TYPES


def sniffs_as_html(body: bytes) -> bool:
    """Whether browsers take a body for HTML by its first bytes (MIME Sniffing §7.1, "rules for identifying an
    unknown MIME type"): after leading whitespace, one of the HTML patterns.

    §7.1 also wants a tag-terminating byte (a space or ">") after the pattern, and Firefox asks for one, but
    Chromium matches the pattern alone (net/base/mime_sniffer.cc, SniffForHTML): Chromium 156 renders `<html`
    followed by a newline, `<divx>` and a vertical tab before `<html>` as HTML. A page that either browser
    renders is HTML here.

    A byte order mark is no whitespace: §7.1 matches the HTML patterns before its BOM rows (text/plain), and
    Chromium 156 renders a UTF-8 BOM followed by `<html>` as text/plain."""
    head = body[:_SNIFFED_BYTES].lstrip(_SNIFFED_WHITESPACE).lower()
    return head.startswith(_HTML_OPENINGS)
