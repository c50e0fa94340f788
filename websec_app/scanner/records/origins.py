"""What browsers make of an origin's host."""

from __future__ import annotations

from ..target import ip_literal

__all__ = ["trustworthy_host"]


def trustworthy_host(host: str) -> bool:
    """Whether browsers hold `host` (as urlsplit's `hostname` gives it: lowercase, IPv6 without brackets)
    potentially trustworthy whatever the scheme: `localhost`, a name under `.localhost`, or a loopback address
    (W3C Secure Contexts §3.1). No one on the network path can forge such an origin's pages, even over http."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = ip_literal(host)
    return address is not None and address.is_loopback
