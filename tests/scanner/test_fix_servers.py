"""Which server a fix is written for first (issue 15): read from the final response's raw headers."""

from __future__ import annotations

import pytest

from websec_app.scanner.fixes import SERVERS, detected_server, server_from_headers, servers_in_order


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("Server", "nginx/1.25.3")], "nginx"),
        ([("Server", "openresty")], "nginx"),
        ([("Server", "Apache/2.4.41 (Ubuntu)"), ("X-Powered-By", "PHP/7.4.3")], "apache"),
        ([("Server", "Caddy")], "caddy"),
        ([("Server", "Microsoft-IIS/10.0"), ("X-Powered-By", "ASP.NET")], "iis"),
        ([("X-Powered-By", "Express")], "express"),
        ([("Server", "Netlify"), ("X-NF-Request-ID", "01H")], "netlify"),
        ([("Server", "Vercel"), ("X-Vercel-Id", "fra1::abc")], "vercel"),
        # a CDN in front names itself; the fix goes where the headers are set: the CDN
        ([("Server", "cloudflare"), ("CF-RAY", "8a1b-FRA")], "cloudflare"),
        ([("Server", "nginx"), ("CF-RAY", "8a1b-FRA")], "cloudflare"),
        ([("Server", "gws")], None),
        ([], None),
    ],
)
def test_the_server_is_read_from_platform_headers_then_server_then_powered_by(headers, expected) -> None:
    assert server_from_headers(headers) == expected


def test_a_report_without_raw_headers_names_no_server_and_keeps_the_default_order() -> None:
    assert detected_server({}) is None
    assert detected_server({"redirection": {"main_chain": []}}) is None
    assert servers_in_order(None) == SERVERS


def test_the_detected_server_comes_first_and_the_others_keep_their_order() -> None:
    report = {"redirection": {"main_chain": [{"headers": [["Server", "Caddy"]]}]}}
    assert detected_server(report) == "caddy"
    order = servers_in_order("caddy")
    assert order[0] == "caddy" and sorted(order) == sorted(SERVERS) and len(order) == len(SERVERS)
