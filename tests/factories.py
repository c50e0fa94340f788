"""Factories for domain objects: hand-made snapshots for pure check tests.

snap = make_snapshot(headers=[("Content-Security-Policy", "default-src 'self'")], body=b"<html>...")
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from websec_app.scanner.snapshot import (
    CertificateInfo,
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
        "tls": TlsHandshake(
            host=parse_target(url).host, port=443, protocol="TLSv1.3", trusted=True, hostname_matches=True
        ),
        "dns": DnsSnapshot(host=parse_target(url).host),
        "fetched_at": FIXED_NOW,
    }
    fields.update(overrides)
    return SiteSnapshot(**fields)


def make_certificate(
    *,
    names: tuple[str, ...] = ("example.com",),
    not_before: datetime | None = None,
    not_after: datetime | None = None,
    self_signed: bool = False,
    key_type: str = "EC",
    key_size: int = 256,
    signature_hash: str | None = "sha256",
) -> CertificateInfo:
    """A parsed certificate record (no DER needed by the checks)."""
    return CertificateInfo(
        der=b"",
        subject=f"CN={names[0]}",
        issuer=f"CN={names[0]}" if self_signed else "CN=Test Intermediate CA",
        not_before=not_before or datetime(2026, 9, 1, tzinfo=UTC),
        not_after=not_after or datetime(2027, 3, 1, tzinfo=UTC),
        san_dns=tuple(n for n in names if not n[0].isdigit()),
        san_ip=tuple(n for n in names if n[0].isdigit()),
        key_type=key_type,
        key_size=key_size,
        signature_hash=signature_hash,
        self_signed=self_signed,
    )


def make_handshake(
    host: str = "example.com", certificate: CertificateInfo | None = None, **fields: Any
) -> TlsHandshake:
    from websec_app.scanner.hostname import certificate_matches_host

    cert = certificate or make_certificate(names=(host,))
    values: dict[str, Any] = {
        "host": host,
        "port": 443,
        "address": "93.184.216.34",
        "protocol": "TLSv1.3",
        "cipher": "TLS_AES_128_GCM_SHA256",
        "cipher_bits": 128,
        "chain": (cert,),
        "trusted": True,
        "hostname_matches": certificate_matches_host(cert, host),
    }
    values.update(fields)
    return TlsHandshake(**values)
