"""The `Origin` values the CORS probes send to the final URL, built from its host (checks/cors.py judges them).

A server that validates the Origin wrongly is only caught by an origin its check lets through
(PortSwigger, "CORS vulnerabilities: errors parsing Origin headers"; "Breaking TLS with poorly configured
CORS"):

- lookalike: `https://<host>.websecprobe<registrable domain>`. It starts with `https://<host>` (what a
  prefix check compares), ends with the registrable domain after a letter, not a dot (what a suffix check
  of `example.com` accepts: `evilexample.com`), and holds the host (a substring check). Its own
  registrable domain is `websecprobe<domain>`, which anyone can register, so no correct allowlist
  accepts it: neither a list of origins nor a subdomain pattern such as `^https://([a-z0-9-]+\\.)*example\\.com$`.
  A suffix check of the host itself below its registrable domain (`api.example.com`) is left out on
  purpose: what passes it (`evilapi.example.com`) is a name only the domain's owner can create.
- foreign: a name that is nothing to the target. Echoing it means echoing everyone. It is asked only to
  tell a server that echoes the look-alike from one that echoes every Origin (`foreign_probe_needed`):
  every origin check that lets the foreign name through lets the look-alike through too. A page at an IP
  address gets no look-alike (no one can register a name ending in a number) and always the foreign probe.
- http: the page's own origin over cleartext http, only for an https page: `http://<host>:<port>` for a page
  on another port than 443, `http://<host>` (port 80) for one on 443. Trusting a cleartext origin of the
  host with credentials lets anyone on the network path forge a page of that origin (on any port: they answer
  the browser's cleartext request themselves) and read the https site. This one is what an origin check that
  ignores the scheme lets through: one comparing the Origin's host and port with the Host header, or swapping
  `http://` for `https://`.
- http_port_80: `http://<host>` as well, when the page is on another port than 443: the origin of the host's
  own http:// site (port 80, where the scan reads the upgrade to HTTPS), which an allowlist of the site's
  origins may list. A check of the host name alone lets both through.
- null: sandboxed iframes and `data:` documents send it, so any site can.
"""

from __future__ import annotations

from ..registrable import registrable_domain
from ..snapshot import CorsProbe, CorsProbeKind
from ..target import Target, ip_literal

__all__ = ["FOREIGN_ORIGIN", "LOOKALIKE_LABEL", "cors_probe_origins", "foreign_probe_needed"]

FOREIGN_ORIGIN = "https://websec-cors-probe.invalid"
#: What the look-alike name puts between the host and the registrable domain.
LOOKALIKE_LABEL = "websecprobe"


def cors_probe_origins(final: Target) -> tuple[tuple[CorsProbeKind, str], ...]:
    """(kind, origin) for each probe of the page at `final`, in the order they are sent. The foreign one
    follows the look-alike and is sent only when `foreign_probe_needed` says so; a page at an IP address gets it
    first, always: an address has no name to imitate, and `https://192.0.2.1.websecprobe192.0.2.1` is a name
    no one can register (its last label is a number), so an echo of it would prove nothing of the kind."""
    origins: list[tuple[CorsProbeKind, str]] = []
    if ip_literal(final.host) is None:
        domain = registrable_domain(final.host)
        origins.append(("lookalike", f"https://{final.host}.{LOOKALIKE_LABEL}{domain}"))
    origins.append(("foreign", FOREIGN_ORIGIN))
    if final.scheme == "https":
        port_80 = final.with_scheme("http").origin
        # The page's host and port over http, serialised as browsers do (no :80); a page on 443 has no port to keep.
        own = port_80 if final.port == 443 else Target("http", final.host, final.port, "/").origin
        origins.append(("http", own))
        if own != port_80:
            origins.append(("http_port_80", port_80))
    origins.append(("null", "null"))
    return tuple(origins)


def foreign_probe_needed(lookalike: CorsProbe) -> bool:
    """Whether the look-alike probe's answer leaves the foreign probe something to tell.

    Only an answer naming the look-alike (echoed exactly, altered, or in a list) leaves two findings open:
    every Origin is echoed (`cors.origin_reflected*`), or only names like the site's own are
    (`cors.lookalike_*`); the foreign answer tells which. Any other answer (no Access-Control-Allow-Origin,
    `*`, a fixed origin) is the most an unrelated name could get: the look-alike passes every origin check
    the foreign name passes (a reflection; a prefix, suffix or substring test) and more, so a real server
    grants the foreign name no more than it granted the look-alike. Without an answer nothing is known:
    the foreign origin is asked, as its echo would still be a finding."""
    if lookalike.response is None:
        return True
    origin = lookalike.origin.lower()
    return any(origin in value.lower() for value in lookalike.response.headers.get_all("access-control-allow-origin"))
