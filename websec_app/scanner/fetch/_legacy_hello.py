"""Hand-built ClientHellos for what the local OpenSSL 3 cannot offer (SSL 3.0; EXPORT, DES, RC4, 3DES), and
for what pyOpenSSL cannot show: the size of the server's DHE group (its ServerKeyExchange), and what a server that
offers heartbeats answers to one (Heartbleed, which OpenSSL 3 cannot send: it has no heartbeats).

The messages are encoded and read by `_hello_codec.py`; see tls_probes.py for why such probes exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..snapshot import DhGroup, HeartbeatCheck, TlsProbe
from ._hello_codec import (
    ALERT,
    ALERTS,
    CERTIFICATE,
    CERTIFICATE_STATUS,
    HANDSHAKE,
    HEARTBEAT,
    HEARTBEAT_EXTENSION,
    HEARTBEAT_OFFER,
    RENEGOTIATION_INFO,
    SERVER_HELLO,
    SERVER_HELLO_DONE,
    SERVER_KEY_EXCHANGE,
    LegacyHello,
    MalformedHello,
    ServerHello,
    client_hello_record,
    dh_prime_bits,
    heartbeat_request_record,
    heartbeat_response,
    parse_server_hello,
)
from ._tls_client import HandshakeRejected, close_quietly, server_name_indication

_MAX_RECORD = 2**14 + 2048  # RFC 5246 6.2.3: anything longer is not TLS
# A ServerHello is ~40 bytes plus a session id and extensions: well under a kilobyte in practice, and no extension
# a client like ours asks for makes it anywhere near this. The message's 3-byte length could otherwise announce
# 16 MB, which the probe would collect before answering (one probe held 16 MB, +32 MB RSS, for 4.7 s).
_MAX_SERVER_HELLO = 2**14
# The DHE group probe reads on to the ServerKeyExchange, past the Certificate: at most what OpenSSL's own client
# accepts (SSL_CTX_set_max_cert_list, 100 KB by default), so a chain the grading handshake took is read too.
_MAX_CERTIFICATE_LIST = 100 * 1024
# A ServerKeyExchange holds dh_p, dh_g, dh_Ys and a signature: about 1.5 KB for a 4096-bit group.
_MAX_KEY_EXCHANGE = 2**14
_MAX_MESSAGES = 3  # Certificate, CertificateStatus, ServerKeyExchange
_VERSIONS = {(3, 0): "SSLv3", (3, 1): "TLSv1", (3, 2): "TLSv1.1", (3, 3): "TLSv1.2"}


def _client_hello(host: str, hello: LegacyHello, more_extensions: bytes = b"") -> bytes:
    """The ClientHello record: SNI (when the host is a name), curves, point formats and, for TLS 1.2, the
    signature algorithms; none for SSL 3.0."""
    name = server_name_indication(host) if hello.version > (3, 0) else None
    return client_hello_record(hello.version, [code for code, _ in hello.suites], name, None, more_extensions)


class _ServerFlight:
    """The server's handshake messages, in order, as its records bring them: a message may span several records
    and a record hold several messages (RFC 5246 6.2.1). Each message is read only up to the limit its caller
    gives, so what one probe holds is bounded whatever the server announces."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self.writer = writer
        self._buffer = bytearray()

    async def next_record(self) -> tuple[int, bytes]:
        """The next record's content type and fragment, whatever the type."""
        try:
            header = await self._reader.readexactly(5)
            length = int.from_bytes(header[3:5], "big")
            if length > _MAX_RECORD:
                raise HandshakeRejected("the server's answer is not TLS")
            fragment = await self._reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise HandshakeRejected("the server closed the connection during the handshake") from None
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise HandshakeRejected(f"the server reset the connection ({exc.strerror or exc})") from None
        return header[0], fragment

    async def _record(self) -> None:
        kind, fragment = await self.next_record()
        if kind == ALERT and len(fragment) >= 2:
            raise HandshakeRejected(ALERTS.get(fragment[1], f"alert {fragment[1]}"))
        # RFC 5246 6.2.1: handshake fragments are never empty (a server sending empty ones would keep us reading).
        if kind != HANDSHAKE or not fragment:
            raise HandshakeRejected("the server's answer is not TLS")
        self._buffer += fragment

    async def header(self) -> tuple[int, int]:
        """The next message's type and announced length, read as soon as its first four bytes are in."""
        while len(self._buffer) < 4:
            await self._record()
        return self._buffer[0], int.from_bytes(self._buffer[1:4], "big")

    async def message(self, limit: int, what: str) -> bytes:
        """The next message whole (type byte and length first), refused when it announces more than `limit`."""
        _, declared = await self.header()
        if declared > limit:
            raise HandshakeRejected(f"the server announced a {declared}-byte {what}: more than any client reads")
        while len(self._buffer) < 4 + declared:
            await self._record()
        message = bytes(self._buffer[: 4 + declared])
        del self._buffer[: 4 + declared]
        return message


async def _server_hello(flight: _ServerFlight) -> ServerHello:
    """The server's ServerHello; HandshakeRejected for an alert, a close, or anything else."""
    kind, _ = await flight.header()
    if kind != SERVER_HELLO:
        raise HandshakeRejected("the server did not answer with a ServerHello")
    message = await flight.message(_MAX_SERVER_HELLO, "ServerHello")
    try:
        return parse_server_hello(message)
    except MalformedHello:
        raise HandshakeRejected("the server sent a malformed ServerHello") from None


@asynccontextmanager
async def _hello_sent(
    target: tuple[str, int, str], hello: LegacyHello, more_extensions: bytes = b""
) -> AsyncIterator[_ServerFlight]:
    """A connection to the pinned address with the hand-built `hello` sent, as the server's answer to read; it is
    closed after: no handshake is ever completed."""
    address, port, host = target
    reader, writer = await asyncio.open_connection(address, port)  # the pinned address, never a name
    try:
        writer.write(_client_hello(host, hello, more_extensions))
        await writer.drain()
        yield _ServerFlight(reader, writer)
    finally:
        await close_quietly(writer)


def _refusal(hello: LegacyHello, answer: ServerHello) -> str | None:
    """Why the ServerHello is no acceptance of `hello`: a version outside its range, or a suite it did not offer."""
    if not hello.lowest <= answer.version <= hello.version:
        shown = _VERSIONS.get(answer.version, f"version {answer.version[0]}.{answer.version[1]}")
        return f"the server answered with {shown}"
    if answer.cipher_suite not in dict(hello.suites):
        return f"the server chose suite 0x{answer.cipher_suite:04X}, not offered"
    return None


async def hello_probe(name: str, hello: LegacyHello, target: tuple[str, int, str], timeout: float) -> TlsProbe:
    async with asyncio.timeout(timeout), _hello_sent(target, hello) as flight:
        answer = await _server_hello(flight)
    refusal = _refusal(hello, answer)
    if refusal is not None:
        return TlsProbe(name, "rejected", detail=refusal)
    return TlsProbe(
        name,
        "accepted",
        protocol=_VERSIONS[answer.version],
        cipher=dict(hello.suites)[answer.cipher_suite],
        secure_renegotiation=_secure_renegotiation(answer),
    )


def _secure_renegotiation(answer: ServerHello) -> bool | None:
    """RFC 5746 as the ServerHello shows it; None for SSL 3.0, whose ServerHello had no extensions (RFC 5746 4.5
    lets servers answer there, and not all do): a server judged on SSL 3.0 is judged on its TLS answers."""
    if answer.version == (3, 0) or answer.extensions is None:
        return None
    return RENEGOTIATION_INFO in answer.extensions


async def _key_exchange(flight: _ServerFlight) -> bytes | None:
    """The ServerKeyExchange that follows the ServerHello (RFC 5246 7.3: Certificate first, and a
    CertificateStatus when one was asked for, which this hello does not), or None when the server goes
    on without one. Bounded: at most _MAX_MESSAGES messages, each within its limit."""
    for _ in range(_MAX_MESSAGES):
        kind, _ = await flight.header()
        if kind == SERVER_KEY_EXCHANGE:
            return await flight.message(_MAX_KEY_EXCHANGE, "ServerKeyExchange")
        if kind not in (CERTIFICATE, CERTIFICATE_STATUS):
            return None
        await flight.message(_MAX_CERTIFICATE_LIST, "Certificate" if kind == CERTIFICATE else "CertificateStatus")
    return None


async def dh_group_probe(hello: LegacyHello, target: tuple[str, int, str], timeout: float) -> DhGroup | None:
    """The size of the DH prime the server sends to a ClientHello offering only its DHE suites (`hello`): what
    a client offering DHE gets. None when the server accepts none of them (an alert, a close before its
    ServerHello, or a ServerHello outside the hello); a DhGroup without a size when it chose one and its key
    exchange could not be read. Raises OSError or TimeoutError like every probe."""
    async with asyncio.timeout(timeout), _hello_sent(target, hello) as flight:
        try:
            answer = await _server_hello(flight)
        except HandshakeRejected:
            return None
        if _refusal(hello, answer) is not None:
            return None
        protocol, cipher = _VERSIONS[answer.version], dict(hello.suites)[answer.cipher_suite]
        try:
            message = await _key_exchange(flight)
        except HandshakeRejected as exc:
            return DhGroup(None, protocol, cipher, detail=str(exc))
    if message is None:
        return DhGroup(None, protocol, cipher, detail="the server sent no ServerKeyExchange")
    try:
        return DhGroup(dh_prime_bits(message), protocol, cipher)
    except MalformedHello as exc:
        return DhGroup(None, protocol, cipher, detail=f"the server sent a malformed ServerKeyExchange ({exc})")


# -- Heartbleed (CVE-2014-0160) ------------------------------------------------------------------------------------

#: The payload length the probe's first heartbeat declares, with no payload: exactly its own 16 bytes of padding.
#: A vulnerable server copies that many bytes from where the payload would start, so it answers with the probe's own
#: padding and nothing of its memory; RFC 6520 4 has a correct server discard the request, silently.
_DECLARED_BEYOND_PAYLOAD = 16
#: The second heartbeat, well formed: a server that has heartbeats answers it (the first, if at all, before it).
_WELL_FORMED = b"websec heartbeat"
#: How long a server that offered heartbeats is given to answer one; one that answers neither is not waited for.
HEARTBEAT_ANSWER_SECONDS = 2.0
#: The server's first flight: ServerHello, Certificate, CertificateStatus, ServerKeyExchange, CertificateRequest,
#: ServerHelloDone (RFC 5246 7.3); read up to the last, each message within what OpenSSL's client accepts.
_MAX_FLIGHT_MESSAGES = 6
_MAX_HEARTBEAT_RECORDS = 4


async def _until_hello_done(flight: _ServerFlight) -> None:
    for _ in range(_MAX_FLIGHT_MESSAGES):
        kind, _ = await flight.header()
        await flight.message(_MAX_CERTIFICATE_LIST, "handshake message")
        if kind == SERVER_HELLO_DONE:
            return
    raise HandshakeRejected("the server's first flight did not end with a ServerHelloDone")


async def _first_heartbeat(flight: _ServerFlight) -> HeartbeatCheck:
    """What the server answers first to the two heartbeats: a response of the declared length to the one whose
    payload it did not have is Heartbleed."""
    for _ in range(_MAX_HEARTBEAT_RECORDS):
        try:
            kind, fragment = await flight.next_record()
        except HandshakeRejected as exc:
            return HeartbeatCheck("unanswered", detail=str(exc))
        if kind == ALERT and len(fragment) >= 2:
            return HeartbeatCheck("unanswered", detail=f"the server answered with an alert ({ALERTS.get(fragment[1])})")
        response = heartbeat_response(fragment) if kind == HEARTBEAT else None
        if response is None:
            continue
        declared, payload = response
        if declared == _DECLARED_BEYOND_PAYLOAD and payload != _WELL_FORMED[:declared]:
            return HeartbeatCheck(
                "vulnerable",
                detail=(
                    f"the server answered a heartbeat request that declared {declared} bytes of payload and carried "
                    f"none with {declared} bytes: it reads past the request, into its own memory when asked for more"
                ),
            )
        if payload == _WELL_FORMED:
            return HeartbeatCheck("safe", detail="the server answered a well-formed heartbeat and not the other")
    return HeartbeatCheck("unanswered", detail="the server answered neither heartbeat request")


async def heartbleed_probe(hello: LegacyHello, target: tuple[str, int, str], timeout: float) -> HeartbeatCheck:
    """Heartbleed, the way testssl.sh and nmap look for it: a ClientHello offering heartbeats (`hello`'s suites and
    version), the server's flight read to its ServerHelloDone, then two heartbeat requests, before any key is
    exchanged (a vulnerable OpenSSL 1.0.1 answers them then): one declaring a payload it does not carry, one well
    formed. No byte of the server's memory is asked for (see _DECLARED_BEYOND_PAYLOAD). Raises OSError, TimeoutError
    or HandshakeRejected like every probe."""
    async with asyncio.timeout(timeout), _hello_sent(target, hello, HEARTBEAT_OFFER) as flight:
        answer = await _server_hello(flight)
        refusal = _refusal(hello, answer)
        if refusal is not None:
            return HeartbeatCheck("error", detail=refusal)
        if answer.extensions is None or HEARTBEAT_EXTENSION not in answer.extensions:
            return HeartbeatCheck("unanswered", detail="the server offered no heartbeats to this ClientHello")
        await _until_hello_done(flight)
        flight.writer.write(
            heartbeat_request_record(answer.version, b"", _DECLARED_BEYOND_PAYLOAD)
            + heartbeat_request_record(answer.version, _WELL_FORMED)
        )
        await flight.writer.drain()
        try:
            async with asyncio.timeout(HEARTBEAT_ANSWER_SECONDS):
                return await _first_heartbeat(flight)
        except TimeoutError:
            return HeartbeatCheck(
                "unanswered", detail=f"the server answered no heartbeat within {HEARTBEAT_ANSWER_SECONDS:g} seconds"
            )
