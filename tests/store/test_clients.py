"""The free-scan client key from a connection's peer and X-Forwarded-For (shared by the API and the UI)."""

from __future__ import annotations

from websec_app.store.clients import free_scan_client, parse_networks

PROXIES = parse_networks(["10.0.0.0/8"])


def test_a_direct_connection_counts_as_its_peer() -> None:
    assert free_scan_client("203.0.113.9", ["198.51.100.1"], PROXIES) == "203.0.113.9"


def test_behind_a_trusted_proxy_the_forwarded_client_counts() -> None:
    assert free_scan_client("10.0.0.2", ["6.6.6.6, 198.51.100.1"], PROXIES) == "198.51.100.1"


def test_ipv6_clients_count_per_64_and_a_missing_peer_is_unknown() -> None:
    assert free_scan_client("2001:db8:1:2::9", [], ()) == "2001:db8:1:2::/64"
    assert free_scan_client(None, [], PROXIES) == "unknown"
