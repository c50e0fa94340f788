"""One DNS question over UDP, without dnspython's resolver machinery: the common case made cheap.

dnspython's async resolver spent about a quarter of a scan's CPU (docs/performance.md): per query a
Resolution object, a Message built and rendered with EDNS, an asyncio datagram transport, and the
whole reply parsed (authority and additional sections included). Here the query is a few bytes
packed by hand, sent from its own non-blocking socket (a fresh random source port per query, as
dnspython does: off-path spoofing needs to guess both it and the random ID), read with one
`add_reader` callback, and only the header, question and answer section of the reply are parsed,
by dnspython. Anything unusual (a truncated reply that needs TCP, an rcode other than NOERROR or
NXDOMAIN, no reply in time, a malformed reply) returns None: the caller then asks dnspython's
resolver, so every such case keeps exactly its former outcome.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import struct
from typing import Literal

import dns.exception
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

_FLAGS_RD_CD = 0x0110  # Recursion Desired; Checking Disabled (see resolve._make_resolver)


def opt_1232(*, dnssec_ok: bool) -> bytes:
    """An EDNS0 (RFC 6891) OPT record: root name, type 41, UDP payload 1232 (DNS flag day 2020: no fragments), the
    DO bit (RFC 3225) set or not."""
    return b"\x00" + struct.pack("!HHIH", 41, 1232, 0x00008000 if dnssec_ok else 0, 0)


_OPT_DO_1232 = opt_1232(dnssec_ok=True)
_QR = 0x80
TC = 0x02  # the truncation bit, in the header's third byte
_NOERROR, _NXDOMAIN = 0, 3


def question_wire(name: str, rdtype: int) -> bytes | None:
    """The question section for `name`, or None when the name needs dnspython's own encoding
    (escapes, non-ASCII labels) or is not a valid DNS name."""
    labels = name.rstrip(".").split(".") if name.strip(".") else []
    wire = bytearray()
    for label in labels:
        if not label or len(label) > 63 or "\\" in label or not label.isascii():
            return None
        wire.append(len(label))
        wire += label.encode("ascii")
    wire.append(0)
    if len(wire) > 255:
        return None
    return bytes(wire) + struct.pack("!HH", rdtype, dns.rdataclass.IN)


class _Reply:
    """Waits on one query's socket for a datagram that answers it (same ID and question)."""

    def __init__(self, sock: socket.socket, query_id: bytes, question: bytes) -> None:
        self.sock = sock
        self.query_id = query_id
        self.question = question.lower()
        self.done: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def readable(self) -> None:
        while not self.done.done():
            try:
                data = self.sock.recv(65535)
            except BlockingIOError:
                return
            except OSError as exc:  # ICMP port unreachable and the like
                self.done.set_exception(exc)
                return
            if (
                data[:2] == self.query_id
                and len(data) >= 12
                and data[2] & _QR
                and data[4:6] == b"\x00\x01"
                and data[12 : 12 + len(self.question)].lower() == self.question
            ):
                self.done.set_result(data)
            # anything else (a late or forged datagram) is ignored, as dnspython ignores it


class UdpAnswer:
    """A NOERROR reply read as dnspython's resolver reads it (its `Answer`: the reply's CNAME chain
    resolved to the answer RRset), without importing the resolver."""

    __slots__ = ("response", "rrset")

    def __init__(self, response: dns.message.QueryMessage) -> None:
        self.response = response
        self.rrset: dns.rrset.RRset | None = response.resolve_chaining().answer


async def exchange(address: str, port: int, question: bytes, timeout: float, *, flags: int, opt: bytes) -> bytes | None:
    """The reply to one query (`flags` in its header, `opt` its EDNS record) sent from a socket of its own; None when
    no reply came within `timeout`. OSError when the datagram could not be sent or the server's host says the port
    is closed (ICMP port unreachable): the caller's resolver then judges the server (`ask`)."""
    query_id = secrets.token_bytes(2)
    header = query_id + struct.pack("!HHHHH", flags, 1, 0, 0, 1)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    loop = asyncio.get_running_loop()
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        sock.connect((address, port))  # a connected UDP socket only accepts the server's datagrams
        sock.send(header + question + opt)
        reply = _Reply(sock, query_id, question)
        loop.add_reader(sock.fileno(), reply.readable)
        try:
            async with asyncio.timeout(timeout):
                data = await reply.done
        except TimeoutError:
            return None
        finally:
            loop.remove_reader(sock.fileno())
    return data


async def ask(
    address: str, port: int, name: str, rdtype: str, timeout: float
) -> UdpAnswer | Literal["NXDOMAIN"] | None:
    """The answer to a NOERROR reply, "NXDOMAIN" for a valid NXDOMAIN reply; None when the caller must
    ask dnspython's resolver instead (see the module's docstring)."""
    rdtype_value = dns.rdatatype.from_text(rdtype)
    question = question_wire(name, rdtype_value)
    if question is None:
        return None
    try:
        data = await exchange(address, port, question, timeout, flags=_FLAGS_RD_CD, opt=_OPT_DO_1232)
    except OSError:
        return None
    if data is None or data[2] & TC or data[3] & 0x0F not in (_NOERROR, _NXDOMAIN):
        return None
    # Only the answer section is read: the authority and additional sections (SOA, NSEC, the OPT
    # record) inform no check, and parsing them was most of the cost.
    try:
        response = dns.message.from_wire(data[:8] + b"\x00\x00\x00\x00" + data[12:], ignore_trailing=True)
        if not isinstance(response, dns.message.QueryMessage):
            return None
        if response.rcode() == dns.rcode.NXDOMAIN:
            response.resolve_chaining()  # validated as dnspython's resolver validates it
            return "NXDOMAIN"
        return UdpAnswer(response)
    except (dns.exception.DNSException, ValueError, KeyError):
        return None
