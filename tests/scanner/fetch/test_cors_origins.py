"""The Origins the CORS probes send: the look-alike passes the broken origin checks real servers write, and no
correct one."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.factories import make_response
from websec_app.scanner.fetch.cors_origins import FOREIGN_ORIGIN, cors_probe_origins, foreign_probe_needed
from websec_app.scanner.snapshot import CorsProbe, Failure
from websec_app.scanner.target import parse_target

Check = Callable[[str], bool]


def lookalike(url: str) -> str:
    return dict(cors_probe_origins(parse_target(url)))["lookalike"]


def broken_checks(host: str, domain: str) -> dict[str, Check]:
    """Origin checks PortSwigger finds in the wild ("errors parsing Origin headers"): each lets an attacker's
    name through."""
    # (`endswith("www.example.com")` is left out: what passes it, `evilwww.example.com`, is the domain owner's.)
    return {
        "ends with the domain": lambda origin: origin.endswith(domain),
        "starts with the site's origin": lambda origin: origin.startswith(f"https://{host}"),
        "holds the domain": lambda origin: domain in origin,
        "holds the host": lambda origin: host in origin,
        "unanchored subdomain pattern": lambda origin: (
            re.search(rf"([a-z0-9-]+\.)*{re.escape(domain)}$", origin) is not None
        ),
    }


def correct_checks(host: str, domain: str) -> dict[str, Check]:
    return {
        "exact allowlist": lambda origin: origin in (f"https://{host}", f"https://app.{domain}"),
        "anchored subdomain pattern": lambda origin: (
            re.fullmatch(rf"https://([a-z0-9-]+\.)*{re.escape(domain)}", origin) is not None
        ),
        "subdomains by suffix after a dot": lambda origin: (
            origin == f"https://{domain}" or (origin.startswith("https://") and origin.endswith(f".{domain}"))
        ),
    }


@pytest.mark.parametrize(
    ("url", "host", "domain"),
    [
        ("https://example.com/", "example.com", "example.com"),
        ("https://www.example.com/login", "www.example.com", "example.com"),
        ("https://api.shop.example.co.uk:8443/", "api.shop.example.co.uk", "example.co.uk"),
    ],
)
def test_the_look_alike_passes_broken_checks_and_no_correct_one(url: str, host: str, domain: str) -> None:
    origin = lookalike(url)

    assert origin == f"https://{host}.websecprobe{domain}"
    for name, check in broken_checks(host, domain).items():
        assert check(origin), name
    for name, check in correct_checks(host, domain).items():
        assert not check(origin), name


def test_an_https_page_gets_up_to_four_probes_in_order() -> None:
    # (the foreign one only when the look-alike's answer calls for it: see below)
    assert cors_probe_origins(parse_target("https://www.example.com/a?b")) == (
        ("lookalike", "https://www.example.com.websecprobeexample.com"),
        ("foreign", FOREIGN_ORIGIN),
        ("http", "http://www.example.com"),
        ("null", "null"),
    )


@pytest.mark.parametrize(
    ("url", "http_origins"),
    [
        # the page's host and port over http, then the host's own http site on port 80
        (
            "https://www.example.com:8443/a",
            [("http", "http://www.example.com:8443"), ("http_port_80", "http://www.example.com")],
        ),
        (
            "https://[2001:db8::1]:8443/",
            [("http", "http://[2001:db8::1]:8443"), ("http_port_80", "http://[2001:db8::1]")],
        ),
        ("https://localhost:8443/", [("http", "http://localhost:8443"), ("http_port_80", "http://localhost")]),
        # browsers serialise http://host:80 without its port: one origin, sent once
        ("https://www.example.com:80/", [("http", "http://www.example.com")]),
        ("https://www.example.com:443/", [("http", "http://www.example.com")]),
    ],
)
def test_a_page_on_another_port_is_asked_about_its_own_host_and_port_over_http_and_port_80(
    url: str, http_origins: list[tuple[str, str]]
) -> None:
    probes = cors_probe_origins(parse_target(url))
    assert [(kind, origin) for kind, origin in probes if kind.startswith("http")] == http_origins
    assert [kind for kind, _ in probes][-1] == "null"


def test_a_cleartext_page_is_not_asked_about_its_own_http_origin() -> None:
    kinds = [kind for kind, _ in cors_probe_origins(parse_target("http://example.com/"))]
    assert kinds == ["lookalike", "foreign", "null"]


@pytest.mark.parametrize(
    ("url", "http_origin"),
    [
        ("https://[2001:db8::1]/", "http://[2001:db8::1]"),
        ("https://192.0.2.1/", "http://192.0.2.1"),
        ("https://0xc0.0.2.1/", "http://192.0.2.1"),
    ],
    ids=["IPv6", "IPv4", "IPv4 in hex"],
)
def test_an_ip_address_has_no_name_to_imitate_and_gets_the_foreign_probe(url: str, http_origin: str) -> None:
    # No look-alike (`https://192.0.2.1.websecprobe192.0.2.1` is no name anyone can register), so the foreign
    # origin is the one arbitrary origin asked, first
    assert cors_probe_origins(parse_target(url)) == (
        ("foreign", FOREIGN_ORIGIN),
        ("http", http_origin),
        ("null", "null"),
    )


LOOKALIKE = "https://example.com.websecprobeexample.com"


def lookalike_answered(*headers: tuple[str, str]) -> CorsProbe:
    return CorsProbe("lookalike", LOOKALIKE, make_response(headers=[*headers, ("Vary", "Origin")]))


@pytest.mark.parametrize(
    "allow_origin",
    [LOOKALIKE, LOOKALIKE + "/", LOOKALIKE.upper(), f"https://example.com, {LOOKALIKE}"],
    ids=["echoed", "echoed with a slash", "echoed in capitals", "echoed in a list"],
)
@pytest.mark.parametrize("credentials", [True, False])
def test_a_look_alike_echoed_in_any_form_calls_for_the_foreign_probe(allow_origin: str, credentials: bool) -> None:
    # Given the look-alike named in the answer: an echo of every Origin, or a broken check only the foreign
    # probe tells apart
    headers = [("Access-Control-Allow-Origin", allow_origin)]
    probe = lookalike_answered(*headers, *([("Access-Control-Allow-Credentials", "true")] if credentials else []))
    assert foreign_probe_needed(probe)


@pytest.mark.parametrize(
    "headers",
    [
        (),
        (("Access-Control-Allow-Origin", "*"),),
        (("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Credentials", "true")),
        (("Access-Control-Allow-Origin", "https://app.example.com"), ("Access-Control-Allow-Credentials", "true")),
    ],
    ids=["no CORS headers", "wildcard", "wildcard with credentials", "a fixed origin"],
)
def test_an_answer_not_naming_the_look_alike_leaves_the_foreign_probe_nothing_to_tell(
    headers: tuple[tuple[str, str], ...],
) -> None:
    assert not foreign_probe_needed(lookalike_answered(*headers))


def test_an_unanswered_look_alike_calls_for_the_foreign_probe() -> None:
    refused = Failure("unreachable", "connection refused")
    assert foreign_probe_needed(CorsProbe("lookalike", LOOKALIKE, failure=refused))
