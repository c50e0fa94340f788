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
        ("printer.internal", "printer.internal"),  # an unknown top-level name is no suffix: no registrable domain
        ("WWW.Example.COM.", "example.com"),
        ("www.example.xn--55qx5d.cn", "example.xn--55qx5d.cn"),  # 公司.cn, matched in Unicode, answered as spelt
        ("www.example.公司.cn", "example.公司.cn"),
        ("a.b.city.kawasaki.jp", "city.kawasaki.jp"),  # the `!city.kawasaki.jp` exception to `*.kawasaki.jp`
        ("a.b.c.kawasaki.jp", "b.c.kawasaki.jp"),
    ],
)
def test_registrable_domain(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain
