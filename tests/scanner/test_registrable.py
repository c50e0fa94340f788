"""Registrable domains from the bundled Public Suffix List (no download at run time)."""

import pytest

from websec_app.scanner.registrable import registrable_domain


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("www.example.com", "example.com"),
        ("a.b.example.co.uk", "example.co.uk"),
        ("alice.github.io", "alice.github.io"),  # PSL private section: each user's site is its own
        ("www.best.test", "best.test"),  # RFC 6761 .test treated as a suffix for fixtures
        ("93.184.216.34", "93.184.216.34"),
        ("com", "com"),
    ],
)
def test_registrable_domain(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain
