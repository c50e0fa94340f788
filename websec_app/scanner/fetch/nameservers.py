"""Name servers asked directly, without recursion: does each one the domain is delegated to serve its zone?

A resolver asks whichever of the domain's name servers it picks. One that does not serve the zone (a lame delegation,
RFC 9499: an old provider's, a typo, a zone deleted at the provider) answers REFUSED, SERVFAIL or a referral, so
lookups there fail or wait; and at a DNS provider that lets any account create any zone, whoever creates the domain's
zone there answers for the domain ("Sitting Ducks", Infoblox and Eclypsium, 2024). A recursive lookup cannot tell:
the resolver moves on to a server that answers. So each server is asked itself, with the RD bit clear, for the
domain's SOA, and a server of the parent zone for the domain's NS records (the delegation the registry publishes,
which resolvers follow and the zone's own NS records may not repeat).

Every address passes the scan's guard first (fetch/guard.py): the names come from the zone, and a zone may name
an internal address. Each query is a datagram from a socket of its own (`_dns_udp.exchange`), within
`NAMESERVER_SECONDS`, sent again once when it gets no reply: a server that answers neither is silent.
`Settings.nameserver_port` is where they are asked: 53; 0 asks none (tests ask their own servers' port).

Which servers are asked, and when (`ask_nameservers`, one of the DNS fetch's follow-ups: fetch/dns.py): each the
zone's NS records name, as soon as its addresses are in, and those only the parent zone's delegation names, once a
server of the parent zone said which.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Protocol

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype

from ...settings import Settings
from ...wording import counted
from ..errors import TargetRefused
from ..records.delegation import ADDRESSES_PER_FAMILY, MAX_NAMESERVERS, PARENT_SERVERS, delegated_hosts, parent_zone
from ..records.dns_text import failed, nameserver_hosts
from ..snapshot import DnsAnswer, NameserverReply
from ..target import ip_literal
from . import _dns_udp
from .guard import ensure_allowed

#: How long one name server is given to answer a datagram (an authoritative server answers in tens of milliseconds
#: from anywhere, anycast or not; one that takes longer is as good as silent to a resolver, which gives it ~1 s), and
#: how many datagrams it is sent when none is answered: a datagram can be lost, and a server is said to be silent
#: only when it answered none of them (checks/dns_delegation.py).
NAMESERVER_SECONDS = 0.8
NAMESERVER_TRIES = 2
#: A referral with its glue fits 1232 bytes without TCP. No DO bit: the SOA and the referral are read for who
#: answers, not for their signatures.
_OPT_1232 = _dns_udp.opt_1232(dnssec_ok=False)
#: Shown for an address the guard refuses: not the address's kind, which would make the scanner an oracle for the
#: zone's internal names (as guard.ensure_allowed words it).
NOT_PUBLIC = "not asked: its address is not a public one"


class Answers(Protocol):
    """What the DNS fetch's answers give the name servers' questions (fetch/dns.py `_Answers`): the resolver's
    answers, asked once each, and the direct questions, asked once each and recorded as failed when the fetch is cut."""

    nameservers: NameserverAsker | None
    replies: dict[tuple[str, str, str, str], NameserverReply]
    unaddressed: dict[str, NameserverReply]

    async def ask(self, name: str, rdtype: str) -> DnsAnswer: ...

    async def ask_server(self, server: str, address: str, name: str, rdtype: str) -> NameserverReply: ...

    def get(self, name: str, rdtype: str) -> DnsAnswer | None: ...


class NameserverAsker:
    """Asks name servers directly for one scan (`Settings.nameserver_port`; None from `for_settings` when 0)."""

    def __init__(
        self, settings: Settings, *, seconds: float = NAMESERVER_SECONDS, tries: int = NAMESERVER_TRIES
    ) -> None:
        self.port = settings.nameserver_port
        self.allow_private = settings.allow_private_targets
        self.seconds = seconds
        self.tries = tries

    @classmethod
    def for_settings(cls, settings: Settings) -> NameserverAsker | None:
        return cls(settings) if settings.nameserver_port else None

    async def ask(self, server: str, address: str, name: str, rdtype: str) -> NameserverReply:
        """Never raises: what went wrong is the reply's rcode ("TIMEOUT", "ERROR") and error."""
        reply = NameserverReply(server, address, name, rdtype)
        try:
            ensure_allowed(address, allow_private=self.allow_private)
        except (TargetRefused, ValueError):
            return _failed(reply, "ERROR", NOT_PUBLIC)
        question = _dns_udp.question_wire(name, dns.rdatatype.from_text(rdtype))
        if question is None:
            return _failed(reply, "ERROR", "not asked: the name cannot be sent as it is")
        for _ in range(self.tries):  # each try a datagram of its own, from a new port with a new ID
            try:
                data = await _dns_udp.exchange(address, self.port, question, self.seconds, flags=0, opt=_OPT_1232)
            except OSError as exc:
                return _failed(reply, "ERROR", f"no reply: {exc.strerror or exc}")
            if data is not None:
                return _read(reply, data)
        return _failed(
            reply, "TIMEOUT", f"no reply to {counted(self.tries, 'query', 'queries')} within {self.seconds:g} s each"
        )


def _failed(reply: NameserverReply, rcode: str, error: str) -> NameserverReply:
    return NameserverReply(reply.server, reply.address, reply.name, reply.rdtype, rcode, error=error)


def _read(reply: NameserverReply, data: bytes) -> NameserverReply:
    """The reply's rcode and AA bit, the answer's records of the name and type asked, and for an NS question the NS
    records of a referral's authority section. The sections nothing reads are not parsed (their counts zeroed, the
    rest ignored): the additional section (glue, the OPT record), and for the SOA question the authority section, were
    most of the cost (bench/scan_bench.py, profiled). A reply that does not parse, or one truncated (TC) short of the
    answer, is no answer to judge (ERROR): a resolver would ask again over TCP, which this does not."""
    rcode = dns.rcode.to_text(dns.rcode.from_flags(struct.unpack("!H", data[2:4])[0], 0))
    authoritative = bool(data[2] & (dns.flags.AA >> 8))
    authority_count = data[8:10] if reply.rdtype == "NS" else b"\x00\x00"
    try:
        wire = data[:8] + authority_count + b"\x00\x00" + data[12:]
        message = dns.message.from_wire(wire, ignore_trailing=True, raise_on_truncation=False)
    except (dns.exception.DNSException, ValueError, KeyError) as exc:
        return _failed(reply, "ERROR", f"a reply that does not parse ({exc})")
    name = dns.name.from_text(reply.name)
    rdtype = dns.rdatatype.from_text(reply.rdtype)
    answer = message.get_rrset(message.answer, name, dns.rdataclass.IN, rdtype)
    referral = message.get_rrset(message.authority, name, dns.rdataclass.IN, dns.rdatatype.NS)
    if data[2] & _dns_udp.TC and answer is None and referral is None:
        return _failed(reply, "ERROR", "a truncated reply (TC), not asked again over TCP")
    return NameserverReply(
        reply.server,
        reply.address,
        reply.name,
        reply.rdtype,
        rcode,
        authoritative,
        records=tuple(sorted(rdata.to_text() for rdata in answer)) if answer is not None else (),
        referral=tuple(sorted(rdata.to_text() for rdata in referral)) if referral is not None else (),
    )


# -- which servers are asked, and when ---------------------------------------------------------------------------------


async def _serves_zone(server: str, domain: str, answers: Answers) -> None:
    """`server` asked, at the first of its IPv4 and of its IPv6 addresses, for the domain's SOA. One without an
    address is recorded as not asked, and why: its lookups answered with none (NOADDRESS: resolvers cannot ask it
    either), or one failed (no verdict)."""
    a, aaaa = await asyncio.gather(answers.ask(server, "A"), answers.ask(server, "AAAA"))
    addresses = [r for r in a.records if ip_literal(r)][:ADDRESSES_PER_FAMILY]
    addresses += [r for r in aaaa.records if ip_literal(r)][:ADDRESSES_PER_FAMILY]
    if not addresses:
        lookup_failed = next((lookup for lookup in (a, aaaa) if failed(lookup)), None)
        if lookup_failed is not None:
            why = f"not asked: its address could not be looked up ({lookup_failed.error or lookup_failed.rcode})"
            unasked = NameserverReply(server, "", domain, "SOA", "ERROR", error=why)
        else:
            none = "the name does not exist" if a.rcode == "NXDOMAIN" else "no A or AAAA record"
            unasked = NameserverReply(server, "", domain, "SOA", "NOADDRESS", error=none)
        answers.unaddressed.setdefault(server, unasked)
    await asyncio.gather(*(answers.ask_server(server, address, domain, "SOA") for address in addresses))


async def _delegation_asked(server: str, domain: str, answers: Answers) -> None:
    """A server of the parent zone asked, at its first address (IPv4; IPv6 only for a server without one: one lookup
    fewer for every registry's server), for the domain's NS records (a referral)."""
    addresses = [r for r in (await answers.ask(server, "A")).records if ip_literal(r)]
    if not addresses:
        addresses = [r for r in (await answers.ask(server, "AAAA")).records if ip_literal(r)]
    if addresses:
        await answers.ask_server(server, addresses[0], domain, "NS")


async def ask_nameservers(domain: str, answers: Answers) -> None:
    """Whether each name server the domain is delegated to serves its zone (a lame delegation does not): those its
    NS records name, asked as soon as their addresses are in, and those only the parent zone's delegation names,
    once a parent server said which (records/delegation.py). A domain that is no zone apex (no NS records of its
    own: alice.github.io) has no delegation of its own to check."""
    zone_servers = nameserver_hosts(answers.get(domain, "NS"))[:MAX_NAMESERVERS]
    if answers.nameservers is None or not zone_servers:
        return

    async def delegated_only() -> None:
        parent = parent_zone(domain)
        parent_servers = nameserver_hosts(answers.get(parent, "NS") if parent else None)[:PARENT_SERVERS]
        await asyncio.gather(*(_delegation_asked(server, domain, answers) for server in parent_servers))
        delegated = delegated_hosts(domain, answers.replies.values()) or []
        others = [server for server in delegated if server not in zone_servers][:MAX_NAMESERVERS]
        await asyncio.gather(*(_serves_zone(server, domain, answers) for server in others))

    await asyncio.gather(delegated_only(), *(_serves_zone(server, domain, answers) for server in zone_servers))
