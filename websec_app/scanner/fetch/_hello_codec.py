"""The TLS handshake messages a legacy probe needs, on the wire: a ClientHello out, a ServerHello in, and for
the DHE group probe the ServerKeyExchange's prime.

RFC 5246 7.4.1.2-7.4.1.3 and 7.4.3 (and RFC 6101 5.6.1 for SSL 3.0, which has no extensions). Written here rather
than with tlslite-ng's message classes because importing tlslite-ng cost every command-line scan 40-50 ms
(~15 % of its start-up, issue 14) for ~60 lines of encoding; tests/scanner/fetch/test_hello_codec.py holds
these bytes to tlslite-ng's own parser, and the legacy-TLS fixture servers are tlslite-ng.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

HANDSHAKE, ALERT = 22, 21  # TLS record content types (RFC 5246 6.2.1)
CLIENT_HELLO, SERVER_HELLO = 1, 2  # handshake types (RFC 5246 7.4)
CERTIFICATE, SERVER_KEY_EXCHANGE, CERTIFICATE_STATUS = 11, 12, 22  # RFC 5246 7.4, RFC 6066 8
RENEGOTIATION_SCSV = 0x00FF  # RFC 5746 3.3: sent by every client of that era
RENEGOTIATION_INFO = 0xFF01  # RFC 5746 3.2: the extension a server that supports secure renegotiation answers with
SIGNED_CERTIFICATE_TIMESTAMP = 18  # RFC 6962 3.3.1: a client's request for SCTs, and the server's list of them
HEARTBEAT_EXTENSION = 15  # RFC 6520 2: the heartbeat extension, offered by a client, echoed by a server that has it
HEARTBEAT = 24  # RFC 6520 3: the heartbeat record content type
SERVER_HELLO_DONE = 14  # RFC 5246 7.4.5
#: RFC 6520 2: HeartbeatMode peer_not_allowed_to_send: the server may not send us requests (we answer none).
HEARTBEAT_OFFER = HEARTBEAT_EXTENSION.to_bytes(2, "big") + b"\x00\x01\x02"

# Extension types and values (IANA TLS registries).
_SERVER_NAME, _SUPPORTED_GROUPS, _EC_POINT_FORMATS, _SIGNATURE_ALGORITHMS = 0, 10, 11, 13
_GROUPS = (29, 23, 24, 25)  # x25519, secp256r1, secp384r1, secp521r1
_UNCOMPRESSED_POINTS = 0
_HASHES = (4, 5, 6, 2)  # sha256, sha384, sha512, sha1
_SIGNATURES = (1, 3, 2)  # rsa, ecdsa, dsa

#: Alert descriptions (RFC 5246 7.2, RFC 8446 6), as the probe reports them.
ALERTS = {
    0: "close notify",
    10: "unexpected message",
    20: "bad record mac",
    22: "record overflow",
    40: "handshake failure",
    42: "bad certificate",
    47: "illegal parameter",
    50: "decode error",
    51: "decrypt error",
    70: "protocol version",
    71: "insufficient security",
    80: "internal error",
    86: "inappropriate fallback",
    90: "user canceled",
    109: "missing extension",
    110: "unsupported extension",
    112: "unrecognized name",
}


@dataclass(frozen=True)
class LegacyHello:
    """What one hand-built ClientHello offers: client_version, the lowest acceptable answer, the suites."""

    version: tuple[int, int]
    lowest: tuple[int, int]
    suites: tuple[tuple[int, str], ...]  # (code point, IANA name)


class MalformedHello(ValueError):
    """A ServerHello too short or inconsistent to read."""


def _vector(data: bytes, length_bytes: int) -> bytes:
    return len(data).to_bytes(length_bytes, "big") + data


def _extension(kind: int, data: bytes) -> bytes:
    return kind.to_bytes(2, "big") + _vector(data, 2)


def _extensions(server_name: bytes | None, version: tuple[int, int]) -> bytes:
    """SNI, the curves and point format ECDHE suites need (RFC 8422 5.1), and for TLS 1.2 the signature
    algorithms (RFC 5246 7.4.1.4.1)."""
    parts = []
    if server_name is not None:
        entry = b"\x00" + _vector(server_name, 2)  # host_name (RFC 6066 3)
        parts.append(_extension(_SERVER_NAME, _vector(entry, 2)))
    groups = b"".join(group.to_bytes(2, "big") for group in _GROUPS)
    parts.append(_extension(_SUPPORTED_GROUPS, _vector(groups, 2)))
    parts.append(_extension(_EC_POINT_FORMATS, _vector(bytes([_UNCOMPRESSED_POINTS]), 1)))
    if version >= (3, 3):
        pairs = bytes(byte for hash_ in _HASHES for signature in _SIGNATURES for byte in (hash_, signature))
        parts.append(_extension(_SIGNATURE_ALGORITHMS, _vector(pairs, 2)))
    return b"".join(parts)


def client_hello_record(
    version: tuple[int, int],
    suites: list[int],
    server_name: bytes | None,
    random: bytes | None = None,
    more_extensions: bytes = b"",
) -> bytes:
    """One TLS record holding a ClientHello offering `suites` (the renegotiation SCSV added) at `version`;
    extensions only above SSL 3.0, which has none (RFC 6101), `more_extensions` (encoded) after the usual ones."""
    body = bytes(version) + (random if random is not None else os.urandom(32))
    body += _vector(b"", 1)  # no session to resume
    body += _vector(b"".join(code.to_bytes(2, "big") for code in [*suites, RENEGOTIATION_SCSV]), 2)
    body += _vector(b"\x00", 1)  # compression: null only
    if version > (3, 0):
        body += _vector(_extensions(server_name, version) + more_extensions, 2)
    message = bytes([CLIENT_HELLO]) + _vector(body, 3)
    # RFC 5246 Appendix E.1: {3, 1} on the record layer for compatibility, except for SSL 3.0 itself.
    record_version = (3, 0) if version == (3, 0) else (3, 1)
    return bytes([HANDSHAKE, *record_version]) + _vector(message, 2)


@dataclass(frozen=True)
class ServerHello:
    version: tuple[int, int]
    cipher_suite: int
    # The extension types the server answered with (none before TLS 1.0); None when they cannot be read, which
    # a probe that needs only the version and suite lets pass.
    extensions: frozenset[int] | None = frozenset()
    # The signed_certificate_timestamp extension's data (an SCT list, RFC 6962 3.3), None when not sent.
    timestamps: bytes | None = None


def _extension_block(block: bytes, what: str) -> dict[int, bytes]:
    """Each extension's data by type, from an extensions block (its 2-byte length first), RFC 5246 7.4.1.4 and
    RFC 8446 4.2."""
    if len(block) < 2 or int.from_bytes(block[:2], "big") != len(block) - 2:
        raise MalformedHello(f"the {what}'s extensions do not add up to their length")
    found, at = {}, 2
    while at < len(block):
        if len(block) < at + 4:
            raise MalformedHello(f"a {what} extension runs past its end")
        end = at + 4 + int.from_bytes(block[at + 2 : at + 4], "big")
        found[int.from_bytes(block[at : at + 2], "big")] = block[at + 4 : end]
        at = end
    if at != len(block):
        raise MalformedHello(f"a {what} extension runs past its end")
    return found


def parse_server_hello(message: bytes) -> ServerHello:
    """The version, suite and extension types of a ServerHello handshake message (type byte and 3-byte length
    first)."""
    if len(message) < 4 or message[0] != SERVER_HELLO:
        raise MalformedHello("not a ServerHello")
    length = int.from_bytes(message[1:4], "big")
    body = message[4 : 4 + length]
    if len(body) != length or length < 2 + 32 + 1 + 2 + 1:
        raise MalformedHello("the ServerHello is too short")
    session_id_length = body[34]
    at = 35 + session_id_length
    if session_id_length > 32 or len(body) < at + 3:
        raise MalformedHello("the ServerHello's session id runs past its end")
    rest = body[at + 3 :]  # after the suite and the compression method: nothing, or the extensions
    try:
        found = _extension_block(rest, "ServerHello") if rest else {}
    except MalformedHello:
        return ServerHello((body[0], body[1]), int.from_bytes(body[at : at + 2], "big"), None)
    suite = int.from_bytes(body[at : at + 2], "big")
    return ServerHello((body[0], body[1]), suite, frozenset(found), found.get(SIGNED_CERTIFICATE_TIMESTAMP))


def leaf_entry_timestamps(message: bytes) -> bytes | None:
    """The SCT list the server sent with its own certificate in a TLS 1.3 Certificate handshake message (type
    byte and 3-byte length first), RFC 8446 4.4.2: the first CertificateEntry's signed_certificate_timestamp
    extension (RFC 6962 3.3.1 carried as TLS 1.3 puts it); None when it sent none."""
    if len(message) < 4 or message[0] != CERTIFICATE:
        raise MalformedHello("not a Certificate message")
    body = message[4 : 4 + int.from_bytes(message[1:4], "big")]
    if not body:
        raise MalformedHello("the Certificate message is empty")
    at = 1 + body[0] + 3  # past certificate_request_context<0..2^8-1> and the list's 3-byte length
    if len(body) < at + 3:
        return None  # no certificate at all: nothing sent with one
    at += 3 + int.from_bytes(body[at : at + 3], "big")  # past the leaf's cert_data<1..2^24-1>
    if len(body) < at + 2:
        raise MalformedHello("the Certificate message's first entry runs past its end")
    block = body[at : at + 2 + int.from_bytes(body[at : at + 2], "big")]
    if len(block) < 2 + int.from_bytes(block[:2], "big"):
        raise MalformedHello("the Certificate message's first entry runs past its end")
    return _extension_block(block, "certificate entry").get(SIGNED_CERTIFICATE_TIMESTAMP)


def signed_timestamps(data: bytes) -> list[tuple[bytes, int]]:
    """(log id, milliseconds since 1970) of each SCT in a SignedCertificateTimestampList (RFC 6962 3.3): a 2-byte
    length, then each SCT behind its own 2-byte length; a v1 SCT (3.2) is the version byte, the 32-byte log id and
    the 8-byte timestamp, then its extensions and signature (not read: only the log can be told, without its key).
    An SCT of another version is skipped, as clients skip it."""
    if len(data) < 2 or int.from_bytes(data[:2], "big") != len(data) - 2:
        raise MalformedHello("the SCT list does not add up to its length")
    found, at = [], 2
    while at < len(data):
        end = at + 2 + int.from_bytes(data[at : at + 2], "big")
        if end > len(data):
            raise MalformedHello("an SCT runs past the end of its list")
        sct = data[at + 2 : end]
        if len(sct) >= 41 and sct[0] == 0:
            found.append((sct[1:33], int.from_bytes(sct[33:41], "big")))
        at = end
    return found


class ServerHelloReader:
    """The ServerHello at the start of what a server sends, fed as it arrives (its handshake records, RFC 5246
    6.2.1: the message may span records, and a record hold more). Each byte is looked at once, and at most `limit`
    bytes of handshake messages are kept: a server dribbling tiny records costs no more than one that does not."""

    def __init__(self, limit: int = 2**14) -> None:
        self._limit = limit
        self._pending = bytearray()  # received, not yet a whole record
        self._messages = bytearray()  # the handshake records' contents so far

    def feed(self, data: bytes) -> ServerHello | None:
        """The ServerHello once it is all in, else None; MalformedHello when the answer is not one (or runs past
        the limit)."""
        self._pending += data
        while len(self._pending) >= 5:
            if self._pending[0] != HANDSHAKE:
                raise MalformedHello("the server's first answer is not a handshake")
            length = int.from_bytes(self._pending[3:5], "big")
            if len(self._pending) < 5 + length:
                break
            self._messages += self._pending[5 : 5 + length]
            del self._pending[: 5 + length]
            if len(self._messages) >= 4:
                end = 4 + int.from_bytes(self._messages[1:4], "big")
                if end > self._limit:
                    raise MalformedHello("the server announced a ServerHello longer than any client reads")
                if len(self._messages) >= end:
                    return parse_server_hello(bytes(self._messages[:end]))
        if len(self._pending) > self._limit + 5:
            raise MalformedHello("the server's record is longer than any client reads")
        return None


def first_server_hello(received: bytes) -> ServerHello | None:
    """The ServerHello at the start of `received`, or None while it is not all in (ServerHelloReader at once)."""
    return ServerHelloReader().feed(received)


def dh_prime_bits(message: bytes) -> int:
    """The size in bits of dh_p, the prime of a DHE ServerKeyExchange handshake message (type byte and 3-byte
    length first). RFC 5246 7.4.3: ServerDHParams is dh_p<1..2^16-1>, dh_g<1..2^16-1>, dh_Ys<1..2^16-1>, then
    the signature (not read); all three must be there and non-empty. Leading zero bytes of dh_p do not count."""
    if len(message) < 4 or message[0] != SERVER_KEY_EXCHANGE:
        raise MalformedHello("not a ServerKeyExchange")
    length = int.from_bytes(message[1:4], "big")
    body = message[4 : 4 + length]
    if len(body) != length:
        raise MalformedHello("the ServerKeyExchange is shorter than it says")
    at, fields = 0, []
    for _ in range(3):  # dh_p, dh_g, dh_Ys
        size = int.from_bytes(body[at : at + 2], "big")
        if len(body) < at + 2 + size or size == 0:
            raise MalformedHello("the ServerKeyExchange's DH parameters run past its end")
        fields.append(body[at + 2 : at + 2 + size])
        at += 2 + size
    bits = int.from_bytes(fields[0], "big").bit_length()
    if bits < 2:
        raise MalformedHello("the ServerKeyExchange's DH prime is not a prime")
    return bits


def heartbeat_request_record(version: tuple[int, int], payload: bytes, declared: int | None = None) -> bytes:
    """A heartbeat_request record (RFC 6520 4): the payload, 16 bytes of padding (the least allowed), and the payload
    length `declared` (the payload's own when None). A length larger than the payload is what Heartbleed
    (CVE-2014-0160) answers: a vulnerable server copies that many bytes from where the payload starts."""
    length = len(payload) if declared is None else declared
    message = b"\x01" + length.to_bytes(2, "big") + payload + bytes(16)
    return bytes([HEARTBEAT, *version]) + _vector(message, 2)


def heartbeat_response(fragment: bytes) -> tuple[int, bytes] | None:
    """(payload length, payload) of a heartbeat_response record's fragment; None when it is not one."""
    if len(fragment) < 3 or fragment[0] != 2:
        return None
    length = int.from_bytes(fragment[1:3], "big")
    return length, fragment[3 : 3 + length]
