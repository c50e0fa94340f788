"""The TLS record: what the server negotiates and accepts, what it presents, whether we trust it.

One grading handshake (pyOpenSSL, see _tls_client.py) to the pinned address with SNI, offering Chrome's key
exchange groups and signature algorithms, reads the protocol and cipher a browser-like client gets (or fails
where Chrome does), the chain exactly as sent, the stapled
OCSP response, and every chain error the verifier finds against the system store, certifi
and WEBSEC_CA_BUNDLE. Concurrently, bounded probes (tls_probes.py) find which protocol
versions and weak cipher families the server accepts at all, and one more, hand-built ClientHello
offering only DHE suites reads the size of the server's DH group (tls_probes.probe_dh_group; pyOpenSSL does
not show it), whatever suite the server prefers. Hostname matching is judged
by the check itself (RFC 6125) from the certificate's names.

When the issuer of the last certificate sent is found nowhere, two different problems look
the same to the verifier: the server forgot an intermediate of a trusted CA, or the CA is
one no client trusts (a private or home-made CA). They are told apart by evidence, never
by guess (`_judge_chain`): the local store supplied the intermediate, a sent certificate
above the gap chains to a trusted root, or the intermediate downloaded from the caIssuers
URL (RFC 5280 4.2.2.1; at most two hops, guarded like every other fetch, injectable)
completes a trusted path. Without such evidence the certificate is "issued by an untrusted
CA", named, and completeness is not judged.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from cryptography.x509.oid import AuthorityInformationAccessOID, ExtendedKeyUsageOID
from OpenSSL import SSL, crypto

from ...clock import clock_for, system_clock
from ...settings import Settings
from ..errors import CLIENT_CERTIFICATE_REQUIRED, ScanError
from ..hostname import certificate_matches_host
from ..records.dane import spki_sha256
from ..snapshot import (
    MAX_PUBLIC_LIFETIME,
    CertificateInfo,
    DhGroup,
    Failure,
    HeartbeatCheck,
    RevocationAnswer,
    SignedTimestamp,
    TlsHandshake,
    TlsProbe,
    dhe_suite,
    embedded_logs_required,
)
from ._hello_codec import MalformedHello, signed_timestamps
from ._tls_client import (
    EXPIRED,
    MISSING_ISSUER,
    NOT_YET_VALID,
    SELF_SIGNED_IN_CHAIN,
    BeforeTls,
    ConnectFailed,
    Handshake,
    HandshakeRejected,
    grading_context,
    handshake,
    is_public_root,
)
from .guard import ensure_port_allowed, url_port
from .http import describe_error, fetch_one, make_client
from .resolve import Pinner, Resolver
from .revocation import AnsweredWith, Download, fetch_revocation, staple_answers
from .tls_probes import Negotiated, probe_cipher_families, probe_dh_group, probe_heartbleed, probe_protocols

__all__ = ["CaIssuerSource", "fetch_tls", "parse_certificate", "pinned_tls"]

#: Downloads the certificate at a caIssuers URL: the body, or None when it cannot be had.
CaIssuerSource = Callable[[str], Awaitable[bytes | None]]
#: An intermediate is a kilobyte or two; a PKCS#7 bundle a few. Anything larger is not a certificate.
MAX_CA_ISSUER_BYTES = 32 * 1024
#: Issuers downloaded at most per chain (leaf -> intermediate -> cross-signed intermediate).
MAX_CA_ISSUER_HOPS = 2

#: Distinct certificates of the sent chain that judging a break considers, in the order sent: as candidates for
#: the start of a trusted path above the break, and as the intermediates offered to the verifier. Clients build
#: paths of a handful of certificates (mozilla::pkix accepts at most 6 intermediates), so this loses no chain a
#: browser would accept, while each candidate costs one verification on the event loop: unbounded, a chain of
#: 331 certificates whose top issuer is never sent cost 229 verifications against 330 others each (7.5 s).
MAX_JUDGED_CERTIFICATES = 16

#: At most this many probe handshakes to one server at a time (the grading handshake runs beside them).
MAX_PARALLEL_PROBES = 6


def _key_description(certificate: x509.Certificate) -> tuple[str, int]:
    try:
        key = certificate.public_key()
    except (UnsupportedAlgorithm, ValueError):
        return _openssl_key_description(certificate)
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


_OPENSSL_KEY_TYPES = {crypto.TYPE_RSA: "RSA", crypto.TYPE_EC: "EC", crypto.TYPE_DSA: "DSA"}


def _openssl_key_description(certificate: x509.Certificate) -> tuple[str, int]:
    """A key cryptography will not load (an EC key on a curve it does not support, such as secp112r1): its
    type and size as OpenSSL reads them, else the key algorithm's OID with no size."""
    try:
        key = crypto.X509.from_cryptography(certificate).get_pubkey()
        kind = _OPENSSL_KEY_TYPES.get(key.type())
        if kind is not None:
            return kind, key.bits()
    except (crypto.Error, ValueError):
        pass
    return f"unsupported ({certificate.public_key_algorithm_oid.dotted_string})", 0


def _embedded_scts(certificate: x509.Certificate) -> tuple[SignedTimestamp, ...]:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.PrecertificateSignedCertificateTimestamps)
    except (x509.ExtensionNotFound, ValueError):
        return ()
    return SignedTimestamp.read(extension.value)


def _handshake_scts(result: Handshake) -> tuple[SignedTimestamp, ...] | None:
    """The SCTs the handshake carried (`Handshake.timestamps`); an unreadable list carries none, as for browsers."""
    if result.timestamps is None:
        return None
    try:
        listed = signed_timestamps(result.timestamps) if result.timestamps else []
    except MalformedHello:
        return ()
    scts = []
    for log_id, milliseconds in listed:
        try:
            when = datetime.fromtimestamp(milliseconds / 1000, UTC)
        except (ValueError, OverflowError, OSError):  # past year 9999, as for an embedded one
            continue
        scts.append(SignedTimestamp(log_id=base64.b64encode(log_id).decode(), timestamp=when))
    return tuple(scts)


def _is_ca(certificate: x509.Certificate) -> bool:
    try:
        return bool(certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except (x509.ExtensionNotFound, ValueError):
        return False


def _must_staple(certificate: x509.Certificate) -> bool:
    """RFC 7633: the TLS Feature extension asks for status_request, so clients must get a stapled OCSP response."""
    try:
        features = certificate.extensions.get_extension_for_class(x509.TLSFeature).value
    except (x509.ExtensionNotFound, ValueError):
        return False
    return x509.TLSFeatureType.status_request in features


#: RFC 5280 4.2.1.3's KeyUsage bits, as cryptography names them (encipher_only and decipher_only are read only
#: beside key_agreement: cryptography raises for them otherwise).
_KEY_USAGE_BITS = (
    "digital_signature",
    "content_commitment",
    "key_encipherment",
    "data_encipherment",
    "key_agreement",
    "key_cert_sign",
    "crl_sign",
)


#: RFC 5280 4.2.1.12's (and RFC 3161's, RFC 6960's) names for the purposes a certificate's Extended Key Usage lists.
_PURPOSE_NAMES = {
    ExtendedKeyUsageOID.SERVER_AUTH: "serverAuth",
    ExtendedKeyUsageOID.CLIENT_AUTH: "clientAuth",
    ExtendedKeyUsageOID.CODE_SIGNING: "codeSigning",
    ExtendedKeyUsageOID.EMAIL_PROTECTION: "emailProtection",
    ExtendedKeyUsageOID.TIME_STAMPING: "timeStamping",
    ExtendedKeyUsageOID.OCSP_SIGNING: "OCSPSigning",
    ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE: "anyExtendedKeyUsage",
}


def _extended_key_usage(certificate: x509.Certificate) -> tuple[str, ...] | None:
    """The purposes the Extended Key Usage lists, None without the extension (RFC 5280 4.2.1.12: any purpose). A
    malformed extension reads as absent, as a malformed Key Usage does; OpenSSL's verdict on it stands."""
    try:
        purposes = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except (x509.ExtensionNotFound, ValueError):
        return None
    return tuple(_PURPOSE_NAMES.get(oid, oid.dotted_string) for oid in list(purposes)[:16])


def _key_usage(certificate: x509.Certificate) -> tuple[str, ...] | None:
    """The Key Usage bits set, None without the extension (RFC 5280 4.2.1.3: then the key may be used for any
    purpose). A malformed extension reads as absent, as a malformed subjectAltName does."""
    try:
        usage = certificate.extensions.get_extension_for_class(x509.KeyUsage).value
    except (x509.ExtensionNotFound, ValueError):
        return None
    bits = [bit for bit in _KEY_USAGE_BITS if getattr(usage, bit)]
    if usage.key_agreement:
        bits += [bit for bit in ("encipher_only", "decipher_only") if getattr(usage, bit)]
    return tuple(bits)


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
        must_staple=_must_staple(certificate),
        key_usage=_key_usage(certificate),
        extended_key_usage=_extended_key_usage(certificate),
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


def _verified_path(result: Handshake, chain: tuple[CertificateInfo, ...]) -> tuple[CertificateInfo, ...]:
    """The verifier's path without its anchor, parsed (the certificates the server sent are parsed already); empty
    when a certificate of it cannot be read, so that the chain as sent is judged instead."""
    sent = {info.der: info for info in chain}
    path = []
    for der in result.verified_chain[:-1]:
        info = sent.get(der)
        if info is None:
            try:
                info = parse_certificate(der)
            except _UNREADABLE:
                return ()
        path.append(info)
    return tuple(path)


def _public_root(result: Handshake, leaf: CertificateInfo, now: datetime) -> bool | None:
    """Does the verified path end at a public root, one in certifi's bundle or the system's default bundle
    (`is_public_root`)? Else it was installed locally: found only in WEBSEC_CA_BUNDLE. Asked only for a leaf
    whose lifetime exceeds what public CAs may issue, or that embeds SCTs (dated by `now`) from fewer logs than
    browsers ask of a public CA's (the checks need it then, and reading the bundles costs a fresh process
    milliseconds, issue 14)."""
    lifetime = leaf.not_after - leaf.not_before
    logs = {sct.log_id for sct in leaf.embedded_scts if sct.timestamp <= now}
    logged = len(logs) >= embedded_logs_required(lifetime)
    if not result.verified_chain or (lifetime <= MAX_PUBLIC_LIFETIME and logged):
        return None
    return is_public_root(result.verified_chain[-1])


@dataclass(frozen=True)
class _ChainVerdict:
    complete: bool | None = None  # False only when a trusted path exists once the missing issuer is added
    missing_issuer: str | None = None
    untrusted_ca: str | None = None  # the CA at the top of the path that no trust store holds


def _ca_issuers_urls(certificate: x509.Certificate) -> list[str]:
    """http:// caIssuers URLs of the Authority Information Access extension (RFC 5280 4.2.2.1); LDAP
    URLs are skipped (no browser follows them)."""
    try:
        access = certificate.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    except (x509.ExtensionNotFound, ValueError):
        return []
    return [
        d.access_location.value
        for d in access
        if d.access_method == AuthorityInformationAccessOID.CA_ISSUERS
        and isinstance(d.access_location, x509.UniformResourceIdentifier)
        and d.access_location.value.lower().startswith("http://")
    ]


def _downloaded_certificates(body: bytes) -> list[x509.Certificate]:
    """RFC 5280 4.2.2.1: a single DER certificate or a certs-only CMS (PKCS#7) bundle, which may hold several
    (a DER SET OF, sorted by encoding: the issuer is anywhere in it); PEM is seen too. Empty when unreadable."""

    def from_pkcs7() -> list[x509.Certificate]:
        # Imported here: the PKCS#7 module pulls in the email package, and only a missing issuer needs it.
        from cryptography.hazmat.primitives.serialization import pkcs7

        return pkcs7.load_der_pkcs7_certificates(body)

    loaders: tuple[Callable[[], list[x509.Certificate]], ...] = (
        lambda: [x509.load_der_x509_certificate(body)],
        from_pkcs7,
        lambda: x509.load_pem_x509_certificates(body),
    )
    for load in loaders:
        try:
            return load()
        except ValueError:
            continue
    return []


def _issuers_among(certificate: x509.Certificate, candidates: list[x509.Certificate]) -> list[x509.Certificate]:
    """The candidates that issued `certificate`: the subject is its issuer, and the key verifies its signature
    (Chromium's cert_issuer_source_aia offers every certificate of a bundle to path building)."""
    return [c for c in candidates if c.subject == certificate.issuer and _issued_by(certificate, c)]


def _chains_to_trusted_root(
    store: crypto.X509Store, certificate: x509.Certificate, untrusted: list[x509.Certificate]
) -> bool:
    """Does `certificate` verify up to an anchor of the grading store (at the scan's time)?"""
    chain = [crypto.X509.from_cryptography(c) for c in untrusted]
    try:
        crypto.X509StoreContext(store, crypto.X509.from_cryptography(certificate), chain).verify_certificate()
    except crypto.X509StoreContextError:
        return False
    return True


def _issued_by(certificate: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        certificate.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return True


async def _judge_chain(
    result: Handshake,
    chain: tuple[CertificateInfo, ...],
    store: crypto.X509Store,
    ca_issuers: CaIssuerSource | None,
) -> _ChainVerdict:
    """Did the server send every intermediate (RFC 8446 4.4.2: the chain up to, not necessarily
    including, the trust anchor), and if the path breaks, is it a missing intermediate or an
    untrusted CA?

    Incomplete only with evidence that a trusted path exists once the missing issuer is added:
    - the verifier built the path with an intermediate from the local store, not sent;
    - a certificate the server sent above the break chains to a trusted root (a gap in the chain);
    - the issuer downloaded from the caIssuers URL (then its own, up to MAX_CA_ISSUER_HOPS) chains
      to a trusted root.
    Otherwise the CA at the top of what we could find is untrusted: a leaf issued directly by a
    private root looks exactly like one whose intermediate is missing, and calling it incomplete
    would send the operator after a file that does not exist.
    """
    if not chain:
        return _ChainVerdict()
    sent = set(result.chain)
    for der in result.verified_chain[1:]:
        if der in sent:
            continue
        info = parse_certificate(der)
        if not info.self_signed:  # an intermediate the server should have sent
            return _ChainVerdict(False, info.subject)
    for error in result.verify_errors:
        if error.code == SELF_SIGNED_IN_CHAIN:  # the server sent a root, and nobody trusts it
            return _ChainVerdict(True, untrusted_ca=error.subject)
    broken = next((e for e in result.verify_errors if e.code in MISSING_ISSUER), None)
    if broken is None or (broken.depth == 0 and chain[0].self_signed):
        return _ChainVerdict(True)
    certificates = [x509.load_der_x509_certificate(info.der) for info in chain]
    orphan = next((c for c in certificates if c.subject.rfc4514_string() == broken.subject), certificates[-1])
    missing = orphan.issuer.rfc4514_string()
    # Duplicates are judged once, and only the first MAX_JUDGED_CERTIFICATES distinct ones at all.
    considered = list(dict.fromkeys(certificates))[:MAX_JUDGED_CERTIFICATES]
    above = certificates[certificates.index(orphan) + 1 :]
    for candidate in dict.fromkeys(c for c in above if c in considered and c != orphan):
        others = [c for c in considered if c != candidate]
        if _is_ca(candidate) and _chains_to_trusted_root(store, candidate, others):
            return _ChainVerdict(False, missing)
    downloaded: list[x509.Certificate] = []  # every certificate of every body downloaded: a path may use any
    current = orphan
    for _ in range(MAX_CA_ISSUER_HOPS if ca_issuers is not None else 0):
        urls = _ca_issuers_urls(current)
        body = await ca_issuers(urls[0]) if urls and ca_issuers is not None else None
        bundle = _downloaded_certificates(body)[:MAX_JUDGED_CERTIFICATES] if body else []
        issuers = _issuers_among(current, bundle)
        if not issuers:
            break
        downloaded += bundle
        for issuer in issuers:
            if _chains_to_trusted_root(store, issuer, [c for c in downloaded if c != issuer] + considered):
                return _ChainVerdict(False, missing)
        current = issuers[0]
        if current.subject == current.issuer:  # a root, and not a trusted one
            return _ChainVerdict(None, untrusted_ca=current.subject.rfc4514_string())
    return _ChainVerdict(None, untrusted_ca=current.issuer.rfc4514_string())


def guarded_download(settings: Settings) -> Download:
    """Downloads of a URL the site's certificate names (caIssuers, OCSP, CRL), as untrusted as any redirect: through
    the scanner's own resolver and guard (pinned address, a port browsers connect to), size and time limits. A
    refused, failed or oversized download is its reason, in words."""

    async def download(url: str, max_bytes: int, *, posted: tuple[str, bytes] | None = None) -> bytes | str:
        host = urlsplit(url).hostname
        if not host:
            return "the URL names no host"
        pinner = Pinner(Resolver(settings), settings)
        method, headers, content = "GET", None, None
        if posted is not None:
            method, headers, content = "POST", {"Content-Type": posted[0]}, posted[1]
        try:
            address = await pinner.pin(host)
            ensure_port_allowed(url_port(urlsplit(url)))  # ValueError for a port out of range
            async with make_client(pinner, settings) as client:
                response = await fetch_one(
                    client,
                    url,
                    address,
                    settings.limits,
                    method=method,
                    headers=headers,
                    content=content,
                    max_body=max_bytes,
                )
        except ScanError as exc:  # refused by the guard, no such name
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - unreachable, malformed: its reason
            return describe_error(exc).message
        if response.status_code != 200:
            return AnsweredWith(f"{url} answered {response.status_code}")
        if response.body_truncated:
            return f"{url} answered more than {max_bytes // 1024} KiB"
        return response.body

    return download


def guarded_ca_issuers(settings: Settings) -> CaIssuerSource:
    """caIssuers downloads (guarded_download); the name is resolved once per URL, and a refused or failed fetch is
    simply "not found"."""
    download = guarded_download(settings)

    async def ca_issuer(url: str) -> bytes | None:
        body = await download(url, MAX_CA_ISSUER_BYTES)
        return body if isinstance(body, bytes) else None

    return ca_issuer


#: The protocol probes made with OpenSSL's own groups and signature algorithms, at versions and with suites the
#: grading handshake offers too (TLS 1.1 and 1.0 may fall back to hand-built hellos with suites it lacks).
_OPENSSL_PROBED = ("TLSv1.3", "TLSv1.2")


def _failure(exc: BaseException, port: int, timeout: float, protocols: tuple[TlsProbe, ...] = ()) -> Failure:
    if isinstance(exc, ConnectFailed):
        if exc.timed_out:
            return Failure("timeout", f"no connection to port {port} was made within the connect timeout")
        exc = exc.reason or exc
    if isinstance(exc, TimeoutError):
        return Failure("timeout", f"no TLS handshake completed within {timeout:.0f} seconds")
    if isinstance(exc, ConnectionRefusedError):
        return Failure("unreachable", f"connection refused on port {port}")
    if isinstance(exc, HandshakeRejected) and exc.certificate_requested:
        said = f"{CLIENT_CERTIFICATE_REQUIRED}: it asked for one and ended the handshake without it ({exc})"
        return Failure("tls", f"TLS handshake failed: {said}")
    if isinstance(exc, HandshakeRejected):
        accepted = next((p.name for p in protocols if p.name in _OPENSSL_PROBED and p.accepted), None)
        if accepted is not None:  # the same hello but for Chrome's groups and signature algorithms got through
            return Failure(
                "tls",
                f"TLS handshake failed: {exc}. The server completes a {accepted} handshake only with a key exchange "
                "group or signature algorithm browsers do not offer (Chrome offers the groups X25519MLKEM768, X25519, "
                "P-256 and P-384, and no Ed25519, Ed448, P-521 or SHA-1 signatures)",
            )
        return Failure("tls", f"TLS handshake failed: {exc}")
    if isinstance(exc, OSError):
        return Failure("unreachable", f"could not connect to port {port}: {exc.strerror or exc}")
    return Failure("tls", f"TLS handshake failed: {type(exc).__name__}: {exc}")


#: What the probes found: the protocol probes, the cipher-family probes, the DHE group (None: the server takes no
#: DHE suite, or it was not probed).
_Probed = tuple[tuple[TlsProbe, ...], tuple[TlsProbe, ...], DhGroup | None]


async def _dh_group(target: tuple[str, int, str], timeout: float, limit: asyncio.Semaphore) -> DhGroup | None:
    async with limit:
        return await probe_dh_group(target, timeout)


def _negotiated_dhe(grading: asyncio.Future[Negotiated], probes: tuple[TlsProbe, ...]) -> str | None:
    """A DHE suite some handshake of the scan got (the grading one or a probe), or None."""
    negotiated = grading.result() if grading.done() and not grading.cancelled() and not grading.exception() else None
    ciphers = [negotiated[1] if negotiated else None, *(probe.cipher for probe in probes if probe.accepted)]
    return next((cipher for cipher in ciphers if dhe_suite(cipher)), None)


async def _probes(address: str, port: int, host: str, timeout: float, grading: asyncio.Future[Negotiated]) -> _Probed:
    """The protocol and cipher-family probes, and beside them the DHE group, asked of every server: one preferring
    ECDHE negotiates DHE in no handshake of the scan, yet gives its group to every client that offers no ECDHE
    (Logjam is about those clients). One connection a scan, a ClientHello answered by a ServerHello (or an alert
    from a server without DHE): no handshake is completed."""
    limit = asyncio.Semaphore(MAX_PARALLEL_PROBES)
    target = (address, port, host)
    protocols, ciphers, dh_group = await asyncio.gather(
        probe_protocols(target, timeout, limit, grading),
        probe_cipher_families(target, timeout, limit),
        _dh_group(target, timeout, limit),
    )
    if dh_group is None:
        dhe = _negotiated_dhe(grading, (*protocols, *ciphers))
        if dhe is not None:  # refused here, taken there: the size is unknown, not absent
            detail = f"the server refused a ClientHello offering only DHE suites, though it negotiated {dhe}"
            dh_group = DhGroup(None, detail=detail)
    return protocols, ciphers, dh_group


class _Asked(NamedTuple):
    """What a scan's own grading handshake leads to ask besides the probes: the CA's word on the leaf
    (`_asked_revocation`), and Heartbleed of a server that offered heartbeats (tls_probes.probe_heartbleed)."""

    revocation: RevocationAnswer | None
    heartbeat: HeartbeatCheck | None


async def _asked_after(result: Handshake, settings: Settings, target: tuple[str, int, str], timeout: float) -> _Asked:
    heartbleed = None
    if result.heartbeat:
        heartbleed = asyncio.ensure_future(probe_heartbleed(target, result.protocol, timeout))
    try:
        revocation = await _asked_revocation(result, settings)
        return _Asked(revocation, await heartbleed if heartbleed is not None else None)
    finally:
        await _cancelled(heartbleed)


async def _attempt(
    host: str,
    port: int,
    address: str,
    context: SSL.Context,
    settings: Settings,
    probes: bool,
    pinner: Pinner | None,
    before_tls: BeforeTls | None = None,
) -> tuple[Handshake | BaseException, _Probed, asyncio.Future[_Asked] | None] | str:
    """The grading handshake to `address`, and the probes beside it, and with them (for a scan's own handshakes,
    those with probes) what it leads to ask (`_asked_after`), left running for the caller; or, when `address` took
    no connection and `pinner` gives the host another, that other address (the probes, which went to the same one,
    are cancelled)."""
    connect_seconds = settings.limits.connect_seconds
    timeout = connect_seconds + settings.limits.read_seconds
    # The version the grading handshake gets answers that version's probe (one handshake less a scan).
    negotiated: asyncio.Future[Negotiated] = asyncio.get_running_loop().create_future()
    probe_task = (
        asyncio.ensure_future(_probes(address, port, host, min(timeout, connect_seconds), negotiated))
        if probes
        else None
    )
    asked_task: asyncio.Future[_Asked] | None = None
    try:
        result: Handshake | BaseException
        try:
            result = await handshake(
                address,
                port,
                host,
                context,
                timeout,
                request_ocsp=True,
                connect_timeout=connect_seconds,
                watch_certificate_request=True,
                before_tls=before_tls,
            )
        except Exception as exc:  # noqa: BLE001 - refused, unreachable, timed out or anything else: its failure
            result = exc
        if pinner is not None and isinstance(result, ConnectFailed):
            moved = pinner.failed(host, port, address, timed_out=result.timed_out)
            if moved is not None:
                await _cancelled(probe_task)
                return moved
        elif pinner is not None:
            pinner.connected(host, port, address)
        negotiated.set_result(None if isinstance(result, BaseException) else (result.protocol, result.cipher))
        if probes and isinstance(result, Handshake):
            target = (address, port, host)
            asked_task = asyncio.ensure_future(_asked_after(result, settings, target, min(timeout, connect_seconds)))
        probed = await probe_task if probe_task is not None else ((), (), None)
    except BaseException:
        await _cancelled(probe_task)
        await _cancelled(asked_task)
        raise
    return result, probed, asked_task


async def _cancelled(task: asyncio.Future[Any] | None) -> None:
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _verify_at(settings: Settings) -> datetime | None:
    """The instant to judge the chain at: the scan's clock, to the minute; None for the system clock,
    which OpenSSL reads itself (so production keeps one cached context)."""
    clock = clock_for(settings)
    return None if clock is system_clock else clock().replace(second=0, microsecond=0)


async def fetch_tls(
    host: str,
    port: int,
    address: str,
    settings: Settings,
    *,
    probes: bool = True,
    ca_issuers: CaIssuerSource | None = None,
    pinner: Pinner | None = None,
    before_tls: BeforeTls | None = None,
) -> TlsHandshake:
    """Never raises: a failed handshake is recorded as the handshake's failure (`before_tls`'s too: fetch/smtp.py
    reads its own from what it raised).

    `ca_issuers` downloads a missing issuer named in a caIssuers URL (default: guarded_ca_issuers).

    With `probes`, the protocol and cipher-family probes run beside the grading handshake,
    each bounded by the connect timeout (a server that ignores a legacy ClientHello must not
    hold the scan for the full read budget).

    With `pinner` (which pinned `host`), an `address` that takes no connection gives way to the host's next
    address (resolve.Pinner.failed), and one that takes it is the one the host's port stays on."""
    timeout = settings.limits.connect_seconds + settings.limits.read_seconds
    context = grading_context(settings.ca_bundle, _verify_at(settings))
    while isinstance(
        attempt := await _attempt(host, port, address, context, settings, probes, pinner, before_tls), str
    ):
        address = attempt  # the host's next address: the handshake and the probes start again there
    result, (protocols, ciphers, dh_group), asked_task = attempt
    if isinstance(result, BaseException):
        return TlsHandshake(
            host=host,
            port=port,
            address=address,
            failure=_failure(result, port, timeout, protocols),
            dh_group=dh_group,
            protocols=protocols,
            cipher_probes=ciphers,
            client_certificate_requested=isinstance(result, HandshakeRejected) and result.certificate_requested,
        )
    probed = (protocols, ciphers, dh_group)
    try:
        return await _graded(result, host, port, address, context, settings, ca_issuers, probed, asked_task)
    except Exception as exc:  # noqa: BLE001 - a certificate detail no parser foresaw is recorded, never raised
        message = f"the server's certificates could not be graded: {type(exc).__name__}: {exc}"
        shown = _shown(result, host, port, address, probed)
        return dataclasses.replace(shown, failure=Failure("tls", message))
    finally:
        await _cancelled(asked_task)  # done by now, unless grading failed first


async def pinned_tls(
    host: str,
    port: int,
    pinner: Pinner,
    settings: Settings,
    *,
    probes: bool = True,
    before_tls: BeforeTls | None = None,
) -> TlsHandshake:
    """fetch_tls to the address `pinner` gives `host`:`port` (and its next ones, see fetch_tls). Never raises: a
    refused or unresolvable host, or a failure fetch_tls did not foresee, is the handshake's failure."""
    try:
        address = await pinner.pin(host, port)
    except Exception as exc:  # noqa: BLE001 - refused or unresolvable: recorded, never raised
        return TlsHandshake(host=host, port=port, failure=Failure("unreachable", str(exc)))
    try:
        return await fetch_tls(host, port, address, settings, probes=probes, pinner=pinner, before_tls=before_tls)
    except Exception as exc:  # noqa: BLE001 - fetch_tls records its failures; should one escape, it is the section's
        failure = Failure("tls", f"the TLS handshake could not be graded: {type(exc).__name__}: {exc}")
        return TlsHandshake(host=host, port=port, address=address, failure=failure)


#: What cryptography raises for a certificate it cannot read in some field: ValueError for a malformed one,
#: KeyError for a value it has no name for (a TLS Feature extension listing 99: `TLSFeatureType(99)` looked up
#: by value), TypeError for a field of an unexpected type. Not bare Exception: anything else is our bug.
_UNREADABLE = (ValueError, KeyError, TypeError)


def _unreadable_reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):  # str(KeyError(99)) is "99"
        return f"an extension holds a value cryptography does not know ({exc.args[0] if exc.args else exc})"
    return str(exc)


def _readable_chain(ders: tuple[bytes, ...]) -> tuple[tuple[CertificateInfo, ...], str | None]:
    """The chain as sent, parsed up to the first certificate cryptography refuses (one OpenSSL accepted: a
    PrintableString holding "_", say), and what stopped it."""
    chain: list[CertificateInfo] = []
    for position, der in enumerate(ders):
        try:
            chain.append(parse_certificate(der))
        except _UNREADABLE as exc:
            what = "the server's certificate" if position == 0 else f"certificate {position + 1} of the chain sent"
            return tuple(chain), f"{what} could not be read: {_unreadable_reason(exc)}"
    return tuple(chain), None


def _shown(result: Handshake, host: str, port: int, address: str, probed: _Probed) -> TlsHandshake:
    """What a completed handshake shows whatever its certificate: protocol, cipher, group and the probes."""
    protocols, ciphers, dh_group = probed
    return TlsHandshake(
        host=host,
        port=port,
        address=address,
        protocol=result.protocol,
        cipher=result.cipher,
        cipher_bits=result.cipher_bits,
        key_exchange_group=result.group,
        dh_group=dh_group,
        protocols=protocols,
        cipher_probes=ciphers,
        secure_renegotiation=result.secure_renegotiation,
        client_certificate_requested=result.client_certificate_requested,
        handshake_scts=_handshake_scts(result),
    )


async def _graded(
    result: Handshake,
    host: str,
    port: int,
    address: str,
    context: SSL.Context,
    settings: Settings,
    ca_issuers: CaIssuerSource | None,
    probed: _Probed,
    asked: asyncio.Future[_Asked] | None,
) -> TlsHandshake:
    """The completed handshake graded: chain, trust, completeness, and what `asked` asked (the CA's word on the leaf,
    Heartbleed). An unreadable leaf is the handshake's failure (nothing about the certificate can be judged); an
    unreadable certificate above it ends the chain recorded there, and says so among what could not be tested."""
    shown = _shown(result, host, port, address, probed)
    chain, unreadable = _readable_chain(result.chain)
    if unreadable is not None and not chain:  # nothing about the certificate can be judged: a failure
        return dataclasses.replace(shown, failure=Failure("tls", unreadable))
    store = context.get_cert_store()
    if store is None:  # grading_context always loads one
        raise RuntimeError("the TLS context has no certificate store")
    source = ca_issuers if ca_issuers is not None else guarded_ca_issuers(settings)
    verdict = await _judge_chain(result, chain, store, source)
    trusted, verify_error = _trust(result)
    answers = await asked if asked is not None else _Asked(None, None)
    # the trust anchor the verified path ends at: a PKIX-TA TLSA record may name it, and its key hash is what the
    # browsers' constraints on a root are keyed by (scanner/data/distrusted_roots.toml)
    anchor = result.verified_chain[-1] if trusted and chain and result.verified_chain else None
    return dataclasses.replace(
        shown,
        chain=chain,
        verified_path=_verified_path(result, chain) if trusted and chain else (),
        trusted=trusted and bool(chain),
        verify_error=verify_error if chain else "the server sent no certificate",
        hostname_matches=bool(chain) and certificate_matches_host(chain[0], host),
        chain_complete=verdict.complete,
        missing_issuer=verdict.missing_issuer,
        untrusted_ca=verdict.untrusted_ca if not trusted else None,
        ocsp_staple=result.ocsp,
        public_root=_public_root(result, chain[0], clock_for(settings)()) if trusted and chain else None,
        anchor_key=spki_sha256(anchor) if anchor is not None else None,
        anchor=anchor,
        not_testable=() if unreadable is None else (unreadable,),
        revocation=answers.revocation if chain else None,
        heartbeat=answers.heartbeat,
    )


async def _asked_revocation(result: Handshake, settings: Settings) -> RevocationAnswer | None:
    """fetch/revocation.py's answer for the handshake's leaf, asked while the probes run: for a trusted leaf (the
    verifier's word) within its validity period (CAs drop expired certificates from their CRLs, and an expired leaf
    is refused anyway) that the server staples no current answer for (`staple_answers`: none, or one for another
    certificate, expired or unsuccessful, which browsers set aside), its issuer the verified path's next certificate.
    A certificate detail no parser foresaw is the answer's failure, never the TLS section's."""
    if not result.chain or not _trust(result)[0]:
        return None
    try:
        leaf = x509.load_der_x509_certificate(result.chain[0])
        now = clock_for(settings)()
        if not leaf.not_valid_before_utc <= now <= leaf.not_valid_after_utc:
            return None
        if result.ocsp is not None and staple_answers(result.ocsp, leaf, now):
            return None
        issuer = result.verified_chain[1] if len(result.verified_chain) > 1 else None
        return await fetch_revocation(result.chain[0], issuer, guarded_download(settings), now)
    except Exception as exc:  # noqa: BLE001 - a certificate detail no parser foresaw: the answer's, not the section's
        return RevocationAnswer("crl", "", failure=f"the CA could not be asked: {type(exc).__name__}: {exc}")
