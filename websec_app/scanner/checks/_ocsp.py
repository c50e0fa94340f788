"""Judge a stapled OCSP response (RFC 6960) against the certificate it is stapled for.

Pure: the DER bytes come from the snapshot, the issuer from the chain the server sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import ExtendedKeyUsageOID

from ..snapshot import CA_CLOCK_SKEW, SignedTimestamp

# Clocks differ: a response "produced" a few minutes in the future is normal (RFC 6960 4.2.2.1 leaves
# the tolerance to clients; Firefox allows a few minutes).


@dataclass(frozen=True)
class StapleVerdict:
    status: str  # "good" | "revoked" | "invalid"
    note: str
    signature_verified: bool = False
    scts: tuple[SignedTimestamp, ...] = ()  # Certificate Transparency SCTs in the response (RFC 6962 3.3)
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


def _signed_by_issuer(
    response: ocsp.OCSPResponse, issuer: x509.Certificate, algorithm: hashes.HashAlgorithm | None
) -> bool:
    """RFC 6960 4.2.2.2: signed (with `algorithm`'s hash) by the CA itself, or by a responder certificate the CA
    issued for OCSP signing and included in the response."""
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
        try:
            responder_algorithm = responder.signature_hash_algorithm
        except UnsupportedAlgorithm:
            continue
        issued = _verify(issuer.public_key(), responder.signature, responder.tbs_certificate_bytes, responder_algorithm)
        if issued and _verify(responder.public_key(), response.signature, response.tbs_response_bytes, algorithm):
            return True
    return False


def _scts(response: ocsp.OCSPResponse) -> tuple[SignedTimestamp, ...]:
    """The SCTs of the response's SignedCertificateTimestampList extension, by log and date (one a client cannot
    date is left out, as for an embedded one)."""
    try:
        extension = response.single_extensions.get_extension_for_class(x509.SignedCertificateTimestamps)
    except (x509.ExtensionNotFound, ValueError):  # ValueError: several SingleResponses (their extensions apart)
        return ()
    return SignedTimestamp.read(extension.value)


#: RFC 6960 4.2.1 CertStatus, strictest first: of several SingleResponses for the certificate, clients keep the
#: strictest (Chromium's CheckOCSP: "REVOKED > UNKNOWN > GOOD").
_STRICTNESS = (ocsp.OCSPCertStatus.REVOKED, ocsp.OCSPCertStatus.UNKNOWN, ocsp.OCSPCertStatus.GOOD)


def _for_certificate(single: ocsp.OCSPSingleResponse, leaf: x509.Certificate, issuer: x509.Certificate | None) -> bool:
    """Does this SingleResponse's CertID (RFC 6960 4.1.1) name the leaf: its serial, and, when the issuer is
    known, the issuer's name and key hashed with the CertID's own algorithm?"""
    if single.serial_number != leaf.serial_number:
        return False
    if issuer is None:
        return True
    try:
        request = ocsp.OCSPRequestBuilder().add_certificate(leaf, issuer, single.hash_algorithm).build()
    except (UnsupportedAlgorithm, ValueError, TypeError):  # a CertID hash no client computes
        return False
    return (request.issuer_name_hash, request.issuer_key_hash) == (single.issuer_name_hash, single.issuer_key_hash)


def _single_response(
    response: ocsp.OCSPResponse, leaf: x509.Certificate, issuer: x509.Certificate | None
) -> ocsp.OCSPSingleResponse | None:
    """RFC 6960 4.2.1: responses is a SEQUENCE OF SingleResponse; the client judges the one for its certificate
    (the strictest, when several are)."""
    matching = [single for single in response.responses if _for_certificate(single, leaf, issuer)]
    if not matching:
        return None
    return min(matching, key=lambda single: _STRICTNESS.index(single.certificate_status))


def judge_staple(
    der: bytes, leaf_der: bytes, issuer_der: bytes | None, now: datetime, *, named: str = "the stapled response"
) -> StapleVerdict:
    """`named`: what the response is called in the notes (a staple, or the CA's responder's answer)."""
    try:
        response = ocsp.load_der_ocsp_response(der)
    except ValueError as exc:
        return StapleVerdict("invalid", f"{named} cannot be parsed ({exc})")
    if response.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL:
        return StapleVerdict("invalid", f"the responder answered {response.response_status.name}")
    leaf = x509.load_der_x509_certificate(leaf_der)
    issuer = x509.load_der_x509_certificate(issuer_der) if issuer_der else None
    single = _single_response(response, leaf, issuer)
    if single is None:
        return StapleVerdict("invalid", f"{named} is for another certificate")
    try:
        algorithm = response.signature_hash_algorithm
    except UnsupportedAlgorithm:
        oid = response.signature_algorithm_oid.dotted_string
        return StapleVerdict("invalid", f"{named} is signed with an algorithm clients do not know ({oid})")
    verified = issuer is not None and _signed_by_issuer(response, issuer, algorithm)
    if issuer is not None and not verified:
        return StapleVerdict("invalid", f"{named} is not signed by the certificate's issuer")
    this_update, next_update = single.this_update_utc, single.next_update_utc
    scts = _scts(response)
    if this_update > now + CA_CLOCK_SKEW:
        return StapleVerdict("invalid", f"{named} is dated in the future ({this_update:%Y-%m-%d %H:%M})")
    if next_update is not None and next_update < now:
        return StapleVerdict("invalid", f"{named} expired on {next_update:%Y-%m-%d %H:%M} UTC")
    unverified = "" if verified else " (signature not verified: the issuer certificate was not sent)"
    if single.certificate_status == ocsp.OCSPCertStatus.REVOKED:
        when = single.revocation_time_utc
        reason = single.revocation_reason.name if single.revocation_reason else "no reason given"
        stamp = f"{when:%Y-%m-%d}" if when else "an unknown date"
        return StapleVerdict("revoked", f"revoked on {stamp} ({reason}){unverified}", verified, scts, next_update)
    if single.certificate_status == ocsp.OCSPCertStatus.UNKNOWN:
        return StapleVerdict("invalid", "the responder does not know the certificate", verified, scts, next_update)
    return StapleVerdict(
        "good", f"the CA confirms the certificate is not revoked{unverified}", verified, scts, next_update
    )
