"""Does a certificate name this host? RFC 6125 section 6.4, as browsers apply it.

- DNS names in subjectAltName only; the subject CN is ignored (CA/B Forum BR 7.1.4.3,
  and Chrome since 58), because every publicly trusted certificate carries a SAN.
- A wildcard is allowed only as the whole left-most label (`*.example.com`), matches
  exactly one label, and never matches the direct children of a registry-controlled public
  suffix (`*.com`, `*.co.uk`): RFC 6125 7.2, CA/B Forum BR 3.2.2.6, and Chrome, which consults
  the ICANN section of the Public Suffix List only, so `*.github.io` (a private entry) matches.
- IP-literal hosts match only iPAddress SAN entries.
"""

from __future__ import annotations

import ipaddress

from .registrable import is_registry_suffix
from .snapshot import CertificateInfo
from .target import ip_literal


def _dns_name_matches(pattern: str, host: str) -> bool:
    pattern = pattern.rstrip(".").lower()
    host = host.rstrip(".").lower()
    if pattern == host:
        return True
    if not pattern.startswith("*."):
        return False
    suffix = pattern[2:]
    if "*" in suffix or suffix.count(".") < 1:  # `*.com`-style wildcards match nothing
        return False
    first, _, rest = host.partition(".")
    return bool(first) and rest == suffix and not is_registry_suffix(suffix)


def certificate_matches_host(certificate: CertificateInfo, host: str) -> bool:
    literal = ip_literal(host)
    if literal is not None:
        return any(ipaddress.ip_address(ip) == literal for ip in certificate.san_ip)
    return any(_dns_name_matches(name, host) for name in certificate.san_dns)
