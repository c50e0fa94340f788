"""Parsing a fetched page with BeautifulSoup, the way browsers would see it (private helper).

`html.parser` is the backend (no C dependency). Two settings bring it closer to the HTML
standard: on a duplicated attribute the FIRST one counts (HTML §13.2.5.33, "duplicate
attribute" parse error), and `rel`/`class` stay plain strings so callers split tokens
themselves.
"""

from __future__ import annotations

import warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

from ..snapshot import HttpResponse

_HTML_TYPES = ("text/html", "application/xhtml+xml")


def is_html(response: HttpResponse) -> bool:
    """HTML by its Content-Type, or, when there is none, by what browsers would sniff (MIME Sniffing §7.1)."""
    if response.content_type in _HTML_TYPES:
        return True
    if response.content_type:
        return False
    head = response.body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<iframe"))


def parse_html(response: HttpResponse) -> BeautifulSoup:
    with warnings.catch_warnings():
        # bs4 warns when markup looks like a file name or is XHTML; both are fine here.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(
            response.text(), "html.parser", multi_valued_attributes=None, on_duplicate_attribute="ignore"
        )
