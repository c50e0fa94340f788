"""The SSRF guard: which addresses the scanner may connect to.

Only globally routable unicast addresses are allowed by default. Addresses that embed an
IPv4 address (IPv4-mapped, IPv4-compatible, 6to4, well-known NAT64, Teredo) are judged by
the address they embed (local-use NAT64 is refused outright), so `::ffff:127.0.0.1` or
`2002:7f00:1::` cannot smuggle loopback in; a Teredo address embeds two, its server's and its
client's, and both must be public. Names are checked after resolution, for every hop,
and the connection then goes to the checked address (see resolve.py), so DNS rebinding cannot
switch it afterwards. A refusal never says what a name resolved to.

Ports browsers refuse to connect to (the Fetch Standard's bad ports: SMTP, IRC, SIP ...) are refused too, for
the target, every redirect hop, certificate downloads and callbacks, whatever the setting.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from ..errors import TargetRefused

if TYPE_CHECKING:
    from urllib.parse import SplitResult

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Named for the message; ipaddress' is_global already excludes all of these.
_CLOUD_METADATA = {
    ipaddress.ip_address("169.254.169.254"): "the cloud metadata service (AWS, GCP, Azure, OpenStack)",
    ipaddress.ip_address("169.254.170.2"): "the AWS ECS task metadata service",
    ipaddress.ip_address("100.100.100.200"): "the Alibaba Cloud metadata service",
    ipaddress.ip_address("fd00:ec2::254"): "the AWS IPv6 metadata service",
}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 shared address space
# The IANA special-purpose address registries (iana-ipv4-special-registry, iana-ipv6-special-registry)
# name every block that is not an ordinary public unicast address. `ipaddress` knows most of them,
# but which ones depends on the Python version (3.11 misses 192.88.99.0/24, 3fff::/20, 5f00::/16;
# 3.12.4 made 192.0.0.9 and .10 "global"), so the guard names them itself. Names are for the
# message; every block here is refused. Loopback, link-local, multicast, unspecified, CGNAT and the
# private ranges (RFC 1918, RFC 4193 fc00::/7) are recognised first, by the checks above them.
_SPECIAL_PURPOSE: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (ipaddress.ip_network("0.0.0.0/8"), "a this-network address"),  # RFC 791 3.2, RFC 6890
    (ipaddress.ip_network("192.0.0.0/24"), "an IETF protocol assignment address"),  # RFC 6890 2.2.2
    (ipaddress.ip_network("192.0.2.0/24"), "a documentation address"),  # RFC 5737 TEST-NET-1
    (ipaddress.ip_network("192.88.99.0/24"), "a deprecated 6to4 relay anycast address"),  # RFC 7526
    (ipaddress.ip_network("198.18.0.0/15"), "a benchmarking address"),  # RFC 2544
    (ipaddress.ip_network("198.51.100.0/24"), "a documentation address"),  # RFC 5737 TEST-NET-2
    (ipaddress.ip_network("203.0.113.0/24"), "a documentation address"),  # RFC 5737 TEST-NET-3
    (ipaddress.ip_network("240.0.0.0/4"), "a reserved address"),  # RFC 1112 4, RFC 6890 (with the broadcast)
    (ipaddress.ip_network("100::/64"), "a discard-only address"),  # RFC 6666
    (ipaddress.ip_network("100:0:0:1::/64"), "a dummy IPv6 prefix address"),  # RFC 9780
    (ipaddress.ip_network("2001:2::/48"), "a benchmarking address"),  # RFC 5180
    (ipaddress.ip_network("2001:10::/28"), "an ORCHID address"),  # RFC 4843 (deprecated)
    (ipaddress.ip_network("2001:20::/28"), "an ORCHID address"),  # RFC 7343: identifiers, not locators
    (ipaddress.ip_network("2001:db8::/32"), "a documentation address"),  # RFC 3849
    (ipaddress.ip_network("3fff::/20"), "a documentation address"),  # RFC 9637
    (ipaddress.ip_network("5f00::/16"), "a Segment Routing (SRv6) SID address"),  # RFC 9602
    (ipaddress.ip_network("2001::/23"), "an IETF protocol assignment address"),  # RFC 2928, RFC 6890 2.2.3
)
#: The Fetch Standard's "bad ports" (https://fetch.spec.whatwg.org/#bad-port), which every browser refuses to
#: connect to (Chrome: ERR_UNSAFE_PORT): an HTTP request sent there, its path, Host and headers, may be read
#: as another protocol's commands (SMTP mail, IRC, SIP's NAT slipstreaming), so a scan of a public host's :25
#: made the scanner a relay for such requests, and no browser would load a website there to grade. Ports the
#: list leaves open (Redis's 6379, databases') stay open, as they are to browsers: those servers refuse HTTP.
BAD_PORTS = frozenset(
    (1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104)
    + (109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515)
    + (526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049)
    + (3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080)
)
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215, local-use
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (RFC 4291 2.5.5.1)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[ipaddress.IPv4Address, str]] | None:
    """The IPv4 addresses a packet to `address` is sent on to, each with how a refusal names it (`{}`: the IPv4
    address); None when it embeds none."""
    if address.ipv4_mapped is not None:
        return [(address.ipv4_mapped, "IPv4-mapped form of {}")]
    if address.sixtofour is not None:
        return [(address.sixtofour, "6to4 form of {}")]
    if address.teredo is not None:
        # RFC 4380 4: 2001:0:<server>:<flags>:<port>:<client>, the client obfuscated. Packets go to the client,
        # and a Teredo relay or peer sends its indirect bubbles (UDP, port 3544) to the server (RFC 4380;
        # miredo's TeredoRelay::SendBubble): a private server address reaches inward as a private client does.
        server, client = address.teredo
        return [(client, "Teredo form of {}"), (server, "a Teredo address whose server is {}")]
    if address in _NAT64_WELL_KNOWN:
        return [(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "NAT64 form of {}")]
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are not IPv4-compatible forms
        return [(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "IPv4-compatible form of {}")]
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
    if isinstance(address, ipaddress.IPv6Address) and address in _NAT64_LOCAL:
        # RFC 8215: a local-use NAT64 prefix leads to whatever the local translator reaches, public
        # or not, so the embedded address proves nothing (the well-known 64:ff9b::/96 is judged by it).
        return "a local-use NAT64 address"
    for network, name in _SPECIAL_PURPOSE:
        if address.version == network.version and address in network:
            return name
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
    embedded = _embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    judged: list[tuple[IPAddress, str]] = [(address, str(address))]
    if embedded is not None:
        judged = [(subject, f"{address} ({form.format(subject)})") for subject, form in embedded]
    for subject, shown in judged:
        category = _category(subject)
        if category is None:
            continue
        if allow_private and category not in ("an unspecified address", "a multicast address"):
            continue  # WEBSEC_ALLOW_PRIVATE_TARGETS: tests and local development only
        return shown, category
    return None


def refusal_reason(address: IPAddress | str, *, allow_private: bool = False) -> str | None:
    """Why the scanner must not connect to `address`, or None when it may."""
    refusal = _refusal(ipaddress.ip_address(address) if isinstance(address, str) else address, allow_private)
    return None if refusal is None else f"{refusal[0]} is {refusal[1]}"


def ensure_allowed(address: IPAddress | str, *, allow_private: bool, host: str | None = None) -> None:
    """Raise TargetRefused when `address` may not be scanned; `host` is the name it came from, if any."""
    refusal = _refusal(ipaddress.ip_address(address) if isinstance(address, str) else address, allow_private)
    if refusal is None:
        return
    shown, category = refusal
    if host and host != str(address):
        # Never what a name resolved to, nor what kind of address: anyone may submit a scan, and
        # "intranet.corp resolves to 10.0.0.5" would make the scanner an oracle for internal DNS.
        sentence = f"{host} resolves to a private or reserved address"
    else:
        sentence = f"{shown} is {category}"  # the address the user (or a redirect) wrote: nothing to reveal
    raise TargetRefused(f"Refusing to scan: {sentence}. Only public addresses can be scanned.")


def ensure_port_allowed(port: int) -> None:
    """Raise TargetRefused for a port browsers refuse to connect to (BAD_PORTS), in every mode."""
    if port in BAD_PORTS:
        raise TargetRefused(
            f"Refusing to scan: browsers refuse to connect to port {port}, a port of another protocol, so no "
            "website can be served there."
        )


def url_port(parts: SplitResult) -> int:
    """The port a split URL names, else its scheme's default (443 for https, 80 otherwise); ValueError for a port
    out of range, as `SplitResult.port` raises it."""
    return parts.port or (443 if parts.scheme == "https" else 80)


def is_localhost_name(host: str) -> bool:
    """RFC 6761 6.3: `localhost` and names under it always mean loopback."""
    host = host.rstrip(".").lower()
    return host == "localhost" or host.endswith(".localhost")


def refuse_known_private(host: str, *, port: int, allow_private: bool) -> None:
    """Refuse at once what no scan could reach: a private or reserved address written as such, a
    localhost name, or a port browsers refuse. For what waits before its scan (a monitor, a paid compliance
    report): a name is left to the resolver's check on every scan, since where it points may change."""
    ensure_port_allowed(port)
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if is_localhost_name(host) and not allow_private:
            raise TargetRefused(
                f"Refusing to scan: {host} is a loopback name. Only public addresses can be scanned."
            ) from None
        return
    ensure_allowed(host.strip("[]"), allow_private=allow_private)
