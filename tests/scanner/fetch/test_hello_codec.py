"""The legacy probes' ClientHello and ServerHello on the wire (fetch/_hello_codec.py), held to tlslite-ng's own
parser and encoder: the reference implementation the fixture servers speak."""

from __future__ import annotations

import warnings

import pytest

from tests.clock import TEST_NOW
from tests.fixtures.pki import Pki, ct_log_id, sct_list
from websec_app.scanner.fetch._hello_codec import (
    HEARTBEAT_OFFER,
    RENEGOTIATION_INFO,
    RENEGOTIATION_SCSV,
    SIGNED_CERTIFICATE_TIMESTAMP,
    MalformedHello,
    ServerHelloReader,
    client_hello_record,
    dh_prime_bits,
    first_server_hello,
    heartbeat_request_record,
    heartbeat_response,
    leaf_entry_timestamps,
    parse_server_hello,
    signed_timestamps,
)

with warnings.catch_warnings():  # tlslite/__init__ imports asyncore, deprecated since Python 3.11
    warnings.simplefilter("ignore", DeprecationWarning)
    from tlslite.constants import CertificateType, ExtensionType, HeartbeatMessageType, HeartbeatMode
    from tlslite.extensions import RenegotiationInfoExtension, SNIExtension, TLSExtension
    from tlslite.messages import Certificate, ClientHello, Heartbeat, ServerHello, ServerKeyExchange
    from tlslite.utils.codec import Parser
    from tlslite.x509certchain import X509CertChain

SUITES = [0x000A, 0x0005, 0x0003, 0xC012]


def _parsed(record: bytes) -> ClientHello:
    assert record[0] == 22
    assert int.from_bytes(record[3:5], "big") == len(record) - 5
    assert record[5] == 1  # ClientHello
    return ClientHello().parse(Parser(bytearray(record[6:])))


@pytest.mark.parametrize("version", [(3, 1), (3, 2), (3, 3)])
def test_a_tls_client_hello_parses_with_tlslite_and_says_what_it_offers(version) -> None:
    random = bytes(range(32))
    record = client_hello_record(version, SUITES, b"legacy.example", random=random)
    hello = _parsed(record)
    assert tuple(hello.client_version) == version
    assert bytes(hello.random) == random
    assert hello.cipher_suites == [*SUITES, RENEGOTIATION_SCSV]
    assert hello.compression_methods == [0]
    assert bytes(hello.server_name) == b"legacy.example"
    assert record[1:3] == bytes([3, 1])  # the record layer says TLS 1.0 for compatibility (RFC 5246 E.1)
    kinds = {extension.extType for extension in hello.extensions}
    assert {ExtensionType.supported_groups, ExtensionType.ec_point_formats} <= kinds
    assert (ExtensionType.signature_algorithms in kinds) == (version == (3, 3))


def test_an_ssl3_client_hello_has_no_extensions_and_an_ssl3_record() -> None:
    record = client_hello_record((3, 0), SUITES, b"legacy.example")
    hello = _parsed(record)
    assert tuple(hello.client_version) == (3, 0) and record[1:3] == bytes([3, 0])
    assert hello.extensions is None


def test_no_server_name_is_sent_for_an_address() -> None:
    hello = _parsed(client_hello_record((3, 3), SUITES, None))
    assert hello.server_name == bytearray(0) or not hello.server_name


@pytest.mark.parametrize("session_id", [b"", bytes(32)])
def test_a_server_hello_from_tlslite_reads_back_its_version_and_suite(session_id: bytes) -> None:
    message = ServerHello().create((3, 1), bytearray(32), bytearray(session_id), 0x000A, extensions=None)
    parsed = parse_server_hello(bytes(message.write()))
    assert parsed.version == (3, 1) and parsed.cipher_suite == 0x000A


def _server_hello(extensions: list[object] | None) -> bytes:
    return bytes(ServerHello().create((3, 3), bytearray(32), bytearray(32), 0xC02F, extensions=extensions).write())


def test_the_extensions_a_server_answers_with_are_read() -> None:
    renegotiation = RenegotiationInfoExtension().create(bytearray(0))
    both = parse_server_hello(_server_hello([SNIExtension().create(), renegotiation]))
    assert both.extensions == {ExtensionType.server_name, RENEGOTIATION_INFO}
    assert parse_server_hello(_server_hello(None)).extensions == frozenset()  # a server of before RFC 5746


def test_an_extensions_block_that_does_not_add_up_is_unread_not_refused() -> None:
    """The version and suite still stand (a legacy probe needs no more); what the extensions say is unknown."""
    message = bytearray(_server_hello([RenegotiationInfoExtension().create(bytearray(0))]))
    message[-3] = 9  # the extension's length now runs past the message
    parsed = parse_server_hello(bytes(message))
    assert (parsed.version, parsed.cipher_suite, parsed.extensions) == ((3, 3), 0xC02F, None)


# -- Certificate Transparency SCTs sent in the handshake (RFC 6962 3.3.1) ---------------------------------------------


def _sct_extension(logs: int) -> TLSExtension:
    return TLSExtension(extType=SIGNED_CERTIFICATE_TIMESTAMP).create(bytearray(sct_list(logs, TEST_NOW)))


def _logged(data: bytes | None) -> list[tuple[bytes, int]]:
    assert data is not None
    return signed_timestamps(data)


STAMP = int(TEST_NOW.timestamp() * 1000)


def test_the_scts_of_a_tls12_server_hello_are_read() -> None:
    hello = parse_server_hello(_server_hello([_sct_extension(2)]))
    assert _logged(hello.timestamps) == [(ct_log_id(1), STAMP), (ct_log_id(2), STAMP)]
    assert parse_server_hello(_server_hello(None)).timestamps is None


def _tls13_certificate(pki: Pki, extensions: list[object]) -> bytes:
    from cryptography.hazmat.primitives import serialization

    chain = X509CertChain()
    issued = pki.issue("valid", ("sct.test",))
    chain.parsePemList(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in issued.chain).decode())
    message = Certificate(CertificateType.x509, version=(3, 4))
    message.create(chain, bytearray(b"request"))
    message.certificate_list[0].extensions = extensions
    return bytes(message.write())


def test_the_scts_sent_with_the_certificate_in_tls13_are_read_from_its_first_entry(pki: Pki) -> None:
    """RFC 8446 4.4.2: a TLS 1.3 server sends its SCT list as an extension of its own certificate's entry, which
    tlslite-ng writes here (the request context is not empty, so its length must be skipped)."""
    message = _tls13_certificate(pki, [SNIExtension().create(), _sct_extension(3)])
    assert [log for log, _ in _logged(leaf_entry_timestamps(message))] == [ct_log_id(n) for n in (1, 2, 3)]
    assert leaf_entry_timestamps(_tls13_certificate(pki, [])) is None


@pytest.mark.parametrize(
    "message",
    [b"\x0b\x00\x00\x00", b"\x02\x00\x00\x01\x00", b"\x0b\x00\x00\x08\x00\x00\x00\x05\x00\x00\x09ab"],
    ids=["empty", "not-a-certificate", "entry-past-its-end"],
)
def test_a_malformed_tls13_certificate_message_is_refused(message: bytes) -> None:
    with pytest.raises(MalformedHello):
        leaf_entry_timestamps(message)


def test_an_sct_list_is_read_by_log_and_time_and_an_sct_of_another_version_skipped() -> None:
    listed = sct_list(2, TEST_NOW)
    v2 = b"\x01" + bytes(60)
    mixed = listed[2:] + len(v2).to_bytes(2, "big") + v2
    mixed = len(mixed).to_bytes(2, "big") + mixed
    assert signed_timestamps(mixed) == [(ct_log_id(1), STAMP), (ct_log_id(2), STAMP)]
    assert signed_timestamps(b"\x00\x00") == []
    for broken in (listed[:-1], listed + b"\x00", b"\x00\x05\x00\x09abc"):
        with pytest.raises(MalformedHello):
            signed_timestamps(broken)


# -- heartbeats (RFC 6520), for the Heartbleed probe -------------------------------------------------------------------


def test_a_hello_offering_heartbeats_parses_with_tlslite() -> None:
    hello = _parsed(client_hello_record((3, 3), SUITES, b"old.example", more_extensions=HEARTBEAT_OFFER))
    (offer,) = [e for e in hello.extensions if e.extType == ExtensionType.heartbeat]
    assert offer.mode == HeartbeatMode.PEER_NOT_ALLOWED_TO_SEND  # we answer no request of the server's


def test_a_well_formed_heartbeat_request_parses_with_tlslite_and_its_answer_reads_back() -> None:
    record = heartbeat_request_record((3, 3), b"websec")
    assert record[:3] == bytes([24, 3, 3]) and int.from_bytes(record[3:5], "big") == len(record) - 5
    request = Heartbeat().parse(Parser(bytearray(record[5:])))
    assert request.message_type == HeartbeatMessageType.heartbeat_request and bytes(request.payload) == b"websec"
    assert len(request.padding) == 16  # the least RFC 6520 4 allows
    answer = bytes(request.create_response().write())
    assert heartbeat_response(answer) == (6, b"websec")
    assert heartbeat_response(record[5:]) is None  # a request is no response


def test_a_request_declaring_more_than_it_carries_says_so() -> None:
    record = heartbeat_request_record((3, 1), b"", declared=16)
    assert record[5:8] == b"\x01\x00\x10" and len(record) == 5 + 3 + 16  # no payload, only the padding
    # what a correct implementation makes of it: a payload of our padding and no padding left, under the 16 bytes
    # RFC 6520 4 requires, so the request is discarded (tlslite-ng does); a vulnerable one echoes those 16 bytes
    parsed = Heartbeat().parse(Parser(bytearray(record[5:])))
    assert bytes(parsed.payload) == bytes(16) and len(parsed.padding) == 0


def _records(message: bytes, *cuts: int) -> bytes:
    parts = [message[a:b] for a, b in zip((0, *cuts), (*cuts, len(message)), strict=True)]
    return b"".join(b"\x16\x03\x03" + len(part).to_bytes(2, "big") + part for part in parts)


def test_the_first_server_hello_is_read_across_records_once_it_is_all_in() -> None:
    message = _server_hello([RenegotiationInfoExtension().create(bytearray(0))])
    flight = _records(message, 3, 40) + b"\x16\x03\x03\x00\x04\x0b\x00\x00\x00"  # then a Certificate
    for end in (0, 4, 5, 12, len(flight) - 20):
        assert first_server_hello(flight[:end]) is None, end
    assert first_server_hello(flight) == parse_server_hello(message)
    with pytest.raises(MalformedHello):
        first_server_hello(b"\x15\x03\x03\x00\x02\x02\x28")  # an alert first
    with pytest.raises(MalformedHello):
        first_server_hello(_records(b"\x0b\x00\x00\x00"))  # not a ServerHello


def test_a_server_hello_dribbled_in_one_byte_records_is_read_as_it_arrives() -> None:
    message = _server_hello([RenegotiationInfoExtension().create(bytearray(0))])
    flight = _records(message, *range(1, len(message)))  # a record per byte
    reader = ServerHelloReader()
    answers = [reader.feed(flight[i : i + 1]) for i in range(len(flight))]
    assert answers[:-1] == [None] * (len(flight) - 1) and answers[-1] == parse_server_hello(message)


def test_a_reader_keeps_no_more_than_its_limit() -> None:
    with pytest.raises(MalformedHello):  # a ServerHello announcing 16 MB
        ServerHelloReader(limit=1024).feed(_records(b"\x02\xff\xff\xff" + bytes(100)))
    with pytest.raises(MalformedHello):  # one record longer than the limit, still arriving
        ServerHelloReader(limit=1024).feed(b"\x16\x03\x03\xff\xff" + bytes(2000))


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"\x01\x00\x00\x00",
        b"\x02\x00\x00\x05\x03\x01abc",
        b"\x02\x00\x00\x26" + bytes([3, 1]) + bytes(32) + b"\x40",
    ],
)
def test_a_malformed_server_hello_is_refused(message: bytes) -> None:
    with pytest.raises(MalformedHello):
        parse_server_hello(message)


@pytest.mark.parametrize(("prime", "bits"), [(2**1023 + 1155, 1024), (2**2047 + 9, 2048), (2**511 + 3, 512)])
def test_the_dh_prime_of_a_tlslite_server_key_exchange_is_measured(prime: int, bits: int) -> None:
    message = ServerKeyExchange(0x009E, (3, 3)).createDH(prime, 2, prime // 3)
    message.hashAlg, message.signAlg, message.signature = 4, 1, bytearray(256)  # sha256, rsa
    assert dh_prime_bits(bytes(message.write())) == bits


def test_leading_zero_bytes_of_the_prime_do_not_count() -> None:
    body = b"\x00\x03\x00\x01\x01" + b"\x00\x01\x02" + b"\x00\x01\x05"  # dh_p = 0x000101: 9 bits
    assert dh_prime_bits(b"\x0c" + len(body).to_bytes(3, "big") + body) == 9


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"\x0b\x00\x00\x00",  # a Certificate
        b"\x0c\x00\x00\x10\x00\x02",  # shorter than it says
        b"\x0c\x00\x00\x04\xff\xff\x00\x00",  # dh_p claims 65535 bytes
        b"\x0c\x00\x00\x05\x00\x01\x17\x00\x00",  # an empty dh_g, no dh_Ys
        b"\x0c\x00\x00\x09\x00\x01\x01\x00\x01\x02\x00\x01\x03",  # dh_p = 1
    ],
)
def test_a_malformed_server_key_exchange_is_refused(message: bytes) -> None:
    with pytest.raises(MalformedHello):
        dh_prime_bits(message)
