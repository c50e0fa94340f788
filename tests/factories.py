"""Factories for domain objects: hand-made snapshots for pure check tests.

    snap = make_snapshot(headers=[("Content-Security-Policy", "default-src 'self'")], body=b"<html>...")
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from websec_app.scanner.snapshot import (
    DnsSnapshot,
    FetchChain,
    HeaderList,
    HttpResponse,
    SiteSnapshot,
    TlsHandshake,
)
from websec_app.scanner.target import parse_target

FIXED_NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def make_response(
    url: str = "https://example.com/",
    status: int = 200,
    headers: Iterable[tuple[str, str]] | dict[str, str] = (),
    body: bytes | str = b"",
    content_type: str | None = "text/html; charset=utf-8",
    address: str = "93.184.216.34",
) -> HttpResponse:
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
    if content_type and not any(k.lower() == "content-type" for k, _ in pairs):
        pairs.append(("Content-Type", content_type))
    raw = body.encode() if isinstance(body, str) else body
    return HttpResponse(url=url, status_code=status, headers=HeaderList(tuple(pairs)), body=raw, address=address)


def make_snapshot(
    url: str = "https://example.com/",
    *,
    headers: Iterable[tuple[str, str]] | dict[str, str] = (),
    body: bytes | str = b"",
    status: int = 200,
    content_type: str | None = "text/html; charset=utf-8",
    redirects: Iterable[HttpResponse] = (),
    **overrides: Any,
) -> SiteSnapshot:
    """A snapshot whose final response has the given headers and body; override any field."""
    final = make_response(url, status, headers, body, content_type)
    responses = (*redirects, final)
    fields: dict[str, Any] = {
        "target": parse_target(responses[0].url),
        "main": FetchChain(start_url=responses[0].url, responses=responses),
        "tls": TlsHandshake(host=parse_target(url).host, port=443, protocol="TLSv1.3", trusted=True, hostname_matches=True),
        "dns": DnsSnapshot(host=parse_target(url).host),
        "fetched_at": FIXED_NOW,
    }
    fields.update(overrides)
    return SiteSnapshot(**fields)
