"""A fetched HTML page, parsed the way browsers would see it, and the <meta> elements that stand in
for headers (CSP, referrer policy).

BeautifulSoup with the `html.parser` backend (no C dependency). Two settings bring it closer to
the HTML standard: on a duplicated attribute the FIRST one counts (HTML §13.2.5.33, "duplicate
attribute" parse error), and `rel`/`class` stay plain strings so callers split tokens
themselves.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

from ..snapshot import HttpResponse

__all__ = ["MetaElement", "is_html", "meta_elements", "parse_html"]

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


@dataclass(frozen=True)
class MetaElement:
    http_equiv: str  # lowercased, "" when absent
    name: str  # lowercased, "" when absent
    content: str | None
    in_head: bool  # False when the element sits inside <body>


def meta_elements(response: HttpResponse) -> tuple[MetaElement, ...]:
    """Every <meta> of an HTML response, in document order (empty for other content types)."""
    if not response.body or not is_html(response):
        return ()
    found = []
    for tag in parse_html(response).find_all("meta"):
        content = tag.get("content")
        found.append(
            MetaElement(
                http_equiv=_attr(tag.get("http-equiv")),
                name=_attr(tag.get("name")),
                content=content if isinstance(content, str) else None,
                in_head=not any(parent.name == "body" for parent in tag.parents),
            )
        )
    return tuple(found)


def _attr(value: object) -> str:
    return value.strip().lower() if isinstance(value, str) else ""
