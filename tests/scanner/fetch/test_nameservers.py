"""Name servers asked directly (fetch/nameservers.py), against a UDP server on loopback that answers as a test says:
the RD bit clear, what a reply says read from its header even when the rest is cut or garbled, and no verdict from a
server that is silent, closed or not public."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import dns.flags
import dns.message
import dns.rcode
import dns.rrset
import pytest

from websec_app.scanner.fetch.nameservers import NOT_PUBLIC, NameserverAsker
from websec_app.settings import Settings

Answer = Callable[[dns.message.Message], bytes | None]


class _Server(asyncio.DatagramProtocol):
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.queries: list[dns.message.Message] = []
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        query = dns.message.from_wire(data)
        self.queries.append(query)
        reply = self.answer(query)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)


@pytest.fixture
async def udp_server() -> AsyncIterator[Callable[[Answer], Awaitable[tuple[_Server, int]]]]:
    """Starts a server on 127.0.0.1 that answers each query with `answer(query)` (None: no reply): (server, port)."""
    transports = []

    async def start(answer: Answer) -> tuple[_Server, int]:
        loop = asyncio.get_running_loop()
        transport, server = await loop.create_datagram_endpoint(lambda: _Server(answer), local_addr=("127.0.0.1", 0))
        transports.append(transport)
        return server, transport.get_extra_info("sockname")[1]

    yield start
    for transport in transports:
        transport.close()


def _asker(port: int, *, allow_private: bool = True, seconds: float = 1.0) -> NameserverAsker:
    return NameserverAsker(Settings(allow_private_targets=allow_private, nameserver_port=port), seconds=seconds)


def _authoritative_soa(query: dns.message.Message) -> bytes:
    response = dns.message.make_response(query)
    response.flags |= dns.flags.AA
    response.answer.append(
        dns.rrset.from_text(query.question[0].name, 300, "IN", "SOA", "ns1.example.net. h.example.com. 7 1 1 1 1")
    )
    return response.to_wire()


async def test_the_question_goes_without_recursion_and_the_answer_is_read(udp_server) -> None:
    server, port = await udp_server(_authoritative_soa)
    reply = await _asker(port).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    [query] = server.queries
    assert not query.flags & dns.flags.RD  # a name server is asked what it holds, not to look it up
    assert query.edns == 0 and query.payload == 1232
    assert (reply.rcode, reply.authoritative, reply.error) == ("NOERROR", True, None)
    assert reply.records == ("ns1.example.net. h.example.com. 7 1 1 1 1",)


async def test_a_refusal_and_a_referral(udp_server) -> None:
    def refuse(query: dns.message.Message) -> bytes:
        response = dns.message.make_response(query)
        response.set_rcode(dns.rcode.REFUSED)
        return response.to_wire()

    _, port = await udp_server(refuse)
    reply = await _asker(port).ask("ns.old", "127.0.0.1", "example.com", "SOA")
    assert (reply.rcode, reply.authoritative, reply.records) == ("REFUSED", False, ())

    def refer(query: dns.message.Message) -> bytes:
        response = dns.message.make_response(query)
        response.authority.append(
            dns.rrset.from_text("example.com.", 300, "IN", "NS", "b.ns.example.", "a.ns.example.")
        )
        return response.to_wire()

    _, port = await udp_server(refer)
    reply = await _asker(port).ask("a.gtld-servers.net", "127.0.0.1", "example.com", "NS")
    assert (reply.rcode, reply.authoritative, reply.referral) == ("NOERROR", False, ("a.ns.example.", "b.ns.example."))


async def test_a_reply_cut_garbled_or_truncated_is_no_answer_to_judge(udp_server) -> None:
    def garbled(query: dns.message.Message) -> bytes:
        wire = _authoritative_soa(query)
        return wire[: -(11 + 7)]  # the OPT record (11 bytes) gone, and the SOA record cut short

    _, port = await udp_server(garbled)
    reply = await _asker(port).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    assert (reply.rcode, reply.answered) == ("ERROR", False)  # not a lame server: resolvers would try again
    assert reply.error is not None and reply.error.startswith("a reply that does not parse")

    def truncated(query: dns.message.Message) -> bytes:
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA | dns.flags.TC
        return response.to_wire()

    _, port = await udp_server(truncated)
    reply = await _asker(port).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    assert (reply.rcode, reply.error) == ("ERROR", "a truncated reply (TC), not asked again over TCP")


async def test_silence_a_closed_port_and_a_refused_address_are_no_answer(udp_server) -> None:
    quiet, port = await udp_server(lambda query: None)
    silent = await _asker(port, seconds=0.2).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    assert (silent.rcode, silent.error, silent.answered) == (
        "TIMEOUT",
        "no reply to 2 queries within 0.2 s each",
        False,
    )
    assert len(quiet.queries) == 2  # a datagram can be lost: sent again once before the server is called silent
    assert quiet.queries[0].id != quiet.queries[1].id

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as closed:
        closed.bind(("127.0.0.1", 0))
        closed_port = closed.getsockname()[1]
    refused = await _asker(closed_port).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    assert (refused.rcode, refused.answered) == ("ERROR", False)
    assert refused.error is not None and refused.error.startswith("no reply: ")

    server, port = await udp_server(_authoritative_soa)
    guarded = await _asker(port, allow_private=False).ask("ns1.example.net", "127.0.0.1", "example.com", "SOA")
    assert (guarded.rcode, guarded.error) == ("ERROR", NOT_PUBLIC)
    assert server.queries == []  # refused before a datagram was sent


def test_the_port_comes_from_the_environment_and_0_asks_none() -> None:
    assert Settings.from_env({}).nameserver_port == 53
    assert Settings.from_env({"WEBSEC_NAMESERVER_PORT": "5353"}).nameserver_port == 5353
    assert NameserverAsker.for_settings(dataclasses.replace(Settings(), nameserver_port=0)) is None
    assert NameserverAsker.for_settings(Settings()) is not None
