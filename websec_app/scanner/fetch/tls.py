"""The TLS record: what the server negotiates and accepts, what it presents, whether we trust it.

One grading handshake (pyOpenSSL, see _tls_client.py) to the pinned address with SNI reads
the protocol and cipher a browser-like client gets, the chain exactly as sent, the stapled
OCSP response, and every chain error the verifier finds against the system store, certifi
and WEBSEC_CA_BUNDLE. Concurrently, bounded probes (tls_probes.py) find which protocol
versions and weak cipher families the server accepts at all. Hostname matching is judged
by the check itself (RFC 6125) from the certificate's names.
"""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa

from ...clock import clock_for, system_clock
from ...settings import Settings
from ..hostname import certificate_matches_host
from ..snapshot import CertificateInfo, Failure, SignedTimestamp, TlsHandshake, TlsProbe
from ._tls_client import (
    EXPIRED,
    MISSING_ISSUER,
    NOT_YET_VALID,
    Handshake,
    HandshakeRejected,
    grading_context,
    handshake,
)
from .tls_probes import probe_cipher_families, probe_protocols

__all__ = ["NOT_TESTABLE", "fetch_tls", "parse_certificate"]

#: At most this many probe handshakes to one server at a time (the grading handshake runs beside them).
MAX_PARALLEL_PROBES = 6

#: What this scanner cannot observe, whatever the server does (reported, never guessed).
NOT_TESTABLE = (
    "Certificate Transparency SCTs sent in the TLS extension (RFC 6962 3.3): pyOpenSSL exposes no API "
    "to read them; SCTs embedded in the certificate or the stapled OCSP response are read",
)


def _key_description(certificate: x509.Certificate) -> tuple[str, int]:
    key = certificate.public_key()
    if isinstance(key, rsa.RSAPublicKey):
        return "RSA", key.key_size
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "EC", key.curve.key_size
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "Ed25519", 256
    if isinstance(key, ed448.Ed448PublicKey):
        return "Ed448", 456
    if isinstance(key, dsa.DSAPublicKey):
        return "DSA", key.key_size
    return type(key).__name__, 0


def _embedded_scts(certificate: x509.Certificate) -> tuple[SignedTimestamp, ...]:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.PrecertificateSignedCertificateTimestamps)
    except (x509.ExtensionNotFound, ValueError):
        return ()
    scts = []
    for sct in extension.value:
        when = sct.timestamp if sct.timestamp.tzinfo else sct.timestamp.replace(tzinfo=UTC)
        scts.append(SignedTimestamp(log_id=base64.b64encode(sct.log_id).decode(), timestamp=when))
    return tuple(scts)


def _is_ca(certificate: x509.Certificate) -> bool:
    try:
        return bool(certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except (x509.ExtensionNotFound, ValueError):
        return False


def parse_certificate(der: bytes) -> CertificateInfo:
    certificate = x509.load_der_x509_certificate(der)
    try:
        san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        san_dns = tuple(san.get_values_for_type(x509.DNSName))
        san_ip = tuple(str(ip) for ip in san.get_values_for_type(x509.IPAddress))
    except x509.ExtensionNotFound:
        san_dns, san_ip = (), ()
    except ValueError:  # a malformed extension: treat as absent rather than fail the scan
        san_dns, san_ip = (), ()
    key_type, key_size = _key_description(certificate)
    try:
        hash_algorithm = certificate.signature_hash_algorithm
        signature_hash = hash_algorithm.name if hash_algorithm is not None else None
    except Exception:  # noqa: BLE001 - cryptography raises UnsupportedAlgorithm for exotic signatures
        signature_hash = "unknown"
    return CertificateInfo(
        der=der,
        subject=certificate.subject.rfc4514_string(),
        issuer=certificate.issuer.rfc4514_string(),
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
        san_dns=san_dns,
        san_ip=san_ip,
        key_type=key_type,
        key_size=key_size,
        signature_hash=signature_hash,
        serial=format(certificate.serial_number, "x"),
        self_signed=certificate.issuer == certificate.subject,
        sha256_fingerprint=certificate.fingerprint(hashes.SHA256()).hex(),
        is_ca=_is_ca(certificate),
        embedded_scts=_embedded_scts(certificate),
    )


def _trust(result: Handshake) -> tuple[bool, str | None]:
    """Trusted unless the verifier found a chain error. The leaf's own dates are graded by the
    check (expired, not yet valid), so they do not make the chain untrusted; an expired
    intermediate does."""
    errors = [e for e in result.verify_errors if not (e.depth == 0 and e.code in (EXPIRED, NOT_YET_VALID))]
    if not errors:
        return True, None
    first = errors[0]
    return False, first.text if first.depth == 0 else f"{first.text} ({first.subject})"


def _chain_completeness(result: Handshake, chain: tuple[CertificateInfo, ...]) -> tuple[bool | None, str | None]:
    """Did the server send every intermediate? (RFC 8446 4.4.2: the chain up to, not necessarily
    including, the trust anchor.)

    - The verifier built a path using an intermediate the server did not send (it came from the
      local store): incomplete, and most clients would fail.
    - The leaf's issuer was found nowhere: incomplete, since the Baseline Requirements (6.1.7)
      forbid roots to sign server certificates directly, so what is missing is an intermediate.
    - An intermediate's issuer was found nowhere: an unknown root or a missing upper
      intermediate; we cannot tell which, so completeness is not judged (the trust finding says it).
    """
    if not chain:
        return None, None
    leaf = chain[0]
    sent = set(result.chain)
    for der in result.verified_chain[1:]:
        if der in sent:
            continue
        info = parse_certificate(der)
        if not info.self_signed:  # an intermediate the server should have sent
            return False, info.subject
    for error in result.verify_errors:
        if error.code in MISSING_ISSUER:
            if error.depth == 0 and not leaf.self_signed:
                return False, leaf.issuer
            return None, None
    return True, None


def _failure(exc: BaseException, port: int, timeout: float) -> Failure:
    if isinstance(exc, TimeoutError):
        return Failure("timeout", f"no TLS handshake completed within {timeout:.0f} seconds")
    if isinstance(exc, ConnectionRefusedError):
        return Failure("unreachable", f"connection refused on port {port}")
    if isinstance(exc, HandshakeRejected):
        return Failure("tls", f"TLS handshake failed: {exc}")
    if isinstance(exc, OSError):
        return Failure("unreachable", f"could not connect to port {port}: {exc.strerror or exc}")
    return Failure("tls", f"TLS handshake failed: {type(exc).__name__}: {exc}")


async def _probes(
    address: str, port: int, host: str, timeout: float
) -> tuple[tuple[TlsProbe, ...], tuple[TlsProbe, ...]]:
    limit = asyncio.Semaphore(MAX_PARALLEL_PROBES)
    target = (address, port, host)
    protocols, ciphers = await asyncio.gather(
        probe_protocols(target, timeout, limit), probe_cipher_families(target, timeout, limit)
    )
    return protocols, ciphers


def _verify_at(settings: Settings) -> datetime | None:
    """The instant to judge the chain at: the scan's clock, to the minute; None for the system clock,
    which OpenSSL reads itself (so production keeps one cached context)."""
    clock = clock_for(settings)
    return None if clock is system_clock else clock().replace(second=0, microsecond=0)


async def fetch_tls(host: str, port: int, address: str, settings: Settings, *, probes: bool = True) -> TlsHandshake:
    """Never raises: a failed handshake is recorded as the handshake's failure.

    With `probes`, the protocol and cipher-family probes run beside the grading handshake,
    each bounded by the connect timeout (a server that ignores a legacy ClientHello must not
    hold the scan for the full read budget)."""
    timeout = settings.limits.connect_seconds + settings.limits.read_seconds
    probe_task = (
        asyncio.ensure_future(_probes(address, port, host, min(timeout, settings.limits.connect_seconds)))
        if probes
        else None
    )
    try:
        result: Handshake | BaseException
        try:
            result = await handshake(
                address,
                port,
                host,
                grading_context(settings.ca_bundle, _verify_at(settings)),
                timeout,
                request_ocsp=True,
            )
        except (HandshakeRejected, OSError, TimeoutError) as exc:
            result = exc
        protocols, ciphers = await probe_task if probe_task is not None else ((), ())
    except BaseException:
        if probe_task is not None:
            probe_task.cancel()
            await asyncio.gather(probe_task, return_exceptions=True)
        raise
    if isinstance(result, BaseException):
        return TlsHandshake(
            host=host,
            port=port,
            address=address,
            failure=_failure(result, port, timeout),
            protocols=protocols,
            cipher_probes=ciphers,
            not_testable=NOT_TESTABLE,
        )
    try:
        chain = tuple(parse_certificate(der) for der in result.chain)
        complete, missing = _chain_completeness(result, chain)
    except ValueError as exc:  # cryptography refuses a malformed certificate: a finding, not a crash
        failure = Failure("tls", f"the server's certificate could not be parsed: {exc}")
        return TlsHandshake(host=host, port=port, address=address, failure=failure, protocols=protocols)
    trusted, verify_error = _trust(result)
    return TlsHandshake(
        host=host,
        port=port,
        address=address,
        protocol=result.protocol,
        cipher=result.cipher,
        cipher_bits=result.cipher_bits,
        chain=chain,
        trusted=trusted and bool(chain),
        verify_error=verify_error if chain else "the server sent no certificate",
        hostname_matches=bool(chain) and certificate_matches_host(chain[0], host),
        key_exchange_group=result.group,
        chain_complete=complete,
        missing_issuer=missing,
        ocsp_staple=result.ocsp,
        protocols=protocols,
        cipher_probes=ciphers,
        not_testable=NOT_TESTABLE,
    )
