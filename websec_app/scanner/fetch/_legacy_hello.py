"""Hand-built ClientHellos for what the local OpenSSL 3 cannot offer (SSL 3.0; EXPORT, DES, RC4, 3DES).

Built and parsed with tlslite-ng's message classes; see tls_probes.py for why. A module of its own so
that tlslite-ng (~30 ms of imports: its package imports its whole API, asyncore and xmlrpc included)
loads only when such a probe runs, not when the scanner or the command line starts (issue 14).
"""

from __future__ import annotations

import asyncio
import os
import warnings
from typing import TYPE_CHECKING

from ..snapshot import TlsProbe
from ._tls_client import HandshakeRejected, close_quietly, server_name_indication

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

if TYPE_CHECKING:
    from .tls_probes import LegacyHello

_HANDSHAKE, _ALERT = 22, 21  # TLS record content types (RFC 5246 6.2.1)
_SERVER_HELLO = 2
_MAX_RECORD = 2**14 + 2048  # RFC 5246 6.2.3: anything longer is not TLS
_VERSIONS = {(3, 0): "SSLv3", (3, 1): "TLSv1", (3, 2): "TLSv1.1", (3, 3): "TLSv1.2"}
_RENEGOTIATION_SCSV = 0x00FF  # RFC 5746 3.3: sent by every client of that era
_ALERTS = {value: name for name, value in vars(AlertDescription).items() if isinstance(value, int)}


def _client_hello(host: str, hello: LegacyHello) -> bytes:
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


async def hello_probe(name: str, hello: LegacyHello, target: tuple[str, int, str], timeout: float) -> TlsProbe:
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
