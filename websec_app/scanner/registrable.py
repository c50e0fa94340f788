"""The registrable domain (eTLD+1) of a host, from the Public Suffix List bundled with tldextract.

tldextract ships a snapshot of the list; we never let it download one at run time
(`suffix_list_urls=()`), so a scan needs no network beyond the target.
"""

from __future__ import annotations

from functools import lru_cache

import tldextract

from .target import ip_literal

# The PSL's private section counts: `alice.github.io` is Alice's site, not GitHub's, so its mail
# and DNSSEC records are its own (and `bob.github.io` is not same-site with it).
# RFC 6761 reserves `.test` for testing; treating it as a public suffix lets test zones
# (www.good.test -> good.test) behave like real ones.
_EXTRACT = tldextract.TLDExtract(
    suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True, extra_suffixes=("test",)
)


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """`www.example.co.uk` -> `example.co.uk`; an IP literal or bare suffix is returned as is."""
    host = host.rstrip(".").lower()
    if ip_literal(host) is not None:
        return host
    parts = _EXTRACT(host)
    if parts.domain and parts.suffix:
        return f"{parts.domain}.{parts.suffix}"
    return host
