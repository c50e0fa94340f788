"""Judge a stapled OCSP response (RFC 6960) against the certificate it is stapled for.

Pure: the DER bytes come from the snapshot, the issuer from the chain the server sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import ExtendedKeyUsageOID

# Clocks differ: a response "produced" a few minutes in the future is normal (RFC 6960 4.2.2.1 leaves
# the tolerance to clients; Firefox allows a few minutes).
_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class StapleVerdict:
    status: str  # "good" | "revoked" | "invalid"
    note: str
    signature_verified: bool = False
    sct_count: int = 0
    next_update: datetime | None = None


def _verify(key: object, signature: bytes, data: bytes, algorithm: hashes.HashAlgorithm | None) -> bool:
    try:
        if isinstance(key, rsa.RSAPublicKey) and algorithm is not None:
            key.verify(signature, data, padding.PKCS1v15(), algorithm)
        elif isinstance(key, ec.EllipticCurvePublicKey) and algorithm is not None:
            key.verify(signature, data, ec.ECDSA(algorithm))
        elif isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
            key.verify(signature, data)
        else:
            return False
    except (InvalidSignature, UnsupportedAlgorithm, ValueError):
        return False
    return True


def _signed_by_issuer(response: ocsp.OCSPResponse, issuer: x509.Certificate) -> bool:
    """RFC 6960 4.2.2.2: signed by the CA itself, or by a responder certificate the CA issued for
    OCSP signing and included in the response."""
    algorithm = response.signature_hash_algorithm
    if _verify(issuer.public_key(), response.signature, response.tbs_response_bytes, algorithm):
        return True
    for responder in response.certificates:
        if responder.issuer != issuer.subject:
            continue
        try:
            usages = responder.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except (x509.ExtensionNotFound, ValueError):
            continue
        if ExtendedKeyUsageOID.OCSP_SIGNING not in usages:
            continue
        issued = _verify(
            issuer.public_key(),
            responder.signature,
            responder.tbs_certificate_bytes,
            responder.signature_hash_algorithm,
        )
        if issued and _verify(responder.public_key(), response.signature, response.tbs_response_bytes, algorithm):
            return True
    return False


def _sct_count(response: ocsp.OCSPResponse) -> int:
    try:
        extension = response.single_extensions.get_extension_for_class(x509.SignedCertificateTimestamps)
    except (x509.ExtensionNotFound, ValueError):
        return 0
    return len(list(extension.value))


def judge_staple(der: bytes, leaf_der: bytes, issuer_der: bytes | None, now: datetime) -> StapleVerdict:
    try:
        response = ocsp.load_der_ocsp_response(der)
    except ValueError as exc:
        return StapleVerdict("invalid", f"the stapled response cannot be parsed ({exc})")
    if response.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL:
        return StapleVerdict("invalid", f"the responder answered {response.response_status.name}")
    leaf = x509.load_der_x509_certificate(leaf_der)
    if response.serial_number != leaf.serial_number:
        return StapleVerdict("invalid", "the stapled response is for another certificate")
    issuer = x509.load_der_x509_certificate(issuer_der) if issuer_der else None
    verified = issuer is not None and _signed_by_issuer(response, issuer)
    if issuer is not None and not verified:
        return StapleVerdict("invalid", "the stapled response is not signed by the certificate's issuer")
    this_update, next_update = response.this_update_utc, response.next_update_utc
    scts = _sct_count(response)
    if this_update > now + _CLOCK_SKEW:
        return StapleVerdict("invalid", f"the stapled response is dated in the future ({this_update:%Y-%m-%d %H:%M})")
    if next_update is not None and next_update < now:
        return StapleVerdict("invalid", f"the stapled response expired on {next_update:%Y-%m-%d %H:%M} UTC")
    unverified = "" if verified else " (signature not verified: the issuer certificate was not sent)"
    if response.certificate_status == ocsp.OCSPCertStatus.REVOKED:
        when = response.revocation_time_utc
        reason = response.revocation_reason.name if response.revocation_reason else "no reason given"
        stamp = f"{when:%Y-%m-%d}" if when else "an unknown date"
        return StapleVerdict("revoked", f"revoked on {stamp} ({reason}){unverified}", verified, scts, next_update)
    if response.certificate_status == ocsp.OCSPCertStatus.UNKNOWN:
        return StapleVerdict("invalid", "the responder does not know the certificate", verified, scts, next_update)
    return StapleVerdict(
        "good", f"the CA confirms the certificate is not revoked{unverified}", verified, scts, next_update
    )
