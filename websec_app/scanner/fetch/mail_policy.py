"""The MTA-STS policy of the scanned domain (RFC 8461 3.3), fetched like a sending mail server would.

Only when `_mta-sts.<domain>` announces a policy: GET https://mta-sts.<domain>/.well-known/mta-sts.txt
through the same pinned, guarded HTTP client as everything else, without following redirects
(3.3: "HTTP 3xx redirects MUST NOT be followed") and at most 64 KiB, while a handshake with
the policy host records its certificate, which senders require to be valid (3.3).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import httpx

from ...settings import Settings
from ..records.dns_text import txt_of
from ..records.mta_sts import MAX_POLICY_BYTES, sts_records
from ..registrable import registrable_domain
from ..snapshot import FetchChain, TlsHandshake
from ..target import ip_literal
from .http import fetch_chain
from .resolve import Pinner, Resolver
from .tls import pinned_tls


def policy_url(domain: str) -> str:
    return f"https://mta-sts.{domain}/.well-known/mta-sts.txt"


async def fetch_mta_sts(
    host: str, resolver: Resolver, pinner: Pinner, client: httpx.AsyncClient, settings: Settings
) -> tuple[FetchChain | None, TlsHandshake | None]:
    """(policy, handshake with the policy host); (None, None) when no policy is announced."""
    if ip_literal(host) is not None:
        return None, None
    domain = registrable_domain(host)
    announced = await resolver.query(f"_mta-sts.{domain}", "TXT")
    if not sts_records(txt_of(announced)):
        return None, None
    no_redirects = replace(settings.limits, max_redirects=0)
    policy, tls = await asyncio.gather(
        fetch_chain(client, pinner, policy_url(domain), no_redirects, max_body=MAX_POLICY_BYTES),
        pinned_tls(f"mta-sts.{domain}", 443, pinner, settings, probes=False),
    )
    return policy, tls
