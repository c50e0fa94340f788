"""Which client a free scan counts against.

The client is the socket peer, unless the peer is one of `WEBSEC_TRUSTED_PROXIES`; then it
is the nearest address in `X-Forwarded-For` that is not itself a trusted proxy (the list is
read right to left, because every proxy appends the address it received the request from;
entries further left are whatever the client chose to send). IPv6 clients are counted per
/64, the block one subscriber normally gets, so rotating addresses inside it does not reset
the quota.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from starlette.requests import Request

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.9:443"
        text = text.split(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, proxies: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def client_address(request: Request, proxies: Sequence[Network]) -> Address | None:
    peer = _address(request.client.host) if request.client else None
    if peer is None or not proxies or not _trusted(peer, proxies):
        return peer
    forwarded = ",".join(request.headers.getlist("x-forwarded-for"))
    address = peer
    for entry in reversed([part for part in forwarded.split(",") if part.strip()]):
        hop = _address(entry)
        if hop is None:
            break  # garbage: stop at the last hop a trusted proxy vouched for
        address = hop
        if not _trusted(hop, proxies):
            break
    return address


def quota_key(address: Address | None) -> str:
    """The free-scan counter key: the IPv4 address, or the IPv6 /64 network."""
    if address is None:
        return "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
