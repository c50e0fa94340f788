"""Which client a free scan counts against: the key of `FreeScanCounter.client`.

The client is the socket peer, unless the peer is one of `WEBSEC_TRUSTED_PROXIES`; then it
is the nearest address in `X-Forwarded-For` that is not itself a trusted proxy (the list is
read right to left, because every proxy appends the address it received the request from;
entries further left are whatever the client chose to send). IPv6 clients are counted per
/64, the block one subscriber normally gets, so rotating addresses inside it does not reset
the quota.

The API (`api_routes/routes/scans.py`, from the HTTP request) and the web UI (from the event
websocket's connection) both derive the key here, so a browser and a script on the same
network share one daily quota.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

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


def resolve_client(peer: str | None, forwarded_for: Iterable[str], proxies: Sequence[Network]) -> Address | None:
    """The client address from the socket peer and the `X-Forwarded-For` header values (in order)."""
    address = _address(peer) if peer else None
    if address is None or not proxies or not _trusted(address, proxies):
        return address
    forwarded = ",".join(forwarded_for)
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


def free_scan_client(peer: str | None, forwarded_for: Iterable[str], proxies: Sequence[Network]) -> str:
    """`quota_key(resolve_client(...))`: the counter key for a connection."""
    return quota_key(resolve_client(peer, forwarded_for, proxies))
