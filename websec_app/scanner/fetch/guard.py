"""The SSRF guard: which addresses the scanner may connect to.

Only globally routable unicast addresses are allowed by default. Addresses that embed an
IPv4 address (IPv4-mapped, IPv4-compatible, 6to4, NAT64, Teredo) are judged by the
address they embed, so `::ffff:127.0.0.1` or `2002:7f00:1::` cannot smuggle loopback in.
Names are checked after resolution, for every hop, and the connection then goes to the
checked address (see pinning.py), so DNS rebinding cannot switch it afterwards.
"""

from __future__ import annotations

import ipaddress

from ..errors import TargetRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Named for the message; ipaddress' is_global already excludes all of these.
_CLOUD_METADATA = {
    ipaddress.ip_address("169.254.169.254"): "the cloud metadata service (AWS, GCP, Azure, OpenStack)",
    ipaddress.ip_address("169.254.170.2"): "the AWS ECS task metadata service",
    ipaddress.ip_address("100.100.100.200"): "the Alibaba Cloud metadata service",
    ipaddress.ip_address("fd00:ec2::254"): "the AWS IPv6 metadata service",
}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 shared address space
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215, local-use
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (RFC 4291 2.5.5.1)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "IPv4-mapped"
    if address.sixtofour is not None:
        return address.sixtofour, "6to4"
    if address.teredo is not None:
        return address.teredo[1], "Teredo"
    if address in _NAT64_WELL_KNOWN or address in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "NAT64"
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are not IPv4-compatible forms
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "IPv4-compatible"
    return None


def _category(address: IPAddress) -> str | None:
    """A plain-language name for a non-public address, or None when it is public."""
    if address in _CLOUD_METADATA:
        return _CLOUD_METADATA[address]
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_link_local:
        return "a link-local address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT (shared) address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "a non-public address"
    return None


def _refusal(address: IPAddress, allow_private: bool) -> tuple[str, str] | None:
    """(the address as shown, its category) when it may not be scanned, else None."""
    subject = address
    shown = str(address)
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            subject, form = embedded
            shown = f"{address} ({form} form of {subject})"
    category = _category(subject)
    if category is None:
        return None
    if allow_private and category not in ("an unspecified address", "a multicast address"):
        return None  # WEBSEC_ALLOW_PRIVATE_TARGETS: tests and local development only
    return shown, category


def refusal_reason(address: IPAddress | str, *, allow_private: bool = False) -> str | None:
    """Why the scanner must not connect to `address`, or None when it may."""
    refusal = _refusal(ipaddress.ip_address(address) if isinstance(address, str) else address, allow_private)
    return None if refusal is None else f"{refusal[0]} is {refusal[1]}"


def ensure_allowed(address: IPAddress | str, *, allow_private: bool, host: str | None = None) -> None:
    """Raise TargetRefused when `address` may not be scanned."""
    refusal = _refusal(ipaddress.ip_address(address) if isinstance(address, str) else address, allow_private)
    if refusal is None:
        return
    shown, category = refusal
    sentence = (
        f"{host} resolves to {shown}, which is {category}"
        if host and host != str(address)
        else f"{shown} is {category}"
    )
    raise TargetRefused(f"Refusing to scan: {sentence}. Only public addresses can be scanned.")


def is_localhost_name(host: str) -> bool:
    """RFC 6761 6.3: `localhost` and names under it always mean loopback."""
    host = host.rstrip(".").lower()
    return host == "localhost" or host.endswith(".localhost")
