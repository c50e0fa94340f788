"""The servers a fix is written for, and which of them a scanned site runs on.

`fix_snippets` (issue 15) holds one paste-ready snippet per key of SERVERS; the UI and the PDF put
the detected server's snippet first and keep the others one click away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: The keys of every `fix_snippets` object, in the order the UI shows them.
SERVERS: tuple[str, ...] = ("nginx", "apache", "caddy", "iis", "express", "netlify", "vercel", "cloudflare")

#: What a person calls each one.
SERVER_LABELS: dict[str, str] = {
    "nginx": "nginx",
    "apache": "Apache httpd",
    "caddy": "Caddy",
    "iis": "IIS (web.config)",
    "express": "Express (helmet)",
    "netlify": "Netlify (_headers)",
    "vercel": "Vercel (vercel.json)",
    "cloudflare": "Cloudflare",
}

# Platform headers first: a site on Netlify, Vercel or Cloudflare sets its headers there, whatever
# `Server` says of the origin behind it. Then `Server`, then `X-Powered-By` (Express).
_PLATFORM_HEADERS: tuple[tuple[str, str], ...] = (
    ("x-nf-request-id", "netlify"),
    ("x-vercel-id", "vercel"),
    ("x-vercel-cache", "vercel"),
    ("cf-ray", "cloudflare"),
)
_SERVER_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^netlify", re.I), "netlify"),
    (re.compile(r"^vercel", re.I), "vercel"),
    (re.compile(r"^cloudflare", re.I), "cloudflare"),
    (re.compile(r"^(nginx|openresty|tengine)\b", re.I), "nginx"),
    (re.compile(r"^apache\b", re.I), "apache"),
    (re.compile(r"^caddy\b", re.I), "caddy"),
    (re.compile(r"^microsoft-iis\b", re.I), "iis"),
)
_POWERED_BY_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^express\b", re.I), "express"),
    (re.compile(r"^asp\.net\b", re.I), "iis"),
    (re.compile(r"^next\.js\b", re.I), "vercel"),
)


def server_from_headers(headers: Iterable[tuple[str, str]] | Iterable[list[str]]) -> str | None:
    """The SERVERS key a response's headers point to, or None when they name none of them."""
    pairs = [(str(pair[0]).lower(), str(pair[1]).strip()) for pair in headers]
    names = {name for name, _ in pairs}
    for header, server in _PLATFORM_HEADERS:
        if header in names:
            return server
    for wanted, patterns in (("server", _SERVER_PATTERNS), ("x-powered-by", _POWERED_BY_PATTERNS)):
        for name, value in pairs:
            if name != wanted:
                continue
            for pattern, server in patterns:
                if pattern.search(value):
                    return server
    return None


def detected_server(report: Mapping[str, Any]) -> str | None:
    """The SERVERS key of the scanned site, from the final response's raw headers in a report body
    (`redirection.main_chain[-1].headers`), or None when the site does not say."""
    redirection = report.get("redirection")
    chain = redirection.get("main_chain") if isinstance(redirection, Mapping) else None
    if not isinstance(chain, list) or not chain or not isinstance(chain[-1], Mapping):
        return None
    headers = chain[-1].get("headers")
    return server_from_headers(headers) if isinstance(headers, list) else None


def servers_in_order(detected: str | None) -> tuple[str, ...]:
    """SERVERS with the detected one first: the order the UI's tabs and the PDF follow."""
    if detected not in SERVERS:
        return SERVERS
    return (detected, *(server for server in SERVERS if server != detected))
