"""The <meta> elements of an HTML page that stand in for headers (CSP, referrer policy)."""

from __future__ import annotations

from dataclasses import dataclass

from ..snapshot import HttpResponse
from ._html import is_html, parse_html


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
