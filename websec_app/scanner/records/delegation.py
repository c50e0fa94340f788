"""A domain's delegation read from the replies of name servers asked directly (fetch/nameservers.py): which servers
the parent zone delegates it to, which the zone's own NS records name, and whether each serves the zone."""

from __future__ import annotations

from collections.abc import Iterable

from ..snapshot import NameserverReply
from .dns_text import nameserver_host

#: At most this many of a domain's name servers are asked whether they serve its zone (Route 53 delegates to four,
#: most providers to two; RFC 2182 asks for at least two, and no resolver reads a list this long to the end).
MAX_NAMESERVERS = 8
#: Of the parent zone's name servers, this many are asked for the delegation, at once: one reply is enough.
PARENT_SERVERS = 2
#: Of a name server's addresses, the first of each family is asked (a provider's server answers alike on each).
ADDRESSES_PER_FAMILY = 1


def parent_zone(domain: str) -> str | None:
    """The zone a registrable domain is delegated from (`com` for example.com, `co.uk` for example.co.uk); None for
    a name of one label."""
    _, dot, parent = domain.rstrip(".").lower().partition(".")
    return parent if dot and parent else None


def delegated_hosts(domain: str, replies: Iterable[NameserverReply]) -> list[str] | None:
    """The name servers the parent zone's servers delegate `domain` to: the referral's NS records (or the answer's,
    from a server that serves the domain's zone too), from the first such reply; None when no parent server gave
    one (none asked, none answered, none knew the domain)."""
    for reply in replies:
        if reply.rdtype != "NS" or reply.name != domain or reply.rcode != "NOERROR":
            continue
        records = reply.referral or (reply.records if reply.authoritative else ())
        hosts = [host for record in records if (host := nameserver_host(record))]
        if hosts:
            return list(dict.fromkeys(hosts))
    return None


def serves_zone(reply: NameserverReply) -> bool:
    """The server answered the SOA question for the zone's apex as the zone's authority: NOERROR, the AA bit, and
    the SOA record (RFC 1034 4.3.2: a server that holds the zone answers from it; any other answer is a referral,
    a refusal or a failure, which a resolver does not take for the zone's data)."""
    return reply.rcode == "NOERROR" and reply.authoritative and bool(reply.records)
