"""The Heartbleed probe (fetch/_legacy_hello.py heartbleed_probe) against hostile or odd servers: it must end, within
its bounds, with a verdict that says why, whatever the server sends after offering heartbeats."""

from __future__ import annotations

import warnings

import pytest

from tests.scanner.fetch.scripted_server import serve_once
from websec_app.scanner.fetch.tls_probes import probe_heartbleed

with warnings.catch_warnings():  # tlslite/__init__ imports asyncore, deprecated since Python 3.11
    warnings.simplefilter("ignore", DeprecationWarning)
    from tlslite.constants import HeartbeatMode  # type: ignore[import-untyped]
    from tlslite.extensions import HeartbeatExtension  # type: ignore[import-untyped]
    from tlslite.messages import ServerHello  # type: ignore[import-untyped]


def _record(content_type: int, body: bytes) -> bytes:
    return bytes([content_type, 3, 3]) + len(body).to_bytes(2, "big") + body


def _flight(*, heartbeat: bool = True, done: bool = True, padding_messages: int = 0) -> bytes:
    """A TLS 1.2 server's first flight: a ServerHello choosing ECDHE-RSA-AES128-GCM-SHA256 (offering heartbeats or
    not), `padding_messages` small Certificate messages, and a ServerHelloDone."""
    extensions = [HeartbeatExtension().create(HeartbeatMode.PEER_ALLOWED_TO_SEND)] if heartbeat else None
    hello = bytes(ServerHello().create((3, 3), bytearray(32), bytearray(0), 0xC02F, extensions=extensions).write())
    messages = hello + b"\x0b\x00\x00\x03\x00\x00\x00" * padding_messages
    if done:
        messages += b"\x0e\x00\x00\x00"
    return _record(22, messages)


def _heartbeat_response(payload: bytes) -> bytes:
    return _record(24, b"\x02" + len(payload).to_bytes(2, "big") + payload + bytes(16))


async def _probed(answer: bytes) -> tuple[str, str | None]:
    server, port = await serve_once(answer)
    try:
        check = await probe_heartbleed(("127.0.0.1", port, "odd.test"), "TLSv1.2", 5.0)
    finally:
        server.close()
    return check.verdict, check.detail


async def test_heartbeats_that_answer_neither_request_are_read_four_at_most() -> None:
    answer = _flight() + _heartbeat_response(b"something else") * 50
    assert await _probed(answer) == ("unanswered", "the server answered neither heartbeat request")


async def test_a_first_flight_that_does_not_end_is_not_read_for_ever() -> None:
    verdict, detail = await _probed(_flight(done=False, padding_messages=40))
    assert verdict == "error" and detail == "the server's first flight did not end with a ServerHelloDone"


async def test_a_server_that_answers_no_heartbeat_is_given_two_seconds() -> None:
    verdict, detail = await _probed(_flight())
    assert (verdict, detail) == ("unanswered", "the server answered no heartbeat within 2 seconds")


async def test_a_server_that_offers_no_heartbeats_to_the_probe_is_not_sent_any() -> None:
    verdict, detail = await _probed(_flight(heartbeat=False))
    assert (verdict, detail) == ("unanswered", "the server offered no heartbeats to this ClientHello")


async def test_an_alert_for_an_answer_is_said() -> None:
    verdict, detail = await _probed(_flight() + _record(21, b"\x02\x0a"))
    assert (verdict, detail) == ("unanswered", "the server answered with an alert (unexpected message)")


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "the server's answer is not TLS"),
        (_record(22, b"\x02\x00\x00\x04abcd"), "the server sent a malformed ServerHello"),
    ],
    ids=["http", "malformed-hello"],
)
async def test_an_answer_that_is_no_tls_server_is_an_error(answer: bytes, said: str) -> None:
    assert await _probed(answer) == ("error", said)
