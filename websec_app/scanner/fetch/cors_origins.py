"""The `Origin` values the CORS probes send to the final URL, built from its host (checks/cors.py judges them).

A server that validates the Origin wrongly is only caught by an origin its check lets through
(PortSwigger, "CORS vulnerabilities: errors parsing Origin headers"; "Breaking TLS with poorly configured
CORS"):

- foreign: a name that is nothing to the target. Echoing it means echoing everyone.
- lookalike: `https://<host>.websecprobe<registrable domain>`. It starts with `https://<host>` (what a
  prefix check compares), ends with the registrable domain after a letter, not a dot (what a suffix check
  of `example.com` accepts: `evilexample.com`), and holds the host (a substring check). Its own
  registrable domain is `websecprobe<domain>`, which anyone can register, so no correct allowlist
  accepts it: neither a list of origins nor a subdomain pattern such as `^https://([a-z0-9-]+\\.)*example\\.com$`.
  A suffix check of the host itself below its registrable domain (`api.example.com`) is left out on
  purpose: what passes it (`evilapi.example.com`) is a name only the domain's owner can create.
- http: `http://<host>`, only for an https page. Trusting the site's own cleartext origin with
  credentials lets anyone on the network path forge a page of that origin and read the https site.
- null: sandboxed iframes and `data:` documents send it, so any site can.
"""

from __future__ import annotations

from ..registrable import registrable_domain
from ..snapshot import CorsProbeKind
from ..target import Target

__all__ = ["FOREIGN_ORIGIN", "LOOKALIKE_LABEL", "cors_probe_origins"]

FOREIGN_ORIGIN = "https://websec-cors-probe.invalid"
#: What the look-alike name puts between the host and the registrable domain.
LOOKALIKE_LABEL = "websecprobe"


def cors_probe_origins(final: Target) -> tuple[tuple[CorsProbeKind, str], ...]:
    """(kind, origin) for each probe of the page at `final`, in the order they are sent."""
    origins: list[tuple[CorsProbeKind, str]] = [("foreign", FOREIGN_ORIGIN)]
    if ":" not in final.host:  # an IPv6 literal has no name to imitate
        domain = registrable_domain(final.host)
        origins.append(("lookalike", f"https://{final.host}.{LOOKALIKE_LABEL}{domain}"))
    if final.scheme == "https":
        origins.append(("http", final.with_scheme("http").origin))
    origins.append(("null", "null"))
    return tuple(origins)
