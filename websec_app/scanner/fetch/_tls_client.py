"""One TLS handshake over asyncio with pyOpenSSL, driven through memory BIOs.

Python 3.11's `ssl` returns only the leaf certificate and never the stapled OCSP response,
so the handshakes that grade a server use pyOpenSSL (PyCA): `get_peer_cert_chain()` gives
the chain exactly as sent, `get_verified_chain()` the path the verifier built, and
`set_ocsp_client_callback` the staple. The socket stays asyncio's: OpenSSL reads and
writes memory buffers that we pump by hand, so a handshake is cancellable, has a
deadline and never blocks the event loop.

The verify callback records every chain error and lets the handshake go on, so one
handshake yields both "what the server sends" and "would a client trust it".
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import sys
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import certifi
from OpenSSL import SSL, crypto
from OpenSSL._util import ffi, lib

from ...bytecode_files import beside_bytecode
from ._hello_codec import (
    CERTIFICATE,
    HANDSHAKE,
    HEARTBEAT_EXTENSION,
    HEARTBEAT_OFFER,
    RENEGOTIATION_INFO,
    SERVER_HELLO,
    SIGNED_CERTIFICATE_TIMESTAMP,
    MalformedHello,
    ServerHello,
    ServerHelloReader,
    leaf_entry_timestamps,
    parse_server_hello,
)

# Every cipher suite the local OpenSSL knows, at security level 0 so that legacy servers can be
# reached and measured. PSK and SRP suites need credentials we do not have.
ALL_CIPHERS = "ALL:COMPLEMENTOFALL:!PSK:!SRP:@SECLEVEL=0"
# Browsers' preference first (ECDHE with AEAD, as Mozilla's "intermediate" profile), then the rest:
# a server that honours the client's order then picks what a browser would get.
BROWSER_LIKE_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:DHE+CHACHA20:" + ALL_CIPHERS

# What Chrome offers besides its suites (Chromium 156's ClientHello, GREASE left out): these groups (key shares for
# the first two) and these signature algorithms; no P-521, X448 or FFDHE group, no Ed25519, Ed448 or P-521
# signature, no SHA-1. A server that needs any of those fails in Chrome (ERR_SSL_VERSION_OR_CIPHER_MISMATCH), so the
# grading handshake offers these only. Each is tried in turn: an older OpenSSL without ML-KEM or ML-DSA, or without
# the "*" key share syntax (OpenSSL 3.5), takes the next.
BROWSER_GROUPS = ("*X25519MLKEM768:*X25519:P-256:P-384", "X25519:P-256:P-384")
_CHROME_SIGNATURES = (
    "ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256:rsa_pkcs1_sha256:ecdsa_secp384r1_sha384:rsa_pss_rsae_sha384:"
    "rsa_pkcs1_sha384:rsa_pss_rsae_sha512:rsa_pkcs1_sha512"
)
BROWSER_SIGNATURE_ALGORITHMS = ("mldsa44:mldsa65:mldsa87:" + _CHROME_SIGNATURES, _CHROME_SIGNATURES)

PROTOCOL_VERSIONS = {
    "TLSv1.3": SSL.TLS1_3_VERSION,
    "TLSv1.2": SSL.TLS1_2_VERSION,
    "TLSv1.1": SSL.TLS1_1_VERSION,
    "TLSv1": SSL.TLS1_VERSION,
    "SSLv3": SSL.SSL3_VERSION,
}

# OpenSSL's X509_V_ERR_* texts (include/openssl/x509_vfy.h, crypto/x509/x509_txt.c) for the codes a
# server's chain can cause; pyOpenSSL's verify callback hands us only the number.
_VERIFY_ERRORS = {
    2: "unable to get issuer certificate",
    4: "unable to decrypt certificate's signature",
    6: "unable to decode issuer public key",
    7: "certificate signature failure",
    9: "certificate is not yet valid",
    10: "certificate has expired",
    13: "format error in certificate's notBefore field",
    14: "format error in certificate's notAfter field",
    18: "self-signed certificate",
    19: "self-signed certificate in certificate chain",
    20: "unable to get local issuer certificate",
    21: "unable to verify the first certificate",
    22: "certificate chain too long",
    23: "certificate revoked",
    24: "invalid CA certificate",
    25: "path length constraint exceeded",
    26: "unsupported certificate purpose",
    27: "certificate not trusted",
    28: "certificate rejected",
    29: "subject issuer mismatch",
    30: "authority and subject key identifier mismatch",
    32: "key usage does not include certificate signing",
    47: "permitted subtree violation",
    48: "excluded subtree violation",
}
NOT_YET_VALID, EXPIRED = 9, 10
MISSING_ISSUER = (2, 20)  # the issuer was neither sent nor in the trust store
SELF_SIGNED_IN_CHAIN = 19  # the server sent a root that is not in the trust store


def verify_error_text(code: int) -> str:
    return _VERIFY_ERRORS.get(code, f"certificate verification error {code}")


@dataclass(frozen=True)
class VerifyError:
    depth: int  # 0 = the leaf
    code: int
    subject: str

    @property
    def text(self) -> str:
        return verify_error_text(self.code)


#: A protocol's way into TLS on a connection just opened (SMTP's STARTTLS): it reads and writes the plain
#: dialogue, and returns when the next bytes are the ClientHello.
BeforeTls = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class _ConnectionState:
    """Filled by the callbacks of one connection (pyOpenSSL passes the Connection, we keep this on it)."""

    verify_errors: list[VerifyError] = field(default_factory=list)
    ocsp: bytes | None = None
    certificate_requested: bool = False
    # The SCT list the server sent in the handshake (RFC 6962 3.3.1): b"" when its messages held none, None unread.
    timestamps: bytes | None = None
    # The server's ServerHello echoed the heartbeat extension (RFC 6520): None unread.
    heartbeat: bool | None = None


@dataclass(frozen=True)
class Handshake:
    """What one completed handshake showed."""

    protocol: str
    cipher: str | None
    cipher_bits: int | None
    group: str | None
    chain: tuple[bytes, ...]  # DER, as sent, leaf first
    verified_chain: tuple[bytes, ...]  # DER, the path the verifier built (may end in a local anchor)
    verify_errors: tuple[VerifyError, ...]
    ocsp: bytes | None
    # RFC 5746: did the ServerHello carry renegotiation_info? None at TLS 1.3 (no renegotiation) or unread.
    secure_renegotiation: bool | None = None
    # The server asked for a client certificate (a CertificateRequest; watched by the grading handshake only).
    client_certificate_requested: bool = False
    # The SCT list sent in the handshake (RFC 6962 3.3.1; the grading handshake asks, `ask_for_timestamps`): b"" when
    # the server sent none, None when not asked or unread.
    timestamps: bytes | None = None
    # The server offered TLS heartbeats (RFC 6520) in answer to ours (`offer_heartbeat`); None when not offered ours.
    heartbeat: bool | None = None


class HandshakeRejected(Exception):
    """The server refused the handshake (an alert, or it closed/reset the connection). `certificate_requested`:
    it had asked for a client certificate first (TLS 1.2 refuses a client that sends none here; TLS 1.3 after the
    handshake), when the handshake watched for that."""

    def __init__(self, message: str, *, certificate_requested: bool = False) -> None:
        super().__init__(message)
        self.certificate_requested = certificate_requested


class ConnectFailed(OSError):
    """No TCP connection was made (refused, unreachable, or none within the connect timeout): the address may be
    down, where HandshakeRejected and a handshake's timeout come from a server that is up."""

    def __init__(self, reason: OSError | None, *, timed_out: bool = False) -> None:
        super().__init__(*(() if reason is None else (reason.errno, reason.strerror or str(reason))))
        self.reason = reason
        self.timed_out = timed_out


_RFC4514_SPECIAL = str.maketrans({c: "\\" + c for c in '\\,+"<>;='})


def _openssl_subject(certificate: crypto.X509) -> str:
    """The subject as OpenSSL reads it, in RFC 4514's order and form (attribute values escaped, never decoded
    strictly): for a certificate that OpenSSL accepts and cryptography refuses to parse (a PrintableString
    with "_", say)."""
    with warnings.catch_warnings():  # X509.get_subject: cryptography's API is the one that refuses this name
        warnings.simplefilter("ignore", DeprecationWarning)
        components = certificate.get_subject().get_components()
    return ",".join(
        f"{name.decode('ascii', 'replace')}={value.decode('utf-8', 'replace').translate(_RFC4514_SPECIAL)}"
        for name, value in reversed(components)
    )


def certificate_subject(certificate: crypto.X509) -> str:
    """The certificate's subject (RFC 4514), whatever cryptography thinks of the rest of the certificate."""
    try:
        return certificate.to_cryptography().subject.rfc4514_string()
    except ValueError:
        pass
    try:
        return _openssl_subject(certificate)
    except (crypto.Error, ValueError):
        return "(a subject that could not be read)"


def _on_verify(connection: SSL.Connection, certificate: crypto.X509, code: int, depth: int, ok: int) -> bool:
    """Record the chain error and go on (trust is graded, not enforced). Never raises: pyOpenSSL re-raises a
    callback's exception from do_handshake, which would turn a certificate detail into a lost handshake."""
    if not ok:
        state: _ConnectionState = connection.get_app_data()
        state.verify_errors.append(VerifyError(depth, code, certificate_subject(certificate)))
    return True


def _on_ocsp(connection: SSL.Connection, staple: bytes, data: object) -> bool:
    state: _ConnectionState = connection.get_app_data()
    state.ocsp = staple or None
    return True


#: OpenSSL's name for the client state after a CertificateRequest (TLS_ST_CR_CERT_REQ, ssl/statem; the same from
#: OpenSSL 1.1.0 on, for TLS 1.2 and 1.3): pyOpenSSL shows no other sign that the server asked for a certificate.
_READ_CERTIFICATE_REQUEST = b"SSLv3/TLS read server certificate request"


def _on_state(connection: SSL.Connection, where: int, ret: int) -> None:
    if connection.get_state_string() == _READ_CERTIFICATE_REQUEST:
        state: _ConnectionState = connection.get_app_data()
        state.certificate_requested = True


_TLS1_3 = 0x0304


def _on_message(write_p: int, version: int, content_type: int, buf: Any, size: int, ssl: Any, arg: Any) -> None:
    """OpenSSL's message callback: every message of the handshake as OpenSSL reads it, decrypted. A TLS 1.2 server
    sends its SCT list in the ServerHello, a TLS 1.3 one with its certificate in the encrypted Certificate message,
    which only this shows (pyOpenSSL has no API for either). Called from C: nothing may raise out of it."""
    if write_p or content_type != HANDSHAKE or size < 4:
        return
    kind = ffi.cast("unsigned char *", buf)[0]
    if kind != SERVER_HELLO and not (kind == CERTIFICATE and version == _TLS1_3):
        return
    connection = SSL.Connection._reverse_mapping.get(ssl)
    state = connection.get_app_data() if connection is not None else None
    if not isinstance(state, _ConnectionState):
        return
    message = bytes(ffi.buffer(buf, size))
    try:
        if kind == SERVER_HELLO:
            hello = parse_server_hello(message)
            state.timestamps = None if hello.extensions is None else (hello.timestamps or b"")
            state.heartbeat = None if hello.extensions is None else HEARTBEAT_EXTENSION in hello.extensions
        else:
            state.timestamps = leaf_entry_timestamps(message) or b""
    except MalformedHello:  # OpenSSL says what is wrong with the message, if anything
        state.timestamps = None
    except Exception:  # noqa: BLE001 - a bug here must cost the SCTs, never the handshake (cffi would print it)
        state.timestamps = None


@lru_cache(maxsize=1)
def _message_callback() -> Any:
    # One C callback for the process, kept alive here (a cffi callback freed while OpenSSL holds it crashes).
    return ffi.callback("void(int, int, int, void *, size_t, SSL *, void *)", _on_message)


def ask_for_timestamps(context: SSL.Context) -> bool:
    """Make `context`'s ClientHello ask for Certificate Transparency SCTs, as browsers' does (an empty
    signed_certificate_timestamp extension, RFC 6962 3.3.1), and read what the server answers (`_on_message`);
    False when the local OpenSSL refuses. A server sends SCTs this way only when asked, and some CAs' customers
    get theirs only so. OpenSSL takes the extension as a custom one while its own CT validation is off (the
    exception it makes for this type in SSL_CTX_add_client_custom_ext); the SCTs are counted, not verified."""
    null = ffi.NULL
    if (
        lib.SSL_CTX_add_client_custom_ext(context._context, SIGNED_CERTIFICATE_TIMESTAMP, null, null, null, null, null)
        != 1
    ):
        lib.ERR_clear_error()
        return False
    lib.SSL_CTX_set_msg_callback(context._context, _message_callback())
    return True


#: The heartbeat extension's data (HEARTBEAT_OFFER without its type and length), kept for the process: OpenSSL copies
#: what an add callback points it at.
_HEARTBEAT_MODE = ffi.new("unsigned char[]", HEARTBEAT_OFFER[4:])


def _add_heartbeat_mode(ssl: Any, ext_type: int, out: Any, outlen: Any, alert: Any, arg: Any) -> int:
    out[0] = _HEARTBEAT_MODE
    outlen[0] = len(HEARTBEAT_OFFER) - 4
    return 1


@lru_cache(maxsize=1)
def _heartbeat_callback() -> Any:
    return ffi.callback("int(SSL *, unsigned int, unsigned char **, size_t *, int *, void *)", _add_heartbeat_mode)


def offer_heartbeat(context: SSL.Context) -> bool:
    """Make `context`'s ClientHello offer TLS heartbeats (RFC 6520, mode peer_not_allowed_to_send: we answer none),
    so that a server that has them says so in its ServerHello (`Handshake.heartbeat`): OpenSSL 1.0.1 to 1.0.1f
    answered them with Heartbleed (CVE-2014-0160), and no browser or current OpenSSL offers them. A server without
    them ignores the extension (RFC 5246 7.4.1.4). False when the local OpenSSL refuses to add it."""
    null = ffi.NULL
    if (
        lib.SSL_CTX_add_client_custom_ext(
            context._context, HEARTBEAT_EXTENSION, _heartbeat_callback(), null, null, null, null
        )
        != 1
    ):
        lib.ERR_clear_error()
        return False
    return True


_LEGACY_SERVER_CONNECT = 0x4  # SSL_OP_LEGACY_SERVER_CONNECT (OpenSSL's ssl.h); pyOpenSSL does not name it


def make_context(
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    ciphers: str = ALL_CIPHERS,
    verify_with: tuple[Path | None] | None = None,
) -> SSL.Context:
    """A client context; raises SSL.Error when the local OpenSSL cannot do what is asked.

    `verify_with=(ca_bundle,)` loads the system store, certifi and the operator's bundle and
    records chain errors (never fails the handshake over them); None verifies nothing.
    """
    context = SSL.Context(SSL.TLS_METHOD)
    # Browsers connect to a server without RFC 5746 (BoringSSL, NSS); OpenSSL 3 refuses unless told (its
    # "unsafe legacy renegotiation disabled"), which would grade such a site unreachable. Whether the server
    # supports it is read from its ServerHello instead (Handshake.secure_renegotiation); we never renegotiate.
    context.set_options(_LEGACY_SERVER_CONNECT | SSL.OP_NO_RENEGOTIATION)
    context.set_min_proto_version(minimum if minimum is not None else SSL.TLS1_VERSION)
    if maximum is not None:
        context.set_max_proto_version(maximum)
    context.set_cipher_list(ciphers.encode())
    if verify_with is not None:
        (ca_bundle,) = verify_with
        load_trust_store(context)
        if ca_bundle is not None:
            context.load_verify_locations(str(ca_bundle))
        context.set_verify(SSL.VERIFY_PEER, _on_verify)
        context.set_ocsp_client_callback(_on_ocsp)
    else:
        context.set_verify(SSL.VERIFY_NONE)
    return context


#: Debian's (and Ubuntu's) system store: the bundle and, beside it, the same certificates one per file under
#: their subject hashes (update-ca-certificates writes both), which OpenSSL reads only when it needs an issuer.
_DEBIAN_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
_DEBIAN_HASHED_DIR = Path("/etc/ssl/certs")


def load_trust_store(context: SSL.Context) -> None:
    """The system's trusted roots and certifi's (Mozilla's), as `set_default_verify_paths()` and
    `load_verify_locations(certifi.where())` load them, but looked up by subject hash when a chain needs them
    where the certificates are available that way: parsing both bundles (~260 roots) took 6-9 ms of every
    fresh process, a command-line scan's included (issue 14), to verify a chain with one or two of them."""
    if system_store_by_hash():
        context.load_verify_locations(None, str(_DEBIAN_HASHED_DIR))
    else:
        context.set_default_verify_paths()
    hashed = hashed_certifi_dir()
    if hashed is not None:
        context.load_verify_locations(None, str(hashed))
    else:
        context.load_verify_locations(str(certifi_bundle()))


def system_store_by_hash() -> bool:
    """Debian's hashed directory holds the system store, and the environment names no other: OpenSSL's
    `SSL_CERT_FILE` and `SSL_CERT_DIR` are unset or name Debian's own bundle and directory (CI images and
    containers often set them so), whose certificates are the same ones."""
    if not (_DEBIAN_BUNDLE.is_file() and _DEBIAN_HASHED_DIR.is_dir()):
        return False
    return all(
        os.environ.get(variable) is None or os.path.realpath(os.environ[variable]) == os.path.realpath(debian)
        for variable, debian in (("SSL_CERT_FILE", _DEBIAN_BUNDLE), ("SSL_CERT_DIR", _DEBIAN_HASHED_DIR))
    )


def _pem_certificates(bundle: bytes) -> list[bytes]:
    end = b"-----END CERTIFICATE-----"
    return [block[block.index(b"-----BEGIN") :] + end + b"\n" for block in bundle.split(end) if b"-----BEGIN" in block]


def certifi_bundle() -> Path:
    """certifi's bundle (Mozilla's roots): beside its module, where `certifi.where()` finds it in an installed
    package, without importing importlib's resource readers and zipfile for it (~1 ms of a fresh process)."""
    beside = Path(certifi.__file__).with_name("cacert.pem")
    return beside if beside.is_file() else Path(certifi.where())


def system_bundle() -> Path | None:
    """The system's default bundle, as `set_default_verify_paths()` loads it: `SSL_CERT_FILE`, else OpenSSL's
    default file (Debian's /etc/ssl/certs/ca-certificates.crt); None when there is no such file."""
    cafile = ssl.get_default_verify_paths().cafile
    return Path(cafile) if cafile else None


def is_public_root(der: bytes) -> bool:
    """Is this root (DER) in a public store: certifi's bundle (Mozilla's root program) or the system's default
    bundle? The system store holds public roots certifi's bundle lacks (on Debian: DigiCert Global Root CA,
    GlobalSign Root CA, AAA Certificate Services, Go Daddy and Starfield Class 2, Entrust, ...), which browsers
    trust as public: a root is installed locally only when it is found in neither, as the operator's
    WEBSEC_CA_BUNDLE is. Each bundle is read on first need (a leaf beyond 398 days), certifi's first."""
    if der in _bundle_roots(certifi_bundle()):
        return True
    system = system_bundle()
    return system is not None and der in _bundle_roots(system)


def public_roots() -> frozenset[bytes]:
    """The DER of every root `is_public_root` accepts."""
    system = system_bundle()
    return _bundle_roots(certifi_bundle()) | (_bundle_roots(system) if system is not None else frozenset())


@lru_cache(maxsize=4)
def _bundle_roots(bundle: Path) -> frozenset[bytes]:
    """The DER of every certificate in a PEM bundle; empty when it cannot be read."""
    import base64

    try:
        data = bundle.read_bytes()
    except OSError:
        return frozenset()
    ders = set()
    for pem in _pem_certificates(data):
        body = pem[pem.index(b"\n", pem.index(b"-----BEGIN")) : pem.index(b"-----END")]
        ders.add(base64.b64decode(b"".join(body.split())))
    return frozenset(ders)


@lru_cache(maxsize=1)
def hashed_certifi_dir() -> Path | None:
    """certifi's bundle as OpenSSL's hashed directory (`<subject hash>.<n>`, as `openssl rehash` writes it),
    made once per certifi version beside the byte-code; None where it cannot be written (then the bundle is
    loaded whole)."""
    if sys.dont_write_bytecode:
        return None
    bundle = certifi_bundle()
    stat = bundle.stat()
    directory = beside_bytecode(__file__, f"certifi-{certifi.__version__}-{stat.st_size}-{stat.st_mtime_ns}")
    if directory.is_dir():
        return directory
    partial = directory.with_name(f"{directory.name}.{os.getpid()}.tmp")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        seen: dict[int, int] = {}
        for pem in _pem_certificates(bundle.read_bytes()):
            with warnings.catch_warnings():  # X509.get_subject: the subject hash OpenSSL looks issuers up by
                warnings.simplefilter("ignore", DeprecationWarning)
                subject_hash = crypto.load_certificate(crypto.FILETYPE_PEM, pem).get_subject().hash()
            index = seen[subject_hash] = seen.get(subject_hash, -1) + 1
            (partial / f"{subject_hash:08x}.{index}").write_bytes(pem)
        os.replace(partial, directory)  # whole or not at all: another process may be making it too
    except (OSError, crypto.Error, AttributeError, ValueError):
        shutil.rmtree(partial, ignore_errors=True)
        return directory if directory.is_dir() else None
    return directory


def _offer_only(context: SSL.Context, setter: str, choices: tuple[str, ...]) -> None:
    """The first of `choices` the local OpenSSL takes, through `SSL_CTX_set1_curves_list` (groups) or
    `SSL_CTX_set1_sigalgs_list`: pyOpenSSL has no API for either, so its cryptography binding is called on the
    context's SSL_CTX. Left at OpenSSL's defaults when none is taken (tests/scanner/fetch/test_tls_offers.py holds
    the grading hello to Chrome's lists)."""
    for choice in choices:
        if getattr(lib, setter)(context._context, choice.encode()) == 1:
            return
        lib.ERR_clear_error()  # a refused list leaves its reason queued, where pyOpenSSL's next call would find it


@lru_cache(maxsize=8)
def grading_context(ca_bundle: Path | None, verify_at: datetime | None = None) -> SSL.Context:
    """The main handshake: any protocol from TLS 1.0, browser-like cipher order, Chrome's groups and signature
    algorithms (BROWSER_GROUPS, BROWSER_SIGNATURE_ALGORITHMS), verification recorded.

    `verify_at` (whole minutes, UTC) verifies the chain at that time instead of OpenSSL's own reading
    of the system clock: the scan's clock when it is not the system clock (websec_app/clock.py).
    Cached: loading the trust store takes milliseconds, and an SSL_CTX serves many connections."""
    context = make_context(ciphers=BROWSER_LIKE_CIPHERS, verify_with=(ca_bundle,))
    _offer_only(context, "SSL_CTX_set1_curves_list", BROWSER_GROUPS)
    _offer_only(context, "SSL_CTX_set1_sigalgs_list", BROWSER_SIGNATURE_ALGORITHMS)
    ask_for_timestamps(context)
    offer_heartbeat(context)
    if verify_at is not None:
        # X509_VERIFY_PARAM_set_time on the context's store: OpenSSL then judges every certificate's
        # dates at that instant during the handshake (pyOpenSSL wants a naive UTC datetime).
        store = context.get_cert_store()
        if store is None:  # make_context loaded a store above; None would be a pyOpenSSL change
            raise RuntimeError("the TLS context has no certificate store")
        store.set_time(verify_at.astimezone(UTC).replace(tzinfo=None))
    return context


def _der(certificate: crypto.X509) -> bytes:
    """The certificate's DER as OpenSSL holds it (not through cryptography, which may refuse to parse it)."""
    return crypto.dump_certificate(crypto.FILETYPE_ASN1, certificate)


def _pump_out(connection: SSL.Connection, writer: asyncio.StreamWriter) -> None:
    while True:
        try:
            chunk = connection.bio_read(65536)
        except SSL.WantReadError:
            return
        if not chunk:
            return
        writer.write(chunk)


def server_name_indication(host: str) -> bytes | None:
    """RFC 6066 3: SNI carries a DNS name, never an IP literal (browsers send none for IPs)."""
    bare = host.strip("[]")
    if ":" in bare or bare.replace(".", "").isdigit():
        return None
    try:
        return bare.encode("ascii")
    except UnicodeEncodeError:
        return None


async def close_quietly(writer: asyncio.StreamWriter) -> None:
    """Close a probe's connection, waiting at most a second for the peer: a server that never reads its
    close must not hold the scan."""
    writer.close()
    try:
        async with asyncio.timeout(1.0):  # not wait_for: no task of its own
            await writer.wait_closed()
    except (OSError, TimeoutError):
        pass


async def _connect(address: str, port: int, timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.open_connection(address, port)
    except TimeoutError:
        raise ConnectFailed(None, timed_out=True) from None
    except OSError as exc:
        raise ConnectFailed(exc) from None


async def handshake(
    address: str,
    port: int,
    host: str,
    context: SSL.Context,
    timeout: float,
    *,
    request_ocsp: bool = False,
    certificates: bool = True,
    connect_timeout: float | None = None,
    watch_certificate_request: bool = False,
    before_tls: BeforeTls | None = None,
) -> Handshake:
    """Connect to `address`, handshake with SNI `host`, close. Raises HandshakeRejected when the server
    refuses, OSError when it cannot be reached, TimeoutError when `timeout` runs out. With `connect_timeout`,
    a connection not made within it, or refused, or unreachable, raises ConnectFailed. Without
    `certificates` the chains are left empty (a probe needs only the protocol and cipher; copying
    the chains out of OpenSSL is a tenth of a handshake's Python work). With `watch_certificate_request`, whether
    the server asked for a client certificate is noted (a callback per handshake state: the grading handshake's).
    `before_tls(reader, writer)` runs on the open connection before the ClientHello: a protocol's own way into TLS
    (SMTP's STARTTLS, fetch/smtp.py), which raises to stop there."""
    async with asyncio.timeout(timeout):
        if connect_timeout is None:
            reader, writer = await asyncio.open_connection(address, port)
        else:
            reader, writer = await _connect(address, port, connect_timeout)
        try:
            if before_tls is not None:
                await before_tls(reader, writer)
            connection = SSL.Connection(context, None)
            state = _ConnectionState()
            connection.set_app_data(state)
            connection.set_connect_state()
            server_name = server_name_indication(host)
            if server_name is not None:
                connection.set_tlsext_host_name(server_name)
            if request_ocsp:
                connection.request_ocsp()
            if watch_certificate_request:
                connection.set_info_callback(_on_state)
            hello = _HelloReader()
            while True:
                try:
                    connection.do_handshake()
                    done = True
                except SSL.WantReadError:
                    done = False
                except SSL.Error as exc:
                    _pump_out(connection, writer)  # our alert, if OpenSSL wrote one
                    raise HandshakeRejected(
                        _ssl_error_text(exc), certificate_requested=state.certificate_requested
                    ) from None
                _pump_out(connection, writer)
                await writer.drain()
                if done:
                    break
                try:
                    data = await reader.read(65536)
                except (ConnectionResetError, BrokenPipeError) as exc:
                    raise HandshakeRejected(
                        f"the server reset the connection ({exc.strerror or exc})",
                        certificate_requested=state.certificate_requested,
                    ) from None
                if not data:
                    raise HandshakeRejected(
                        "the server closed the connection during the handshake",
                        certificate_requested=state.certificate_requested,
                    )
                hello.feed(data)
                connection.bio_write(data)
            # As OpenSSL's X509 objects, copied out as DER: the checks parse them, and record what they cannot.
            chain = (connection.get_peer_cert_chain() or []) if certificates else []
            verified = (connection.get_verified_chain() or []) if certificates else []
            cipher_bits = connection.get_cipher_bits()
            protocol = connection.get_protocol_version_name()
            result = Handshake(
                protocol=protocol,
                cipher=connection.get_cipher_name(),
                cipher_bits=cipher_bits,
                group=connection.get_group_name(),
                chain=tuple(_der(c) for c in chain),
                verified_chain=tuple(_der(c) for c in verified),
                verify_errors=tuple(state.verify_errors),
                ocsp=state.ocsp,
                secure_renegotiation=hello.secure_renegotiation(protocol),
                client_certificate_requested=state.certificate_requested,
                timestamps=state.timestamps,
                heartbeat=state.heartbeat,
            )
            try:  # a polite close_notify; the server may already be gone
                connection.shutdown()
                _pump_out(connection, writer)
            except SSL.Error:
                pass
            return result
        finally:
            await close_quietly(writer)


class _HelloReader:
    """The server's ServerHello, read from the bytes handed to OpenSSL (pyOpenSSL shows no extension the server
    answered with); once read, or found unreadable, nothing more is looked at."""

    def __init__(self) -> None:
        self._reader: ServerHelloReader | None = ServerHelloReader()
        self._hello: ServerHello | None = None

    def feed(self, data: bytes) -> None:
        if self._reader is None:
            return
        try:
            self._hello = self._reader.feed(data)
        except MalformedHello:
            self._reader = None  # OpenSSL says what is wrong with it
        if self._hello is not None:
            self._reader = None

    def secure_renegotiation(self, protocol: str) -> bool | None:
        if protocol == "TLSv1.3" or self._hello is None or self._hello.extensions is None:
            return None
        return RENEGOTIATION_INFO in self._hello.extensions


def _ssl_error_text(exc: SSL.Error) -> str:
    if isinstance(exc, SSL.SysCallError):
        return "the server closed the connection during the handshake"
    queue = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
    reasons = [str(entry[-1]) for entry in queue if isinstance(entry, tuple) and entry and entry[-1]]
    return "; ".join(reasons) or "the handshake failed"


# -- what the local OpenSSL can offer --------------------------------------------------------------

_SCSV = {b"\x00\xff", b"\x56\x00"}  # signalling values, not cipher suites (RFC 5746, RFC 7507)


def _client_hello_suites(hello: bytes) -> list[bytes]:
    """The cipher suites of a ClientHello record (RFC 8446 4.1.2 / RFC 5246 7.4.1.2)."""
    position = 5 + 4 + 2 + 32  # record header, handshake header, legacy_version, random
    position += 1 + hello[position]  # session id
    length = int.from_bytes(hello[position : position + 2], "big")
    position += 2
    return [hello[position + i : position + i + 2] for i in range(0, length, 2)]


@lru_cache(maxsize=64)
def offer_problem(minimum: int, maximum: int, ciphers: str) -> str | None:
    """Why the local OpenSSL cannot offer this protocol range and cipher string, or None when it can.

    Decided by building a real ClientHello in memory (nothing is sent) and reading its suites:
    OpenSSL silently drops suites whose algorithms this build lacks."""
    library = SSL.OpenSSL_version(SSL.OPENSSL_VERSION).decode()
    try:
        context = make_context(minimum=minimum, maximum=maximum)
    except SSL.Error:
        return f"the local TLS library ({library}) cannot offer this protocol version"
    try:
        context.set_cipher_list(ciphers.encode())
    except SSL.Error:
        return f"the local TLS library ({library}) has no such cipher suite"
    try:
        connection = SSL.Connection(context, None)
        connection.set_connect_state()
        connection.do_handshake()
    except SSL.WantReadError:
        hello = connection.bio_read(65536)
    except SSL.Error as exc:
        return f"the local TLS library ({library}) cannot offer it: {_ssl_error_text(exc)}"
    else:  # pragma: no cover - a handshake cannot complete without a peer
        return "unexpected handshake state"
    suites = [s for s in _client_hello_suites(hello) if s not in _SCSV]
    if maximum < SSL.TLS1_3_VERSION:
        suites = [s for s in suites if s[0] != 0x13]  # TLS 1.3 suites are not usable below 1.3
    if not suites:
        return f"the local TLS library ({library}) offers no such cipher suite"
    return None
