"""MTA-STS (RFC 8461): which MX hosts a policy's mx patterns cover."""

from __future__ import annotations

import random

import pytest

from websec_app.scanner.records.mta_sts import uncovered_mx


def matches_pairwise(host: str, pattern: str) -> bool:
    """RFC 8461 4.1 read one host and one pattern at a time: the rule uncovered_mx must keep."""
    host, pattern = host.rstrip(".").lower(), pattern.rstrip(".").lower()
    if pattern.startswith("*."):
        label, _, rest = host.partition(".")
        return bool(label) and rest == pattern[2:]
    return host == pattern


@pytest.mark.parametrize(
    ("host", "covered"),
    [
        ("mx1.example.com", True),  # listed by name
        ("MX2.Example.COM.", True),  # *.example.com: one more label, any case, a final dot
        ("example.com", False),  # the wildcard needs one more label
        ("a.b.example.com", False),  # and exactly one
        ("mx.example.net", False),
    ],
)
def test_an_mx_is_covered_by_its_name_or_a_wildcard_of_one_label(host, covered) -> None:
    assert (uncovered_mx([host], ["mx1.example.com", "*.example.com."]) == []) is covered


def test_each_uncovered_host_is_named_once_in_order() -> None:
    assert uncovered_mx(["b.example.net", "a.example.net", "B.example.net."], ["x.example.net"]) == [
        "b.example.net",
        "a.example.net",
    ]


def test_the_set_lookups_agree_with_the_pairwise_rule() -> None:
    rng = random.Random(20261128)  # fixed: the same names on every run
    labels = ["a", "b", "mx", "*", "example", "com", ""]

    def name() -> str:
        return ".".join(rng.choice(labels) for _ in range(rng.randint(1, 4))) + rng.choice(["", "."])

    for _ in range(3000):
        hosts = [name().lstrip("*") for _ in range(rng.randint(0, 4))]
        patterns = [name() for _ in range(rng.randint(0, 4))]
        expected = list(dict.fromkeys(h.rstrip(".").lower() for h in hosts))
        expected = [h for h in expected if not any(matches_pairwise(h, p) for p in patterns)]
        assert uncovered_mx(hosts, patterns) == expected, (hosts, patterns)
