"""Which client a free scan counts against, for an HTTP request.

The rules (socket peer, X-Forwarded-For only from `WEBSEC_TRUSTED_PROXIES`, IPv6 per /64)
live in `websec_app/store/clients.py`, shared with the web UI so both count one quota.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request

from websec_app.store.clients import Address, Network, parse_networks, quota_key, resolve_client

__all__ = ["Address", "Network", "client_address", "parse_networks", "quota_key"]


def client_address(request: Request, proxies: Sequence[Network]) -> Address | None:
    peer = request.client.host if request.client else None
    return resolve_client(peer, request.headers.getlist("x-forwarded-for"), proxies)
