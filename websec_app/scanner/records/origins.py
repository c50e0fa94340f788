"""What browsers make of an origin's host, and of a request from one origin's page to another URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..registrable import registrable_domain
from ..target import ip_literal

__all__ = ["same_site", "trustworthy_host"]


def trustworthy_host(host: str) -> bool:
    """Whether browsers hold `host` (as urlsplit's `hostname` gives it: lowercase, IPv6 without brackets)
    potentially trustworthy whatever the scheme: `localhost`, a name under `.localhost`, or a loopback address
    (W3C Secure Contexts §3.1). No one on the network path can forge such an origin's pages, even over http."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = ip_literal(host)
    return address is not None and address.is_loopback


def same_site(origin: str, url: str) -> bool:
    """Whether a page of `origin` (serialised, `scheme://host[:port]`, or `null`) and `url` are the same site, as
    Chromium decides which cookies a request from that page carries: the same scheme and registrable domain, the
    port left out (HTML "same site", schemeful as Chromium has it since version 89: a page of `http://example.com`
    is another site than `https://example.com`). An opaque origin (`null`: a sandboxed iframe, a `data:`
    document) is the same site as nothing."""
    try:
        page, asked = urlsplit(origin), urlsplit(url)
        page_host, asked_host = page.hostname, asked.hostname
    except ValueError:
        return False
    if not page_host or not asked_host or page.scheme.lower() != asked.scheme.lower():
        return False
    return registrable_domain(page_host) == registrable_domain(asked_host)
