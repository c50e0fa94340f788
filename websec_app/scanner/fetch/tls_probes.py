"""Extra handshakes that find what a server accepts, not just what it prefers.

One handshake per protocol version (minimum = maximum = that version) and one per weak
cipher family (TLS 1.0-1.2 offering only that family, data/weak_ciphers.json), with pyOpenSSL.

What the local OpenSSL 3 cannot offer at all (SSL 3.0; EXPORT, single-DES, RC4 and 3DES suites)
is probed the way testssl.sh does: one ClientHello offering only that family's IANA code points
(or, for SSL 3.0, version 3.0 with the suites of its era), then the server's first answer is read.
A ServerHello choosing one of the offered suites at an offered version is an acceptance; an
alert or a closed connection a refusal. No handshake is completed and no key is exchanged,
so no cryptography the local library lacks is needed. The ClientHello is built and the
ServerHello parsed by tlslite-ng's message classes (the library tlsfuzzer builds its
ClientHellos with), over the same pinned asyncio connection and timeout as every probe.
Considered and not chosen: nassl's legacy OpenSSL 1.0.2 client (blocking C, a thread per
probe, a second OpenSSL in the process, for a handshake whose end we do not need) and a
full tlslite-ng handshake (no EXPORT or DES suites at all).

A probe that cannot be offered either way is recorded as "not testable" with the reason, and no
packet is sent for it: absence of evidence is never reported as a pass.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from dataclasses import dataclass
from functools import lru_cache

from OpenSSL import SSL

from ..data import CipherFamily, weak_cipher_families
from ..snapshot import TlsProbe
from ._tls_client import (
    ALL_CIPHERS,
    PROTOCOL_VERSIONS,
    HandshakeRejected,
    close_quietly,
    handshake,
    make_context,
    offer_problem,
    server_name_indication,
)

with warnings.catch_warnings():  # tlslite/__init__ imports asyncore, deprecated since Python 3.11
    warnings.simplefilter("ignore", DeprecationWarning)
    from tlslite.constants import AlertDescription, ECPointFormat, GroupName, HashAlgorithm, SignatureAlgorithm
    from tlslite.extensions import (
        ECPointFormatsExtension,
        SignatureAlgorithmsExtension,
        SNIExtension,
        SupportedGroupsExtension,
        TLSExtension,
    )
    from tlslite.messages import ClientHello, ServerHello
    from tlslite.utils.codec import Parser

#: Protocol versions probed, newest first (RFC 8996 deprecates TLS 1.0 and 1.1; RFC 7568 SSL 3.0).
PROBED_PROTOCOLS = ("TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3")


# -- hand-built ClientHellos (what OpenSSL 3 cannot offer) ----------------------------------------------

_HANDSHAKE, _ALERT = 22, 21  # TLS record content types (RFC 5246 6.2.1)
_SERVER_HELLO = 2
_MAX_RECORD = 2**14 + 2048  # RFC 5246 6.2.3: anything longer is not TLS
_VERSIONS = {(3, 0): "SSLv3", (3, 1): "TLSv1", (3, 2): "TLSv1.1", (3, 3): "TLSv1.2"}
_RENEGOTIATION_SCSV = 0x00FF  # RFC 5746 3.3: sent by every client of that era
# SSL 3.0 era suites besides the weak families' (RFC 3268 AES, RFC 4492 ECDHE): a server that speaks
# SSL 3.0 at all picks one of these or a weak one.
_SSL3_SUITES = (0x002F, 0x0035, 0x0033, 0x0039, 0x0032, 0x0038, 0xC013, 0xC014, 0xC009, 0xC00A, 0x0041, 0x0084)
_ALERTS = {value: name for name, value in vars(AlertDescription).items() if isinstance(value, int)}


@dataclass(frozen=True)
class _Hello:
    """What one hand-built ClientHello offers: client_version, the lowest acceptable answer, the suites."""

    version: tuple[int, int]
    lowest: tuple[int, int]
    suites: tuple[tuple[int, str], ...]  # (code point, IANA name)


def _client_hello(host: str, hello: _Hello) -> bytes:
    """The ClientHello record. Extensions only for TLS (SSL 3.0 has none, RFC 6101): SNI, the curves
    and point format ECDHE suites need (RFC 8422 5.1), signature algorithms for TLS 1.2 (RFC 5246 7.4.1.4.1)."""
    extensions: list[TLSExtension] | None = None
    if hello.version > (3, 0):
        extensions = []
        name = server_name_indication(host)
        if name is not None:
            extensions.append(SNIExtension().create(bytearray(name)))
        groups = [GroupName.x25519, GroupName.secp256r1, GroupName.secp384r1, GroupName.secp521r1]
        extensions.append(SupportedGroupsExtension().create(groups))
        extensions.append(ECPointFormatsExtension().create([ECPointFormat.uncompressed]))
        if hello.version >= (3, 3):
            hashes = (HashAlgorithm.sha256, HashAlgorithm.sha384, HashAlgorithm.sha512, HashAlgorithm.sha1)
            signatures = (SignatureAlgorithm.rsa, SignatureAlgorithm.ecdsa, SignatureAlgorithm.dsa)
            extensions.append(SignatureAlgorithmsExtension().create([(h, a) for h in hashes for a in signatures]))
    suites = [code for code, _ in hello.suites] + [_RENEGOTIATION_SCSV]
    message = ClientHello().create(
        hello.version, bytearray(os.urandom(32)), bytearray(0), suites, extensions=extensions
    )
    body = bytes(message.write())
    # RFC 5246 Appendix E.1: {3, 1} on the record layer for compatibility, except for SSL 3.0 itself.
    record_version = (3, 0) if hello.version == (3, 0) else (3, 1)
    return bytes([_HANDSHAKE, *record_version]) + len(body).to_bytes(2, "big") + body


async def _server_hello(reader: asyncio.StreamReader) -> ServerHello:
    """The server's ServerHello; HandshakeRejected for an alert, a close, or anything else."""
    buffer = b""
    while True:
        try:
            header = await reader.readexactly(5)
            length = int.from_bytes(header[3:5], "big")
            if length > _MAX_RECORD:
                raise HandshakeRejected("the server's answer is not TLS")
            fragment = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise HandshakeRejected("the server closed the connection during the handshake") from None
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise HandshakeRejected(f"the server reset the connection ({exc.strerror or exc})") from None
        if header[0] == _ALERT and len(fragment) >= 2:
            raise HandshakeRejected(_ALERTS.get(fragment[1], f"alert {fragment[1]}").replace("_", " "))
        if header[0] != _HANDSHAKE:
            raise HandshakeRejected("the server's answer is not TLS")
        buffer += fragment
        if len(buffer) >= 4:
            if buffer[0] != _SERVER_HELLO:
                raise HandshakeRejected("the server did not answer with a ServerHello")
            if len(buffer) >= 4 + int.from_bytes(buffer[1:4], "big"):
                try:
                    return ServerHello().parse(Parser(bytearray(buffer[1:])))
                except (SyntaxError, ValueError, IndexError, AssertionError):
                    raise HandshakeRejected("the server sent a malformed ServerHello") from None


async def _hello_probe(name: str, hello: _Hello, target: tuple[str, int, str], timeout: float) -> TlsProbe:
    address, port, host = target
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(address, port)  # the pinned address, never a name
        try:
            writer.write(_client_hello(host, hello))
            await writer.drain()
            answer = await _server_hello(reader)
        finally:
            await close_quietly(writer)
    version = tuple(answer.server_version)
    offered = dict(hello.suites)
    if not hello.lowest <= version <= hello.version:
        shown = _VERSIONS.get(version, f"version {version[0]}.{version[1]}")
        return TlsProbe(name, "rejected", detail=f"the server answered with {shown}")
    if answer.cipher_suite not in offered:
        return TlsProbe(name, "rejected", detail=f"the server chose suite 0x{answer.cipher_suite:04X}, not offered")
    return TlsProbe(name, "accepted", protocol=_VERSIONS[version], cipher=offered[answer.cipher_suite])


@lru_cache(maxsize=32)
def _context(minimum: int, maximum: int, ciphers: str) -> SSL.Context:
    return make_context(minimum=minimum, maximum=maximum, ciphers=ciphers)


async def _probe(
    name: str,
    minimum: int,
    maximum: int,
    ciphers: str,
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    hello: _Hello | None = None,
) -> TlsProbe:
    """A full pyOpenSSL handshake; when the local OpenSSL cannot offer it, the hand-built `hello`."""
    problem = offer_problem(minimum, maximum, ciphers)
    if problem is not None and hello is None:
        return TlsProbe(name, "not_testable", detail=problem)
    address, port, host = target
    async with limit:
        try:
            if hello is not None and problem is not None:
                return await _hello_probe(name, hello, target, timeout)
            result = await handshake(address, port, host, _context(minimum, maximum, ciphers), timeout)
        except HandshakeRejected as exc:
            return TlsProbe(name, "rejected", detail=str(exc))
        except TimeoutError:
            return TlsProbe(name, "error", detail=f"no answer within {timeout:.0f} seconds")
        except OSError as exc:
            return TlsProbe(name, "error", detail=f"could not connect: {exc.strerror or exc}")
    return TlsProbe(name, "accepted", protocol=result.protocol, cipher=result.cipher)


async def probe_protocols(
    target: tuple[str, int, str], timeout: float, limit: asyncio.Semaphore
) -> tuple[TlsProbe, ...]:
    """One probe per version in PROBED_PROTOCOLS, in that order."""
    probes = []
    for name in PROBED_PROTOCOLS:
        version = PROTOCOL_VERSIONS[name]
        ciphers = ALL_CIPHERS  # TLS 1.3 suites are configured apart and always offered with 1.3
        hello = _ssl3_hello() if name == "SSLv3" else None
        probes.append(_probe(name, version, version, ciphers, target, timeout, limit, hello))
    return tuple(await asyncio.gather(*probes))


@lru_cache(maxsize=1)
def _ssl3_hello() -> _Hello:
    """SSL 3.0 offered with every suite of its era, weak families included (RFC 6101 A.6)."""
    weak = [suite for family in weak_cipher_families() for suite in family.iana]
    named = tuple((code, f"0x{code:04X}") for code in _SSL3_SUITES)
    return _Hello((3, 0), (3, 0), tuple(dict([*named, *weak]).items()))


async def probe_cipher_families(
    target: tuple[str, int, str],
    timeout: float,
    limit: asyncio.Semaphore,
    families: tuple[CipherFamily, ...] | None = None,
) -> tuple[TlsProbe, ...]:
    """One probe per weak family: TLS 1.0 to 1.2 (these suites do not exist in TLS 1.3)."""
    chosen = weak_cipher_families() if families is None else families
    probes = [
        _probe(
            family.id,
            SSL.TLS1_VERSION,
            SSL.TLS1_2_VERSION,
            family.openssl,
            target,
            timeout,
            limit,
            _Hello((3, 3), (3, 1), family.iana) if family.iana else None,
        )
        for family in chosen
    ]
    return tuple(await asyncio.gather(*probes))
