"""Factories for domain objects: hand-made snapshots for pure check tests.

snap = make_snapshot(headers=[("Content-Security-Policy", "default-src 'self'")], body=b"<html>...")
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tests.clock import TEST_NOW
from websec_app.scanner.snapshot import (
    CertificateInfo,
    DnsAnswer,
    DnsSnapshot,
    FetchChain,
    HeaderList,
    HttpResponse,
    SiteSnapshot,
    TlsHandshake,
    TlsProbe,
)
from websec_app.scanner.target import parse_target

FIXED_NOW = TEST_NOW  # the suite's one clock (tests/clock.py)


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


# -- TLS probes ------------------------------------------------------------------------------------


def protocol_probes(
    accepted: Iterable[str] = ("TLSv1.3", "TLSv1.2"),
    not_testable: Iterable[str] = ("SSLv3",),
) -> tuple[TlsProbe, ...]:
    """One probe per version, newest first: `accepted` ones accepted, `not_testable` not testable,
    the rest rejected."""
    accepted, not_testable = set(accepted), set(not_testable)
    probes = []
    for name in ("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3"):
        if name in accepted:
            probes.append(TlsProbe(name, "accepted", protocol=name, cipher="TLS_AES_128_GCM_SHA256"))
        elif name in not_testable:
            probes.append(TlsProbe(name, "not_testable", detail="the local TLS library cannot offer it"))
        else:
            probes.append(TlsProbe(name, "rejected", detail="protocol version"))
    return tuple(probes)


def cipher_probes(accepted: dict[str, str] | None = None) -> tuple[TlsProbe, ...]:
    """One probe per weak family of data/weak_ciphers.json; `accepted` maps family -> cipher name.
    Families this machine's OpenSSL cannot offer (rc4, des, 3des, export) are not testable."""
    accepted = accepted or {}
    probes = []
    for family in ("null", "anonymous", "export", "rc4", "des", "3des", "cbc"):
        if family in accepted:
            probes.append(TlsProbe(family, "accepted", protocol="TLSv1.2", cipher=accepted[family]))
        elif family in ("export", "rc4", "des", "3des"):
            probes.append(TlsProbe(family, "not_testable", detail="the local TLS library has no such cipher suite"))
        else:
            probes.append(TlsProbe(family, "rejected", detail="handshake failure"))
    return tuple(probes)


# -- DNS -------------------------------------------------------------------------------------------


def dns_answer(
    name: str, rdtype: str, *records: str, rcode: str = "NOERROR", signatures: Iterable[str] = ()
) -> DnsAnswer:
    """One answer as the resolver records it; `rcode="SERVFAIL"` etc. for a failed query."""
    error = None if rcode in ("NOERROR", "NXDOMAIN") else f"{rcode} from the resolver"
    return DnsAnswer(name.rstrip(".").lower(), rdtype, rcode, tuple(records), error, tuple(signatures))


def make_dns(host: str, *answers: DnsAnswer) -> DnsSnapshot:
    return DnsSnapshot(host=host, answers=tuple(answers))
