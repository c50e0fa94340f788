"""Hand-built ClientHellos for what the local OpenSSL 3 cannot offer (SSL 3.0; EXPORT, DES, RC4, 3DES).

The messages are encoded and read by `_hello_codec.py`; see tls_probes.py for why such probes exist.
"""

from __future__ import annotations

import asyncio

from ..snapshot import TlsProbe
from ._hello_codec import (
    ALERT,
    ALERTS,
    HANDSHAKE,
    SERVER_HELLO,
    LegacyHello,
    MalformedHello,
    ServerHello,
    client_hello_record,
    parse_server_hello,
)
from ._tls_client import HandshakeRejected, close_quietly, server_name_indication

_MAX_RECORD = 2**14 + 2048  # RFC 5246 6.2.3: anything longer is not TLS
# A ServerHello is ~40 bytes plus a session id and extensions: well under a kilobyte in practice, and no extension
# a client like ours asks for makes it anywhere near this. The message's 3-byte length could otherwise announce
# 16 MB, which the probe would collect before answering (one probe held 16 MB, +32 MB RSS, for 4.7 s).
_MAX_SERVER_HELLO = 2**14
_VERSIONS = {(3, 0): "SSLv3", (3, 1): "TLSv1", (3, 2): "TLSv1.1", (3, 3): "TLSv1.2"}


def _client_hello(host: str, hello: LegacyHello) -> bytes:
    """The ClientHello record: SNI (when the host is a name), curves, point formats and, for TLS 1.2, the
    signature algorithms; none for SSL 3.0."""
    name = server_name_indication(host) if hello.version > (3, 0) else None
    return client_hello_record(hello.version, [code for code, _ in hello.suites], name)


async def _server_hello(reader: asyncio.StreamReader) -> ServerHello:
    """The server's ServerHello; HandshakeRejected for an alert, a close, or anything else."""
    buffer = bytearray()
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
        if header[0] == ALERT and len(fragment) >= 2:
            raise HandshakeRejected(ALERTS.get(fragment[1], f"alert {fragment[1]}"))
        if header[0] != HANDSHAKE:
            raise HandshakeRejected("the server's answer is not TLS")
        buffer += fragment
        if len(buffer) >= 4:
            if buffer[0] != SERVER_HELLO:
                raise HandshakeRejected("the server did not answer with a ServerHello")
            declared = int.from_bytes(buffer[1:4], "big")
            if declared > _MAX_SERVER_HELLO:
                raise HandshakeRejected(f"the server announced a {declared}-byte ServerHello: not TLS")
            if len(buffer) >= 4 + declared:
                try:
                    return parse_server_hello(bytes(buffer))
                except MalformedHello:
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
    version = answer.version
    offered = dict(hello.suites)
    if not hello.lowest <= version <= hello.version:
        shown = _VERSIONS.get(version, f"version {version[0]}.{version[1]}")
        return TlsProbe(name, "rejected", detail=f"the server answered with {shown}")
    if answer.cipher_suite not in offered:
        return TlsProbe(name, "rejected", detail=f"the server chose suite 0x{answer.cipher_suite:04X}, not offered")
    return TlsProbe(name, "accepted", protocol=_VERSIONS[version], cipher=offered[answer.cipher_suite])
