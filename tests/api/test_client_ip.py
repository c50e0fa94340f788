"""Whose free quota a request counts against (X-Forwarded-For only from trusted proxies)."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from api_routes.routes.scans import client_address
from websec_app.store.clients import parse_networks, quota_key

PROXIES = parse_networks(["10.0.0.0/8", "2001:db8:ffff::/48"])


def request(peer: str, *forwarded: str) -> Request:
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    return Request({"type": "http", "client": (peer, 1234), "headers": headers})


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.9", ["198.51.100.1"], "203.0.113.9"),  # untrusted peer: the header is ignored
        ("10.0.0.2", ["198.51.100.1"], "198.51.100.1"),
        ("10.0.0.2", ["6.6.6.6, 198.51.100.1, 10.0.0.3"], "198.51.100.1"),  # chain of trusted proxies
        ("10.0.0.2", ["6.6.6.6", "198.51.100.1"], "198.51.100.1"),  # repeated headers read as one list
        ("10.0.0.2", [], "10.0.0.2"),  # no header: the proxy itself
        ("10.0.0.2", ["not-an-ip"], "10.0.0.2"),  # garbage: stop at the last trusted hop
        ("10.0.0.2", ["198.51.100.1:4711"], "198.51.100.1"),
        ("10.0.0.2", ["[2001:db8::7]:443"], "2001:db8::/64"),
        ("::ffff:203.0.113.9", [], "203.0.113.9"),  # IPv4-mapped IPv6 is the IPv4 client
        ("2001:db8:1:2:3:4:5:6", [], "2001:db8:1:2::/64"),
        ("2001:db8:ffff::1", ["2001:db8:5::9"], "2001:db8:5::/64"),
    ],
)
def test_client_address(peer: str, forwarded: list[str], client: str) -> None:
    assert quota_key(client_address(request(peer, *forwarded), PROXIES)) == client


def test_without_trusted_proxies_the_peer_is_the_client() -> None:
    assert quota_key(client_address(request("10.0.0.2", "198.51.100.1"), ())) == "10.0.0.2"
