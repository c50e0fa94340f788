"""The TLS handshake record: what the server negotiates, what it presents, whether we trust it.

Two handshakes run concurrently to the pinned address, both with SNI set to the name:
one that accepts anything (to read the protocol, cipher and certificate even when the
certificate is bad) and one that verifies the chain against the system store, certifi
and WEBSEC_CA_BUNDLE (to learn whether, and why not, the chain is trusted). Hostname
matching is judged by the check itself (RFC 6125) from the certificate's names.
"""

from __future__ import annotations

import asyncio
import ssl
from functools import lru_cache
from pathlib import Path

import certifi
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa

from ...settings import Settings
from ..hostname import certificate_matches_host
from ..snapshot import CertificateInfo, Failure, TlsHandshake
from .http import permissive_tls_context


@lru_cache(maxsize=8)
def trust_context(ca_bundle: Path | None) -> ssl.SSLContext:
    """System store plus certifi plus the operator's extra anchors; hostname checked separately."""
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=certifi.where())
    if ca_bundle is not None:
        context.load_verify_locations(cafile=str(ca_bundle))
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    return context


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
    )


async def _handshake(address: str, port: int, host: str, context: ssl.SSLContext, timeout: float) -> ssl.SSLObject:
    # SNI carries the name; for an IP-literal host Python's ssl sends no SNI, as browsers do.
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(address, port, ssl=context, server_hostname=host),
        timeout,
    )
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        if ssl_object is None:
            raise ssl.SSLError("no TLS session was established")
        return ssl_object
    finally:
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), 1.0)
        except (OSError, ssl.SSLError, TimeoutError):
            pass
        del reader


async def fetch_tls(host: str, port: int, address: str, settings: Settings) -> TlsHandshake:
    """Never raises: a failed handshake is recorded as the handshake's failure."""
    timeout = settings.limits.connect_seconds + settings.limits.read_seconds
    permissive, verified = await asyncio.gather(
        _handshake(address, port, host, permissive_tls_context(), timeout),
        _handshake(address, port, host, trust_context(settings.ca_bundle), timeout),
        return_exceptions=True,
    )
    if isinstance(permissive, BaseException):
        if isinstance(permissive, asyncio.CancelledError):
            raise permissive
        kind, message = "tls", f"TLS handshake failed: {permissive}"
        if isinstance(permissive, TimeoutError):
            kind, message = "timeout", f"no TLS handshake completed within {timeout:.0f} seconds"
        elif isinstance(permissive, ConnectionRefusedError):
            kind, message = "unreachable", f"connection refused on port {port}"
        elif isinstance(permissive, OSError) and not isinstance(permissive, ssl.SSLError):
            kind, message = "unreachable", f"could not connect to port {port}: {permissive.strerror or permissive}"
        return TlsHandshake(host=host, port=port, address=address, failure=Failure(kind, message))
    der = permissive.getpeercert(binary_form=True)
    chain = (parse_certificate(der),) if der else ()
    cipher = permissive.cipher()
    trusted = not isinstance(verified, BaseException)
    verify_error = None
    if isinstance(verified, ssl.SSLCertVerificationError):
        verify_error = verified.verify_message or str(verified)
    elif isinstance(verified, BaseException):
        verify_error = f"verification handshake failed: {verified}"
    return TlsHandshake(
        host=host,
        port=port,
        address=address,
        protocol=permissive.version(),
        cipher=cipher[0] if cipher else None,
        cipher_bits=cipher[2] if cipher else None,
        chain=chain,
        trusted=trusted,
        verify_error=verify_error,
        hostname_matches=bool(chain) and certificate_matches_host(chain[0], host),
    )
