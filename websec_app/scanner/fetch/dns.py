"""DNS records for the `dns` section, queried concurrently with the HTTP and TLS work.

Which names and types are asked is data (`dns_queries`); each answer, including a
failure, lands in the snapshot, so one failed lookup is a finding, never a failed scan.
"""

from __future__ import annotations

import asyncio

from ..registrable import registrable_domain
from ..snapshot import DnsAnswer, DnsSnapshot
from ..target import ip_literal
from .resolve import Resolver


def dns_queries(host: str) -> list[tuple[str, str]]:
    """The (name, type) pairs one scan asks about the web host and its registrable domain."""
    queries = [(host, "A"), (host, "AAAA"), (host, "CNAME")]
    domain = registrable_domain(host)
    if domain != host:
        queries += [(domain, "A")]
    return queries


async def fetch_dns(host: str, resolver: Resolver) -> DnsSnapshot:
    if ip_literal(host) is not None:
        return DnsSnapshot(host=host)
    pairs = dns_queries(host)
    answers: list[DnsAnswer] = await asyncio.gather(*(resolver.query(name, rdtype) for name, rdtype in pairs))
    return DnsSnapshot(host=host, answers=tuple(answers))
