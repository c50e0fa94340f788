"""Stories for the server fingerprint check: versions are leaks, bare product names are not."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.fingerprint import check_server_fingerprint, find_versions
from websec_app.scanner.findings import LIST_BUDGET, CheckResult
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import FetchChain

CONTEXT = {"host": "example.com", "domain": "example.com", "origin": "https://example.com"}


def fingerprint_of(headers: Sequence[tuple[str, str]] = (), body: str = "", **overrides: object) -> CheckResult:
    return check_server_fingerprint(make_snapshot(headers=list(headers), body=body, **overrides))


def outcomes(result: CheckResult) -> set[str]:
    return {f.outcome for f in result.findings}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "Apache/2.4.41 (Ubuntu) OpenSSL/1.1.1f mod_wsgi/4.6.8 Python/3.8",
            [("Apache", "2.4.41"), ("OpenSSL", "1.1.1f"), ("mod_wsgi", "4.6.8"), ("Python", "3.8")],
        ),
        ("Microsoft-IIS/10.0", [("Microsoft-IIS", "10.0")]),
        ("PHP/7.4.3", [("PHP", "7.4.3")]),
        ("ASP.NET 4.0.30319", [("ASP.NET", "4.0.30319")]),
        ("Jetty(9.4.44.v20210927)", [("Jetty", "9.4.44")]),
        ("openresty/1.21.4.1", [("openresty", "1.21.4.1")]),
        ("WordPress 6.4.2", [("WordPress", "6.4.2")]),
        ("nginx", []),
        ("cloudflare", []),
        ("Apache/2", []),  # ServerTokens Major: the major version alone is not a leak
        ("Drupal 10 (https://www.drupal.org)", []),
        ("Apache-Coyote/1.1", []),  # Tomcat's connector always says 1.1 (the HTTP version)
        ("Microsoft-HTTPAPI/2.0", []),  # identical on every Windows release
        # Phusion Passenger's X-Powered-By: a registered-trademark mark, or a comment, before the version
        ("Phusion Passenger(R) 6.0.27", [("Passenger", "6.0.27")]),
        ("nginx + Phusion Passenger(R) 6.0.27", [("Passenger", "6.0.27")]),
        ("Phusion Passenger (mod_rails/mod_rack) 3.0.11", [("Passenger", "3.0.11")]),
        ("Phusion Passenger\u00ae 6.0.27", [("Passenger", "6.0.27")]),
        ("Phusion Passenger\u00c2\u00ae 6.0.27", [("Passenger", "6.0.27")]),  # UTF-8 ® read as Latin-1
        ("Acme Server(TM)/2.1.4", [("Server", "2.1.4")]),
        ("Acme\u2122 2.1.4", [("Acme", "2.1.4")]),
        ("nginx/1.18.0 (Ubuntu)", [("nginx", "1.18.0")]),  # a comment after the version is not before it
        ("Zope/(2.13.28, python 2.7.18, linux2) ZServer/1.1", [("python", "2.7.18"), ("ZServer", "1.1")]),
    ],
)
def test_versions_are_digits_with_dots_after_a_product(value: str, expected: list[tuple[str, str]]) -> None:
    assert find_versions(value) == expected


def test_no_software_headers_is_good() -> None:
    result = fingerprint_of()
    assert outcomes(result) == {"fingerprint.none"}
    assert result.details["disclosures"] == []


@pytest.mark.parametrize("server", ["nginx", "cloudflare", "Apache", "Microsoft-IIS"])
def test_a_bare_product_name_is_not_a_leak(server: str) -> None:
    # Given a Server header without a version
    result = fingerprint_of([("Server", server)])
    # Then nothing is deducted, but the name is listed
    assert outcomes(result) == {"fingerprint.product_only"}
    assert result.details["products"] == [f"Server: {server}"]
    assert grade([result], default_rulebook(), CONTEXT).sections["server_fingerprint"]["deduction"] == 0


def test_versioned_server_and_powered_by_headers_are_disclosures() -> None:
    # Given a typical LAMP stack announcing itself
    result = fingerprint_of([("Server", "Apache/2.4.41 (Ubuntu)"), ("X-Powered-By", "PHP/7.4.3")])
    # Then both headers are reported, deducting once, minor
    assert outcomes(result) == {"fingerprint.header_version"}
    assert [(d["header"], d["product"], d["version"]) for d in result.details["disclosures"]] == [
        ("Server", "Apache", "2.4.41"),
        ("X-Powered-By", "PHP", "7.4.3"),
    ]
    section = grade([result], default_rulebook(), CONTEXT).sections["server_fingerprint"]
    assert section["findings"][0]["subjects"] == ["Server", "X-Powered-By"]
    assert section["findings"][0]["severity"] == "minor" and 2 <= section["deduction"] <= 5


def test_a_header_naming_several_versions_is_quoted_once_with_every_version() -> None:
    # Given one Server line naming four versioned products
    server = "Apache/2.4.41 (Ubuntu) OpenSSL/1.1.1f mod_wsgi/4.6.8 Python/3.8"
    result = fingerprint_of([("Server", server), ("X-Powered-By", "PHP/7.4.3")])
    # Then each header's line is quoted once, followed by all it reveals
    assert [f.note for f in result.findings] == [
        f"Server: {server} reveals Apache 2.4.41, OpenSSL 1.1.1f, mod_wsgi 4.6.8, Python 3.8",
        "X-Powered-By: PHP/7.4.3 reveals PHP 7.4.3",
    ]
    assert len(result.details["disclosures"]) == 5


def test_asp_net_version_headers_carry_a_bare_version() -> None:
    result = fingerprint_of(
        [("X-AspNet-Version", "4.0.30319"), ("X-AspNetMvc-Version", "5.2"), ("X-Powered-By", "ASP.NET")]
    )
    found = {(d["header"], d["product"], d["version"]) for d in result.details["disclosures"]}
    assert found == {("X-AspNet-Version", "ASP.NET", "4.0.30319"), ("X-AspNetMvc-Version", "ASP.NET MVC", "5.2")}


def test_via_protocol_versions_are_not_software_versions() -> None:
    # Given proxies that name only the protocol, and one that names its software in a comment
    quiet = fingerprint_of([("Via", "1.1 vegur, HTTP/1.1 abc123.cloudfront.net (CloudFront)")])
    loud = fingerprint_of([("Via", "1.1 varnish (Varnish/6.0), 1.1 proxy.internal:3128 (squid/3.5.27)")])
    # Then only the comments' versions count
    assert outcomes(quiet) == {"fingerprint.product_only"}
    found = [(d["product"], d["version"]) for d in loud.details["disclosures"]]
    assert found == [("Varnish", "6.0"), ("squid", "3.5.27")]


def test_a_generator_meta_tag_with_a_version_is_a_disclosure() -> None:
    # Given a WordPress page with the default generator tag (upper-case markup)
    body = '<HTML><HEAD><META NAME="Generator" CONTENT="WordPress 6.4.2"></HEAD></HTML>'
    result = fingerprint_of(body=body)
    # Then the page's generator is reported
    assert outcomes(result) == {"fingerprint.generator_version"}
    assert result.details["disclosures"][0]["header"] == "meta generator"
    assert result.details["disclosures"][0]["version"] == "6.4.2"


def test_a_generator_name_with_spaces_around_it_still_discloses_the_version() -> None:
    # Browsers act on no generator <meta>; a reader of the page sees the version whatever the spacing
    result = fingerprint_of(body='<meta name=" generator " content="WordPress 6.4.2">')

    assert [(d["product"], d["version"]) for d in result.details["disclosures"]] == [("WordPress", "6.4.2")]


def test_a_generator_without_version_or_in_a_non_html_response_is_ignored() -> None:
    no_version = fingerprint_of(body='<meta name="generator" content="Joomla! - Open Source Content Management">')
    json_text = '{"x": "<meta name=generator content=\\"WordPress 6.4.2\\">"}'
    json_body = check_server_fingerprint(make_snapshot(body=json_text, content_type="application/json"))
    assert outcomes(no_version) == {"fingerprint.none"}
    assert outcomes(json_body) == {"fingerprint.none"}


def test_versions_leaked_only_by_an_error_page_are_found() -> None:
    # Given a quiet front page but a default 404 page on security.txt
    not_found = make_response(
        "https://example.com/.well-known/security.txt", 404, headers=[("Server", "Apache/2.4.58 (Unix)")]
    )
    chain = FetchChain(not_found.url, (not_found,))
    result = fingerprint_of([("Server", "Apache")], security_txt=chain)
    # Then the version is reported with the URL that leaked it
    assert outcomes(result) == {"fingerprint.header_version"}
    assert result.details["disclosures"][0]["url"] == "https://example.com/.well-known/security.txt"


def test_a_version_leaked_only_by_the_http_upgrade_redirect_is_found() -> None:
    # Given a quiet https:// page whose http:// form (port 80, its own chain) redirects with a versioned Server
    redirect = make_response(
        "http://example.com/", 301, [("Location", "https://example.com/"), ("Server", "nginx/1.18.0 (Ubuntu)")]
    )
    landing = make_response("https://example.com/", headers=[("Server", "nginx")])
    result = fingerprint_of([("Server", "nginx")], http_upgrade=FetchChain("http://example.com/", (redirect, landing)))
    # Then the version is reported with the URL that leaked it
    assert outcomes(result) == {"fingerprint.header_version"}
    assert [(d["product"], d["version"], d["url"]) for d in result.details["disclosures"]] == [
        ("nginx", "1.18.0", "http://example.com/")
    ]


def test_the_same_disclosure_on_several_responses_is_listed_once() -> None:
    hop = make_response(
        "http://example.com/", 301, headers=[("Location", "https://example.com/"), ("Server", "nginx/1.18.0")]
    )
    result = fingerprint_of([("Server", "nginx/1.18.0")], redirects=[hop])
    assert len(result.details["disclosures"]) == 1


def test_backend_host_names_are_reported() -> None:
    result = fingerprint_of([("X-Backend-Server", "web-03.prod.internal")])
    assert outcomes(result) == {"fingerprint.backend_host"}
    assert result.details["backends"] == ["X-Backend-Server: web-03.prod.internal"]


def test_grading_turns_the_fingerprint_result_into_json() -> None:
    result = fingerprint_of(
        [("Server", "nginx/1.25.3"), ("X-Backend-Server", "10.0.0.5")],
        body='<meta name="generator" content="Hugo 0.120.4">',
    )
    graded = grade([result], default_rulebook(), CONTEXT)
    body = json.loads(json.dumps(graded.sections["server_fingerprint"]))
    assert {f["check"] for f in body["findings"]} == {
        "fingerprint.header_version",
        "fingerprint.generator_version",
        "fingerprint.backend_host",
    }
    assert all(f["cwe"] in ("CWE-497", "CWE-200") for f in body["findings"])
    assert len(body["disclosures"]) == 2


# -- floods: 1 MB-scale lists the old code de-duplicated with `in` on lists (quadratic: this file would hang) -----

FLOOD = 200_000


def test_a_flood_of_bare_server_names_is_listed_up_to_fifty_with_a_count_of_the_rest() -> None:
    # Given 200,000 distinct bare Server names (no version), half on a redirect and half on the page
    hop = make_response("https://example.com/", 302, [("Server", f"r{i}") for i in range(FLOOD // 2)])
    result = fingerprint_of([("Server", f"p{i}") for i in range(FLOOD // 2)], redirects=[hop])

    # Then the first 50 are listed, and both the details and the finding's note say how many more there were
    assert result.details["products"] == [f"Server: r{i}" for i in range(50)]
    assert result.details["not_listed"] == {"products": FLOOD - 50}
    (finding,) = result.findings
    assert finding.outcome == "fingerprint.product_only"
    assert finding.notes[-2:] == ("Server: r49", "and 199,950 more, not listed")  # each product a note of its own


def test_a_flood_of_backend_names_is_listed_up_to_fifty_and_graded_with_a_count() -> None:
    result = fingerprint_of([("X-Backend-Server", f"web-{i}.internal") for i in range(FLOOD)])

    assert result.details["backends"] == [f"X-Backend-Server: web-{i}.internal" for i in range(50)]
    assert result.details["not_listed"] == {"backends": FLOOD - 50}
    (finding,) = grade([result], default_rulebook(), CONTEXT).sections["server_fingerprint"]["findings"]
    assert finding["subjects"] == ["X-Backend-Server"]
    assert finding["note"].endswith("; and 199,950 more notes like these, not listed")


def test_thousands_of_generator_tags_are_listed_up_to_fifty_and_the_same_one_twice_once() -> None:
    # Given a page with 4,000 generator tags naming distinct versions, each of them twice (8,000 elements: page
    # analysis reads 10,000)
    metas = "".join(f'<meta name="generator" content="WordPress 6.{i}">' for i in range(4_000))
    result = fingerprint_of(body=f"<html><head>{metas}{metas}</head></html>")

    # Then the first disclosures that store in 4,096 characters are listed (findings.LIST_BUDGET: 31 of these) and
    # the rest counted, each version once
    listed = [d["version"] for d in result.details["disclosures"]]
    assert listed == [f"6.{i}" for i in range(31)]
    assert len(json.dumps(result.details["disclosures"])) <= LIST_BUDGET + 2 * len(listed)  # 2: JSON's ", "
    assert result.details["not_listed"] == {"disclosures": 4_000 - 31}
    # and the graded section names WordPress once, 50 of its tags, and how many more (10,000 tags made 2.16 MB)
    section = grade([result], default_rulebook(), CONTEXT).sections["server_fingerprint"]
    (finding,) = section["findings"]
    assert finding["subjects"] == ["WordPress"]
    assert finding["note"].endswith("; and 3,950 more notes like these, not listed")
    assert len(json.dumps(section)) < 20_000


def test_an_ordinary_site_lists_everything_and_says_nothing_was_left_out() -> None:
    result = fingerprint_of([("Server", "nginx/1.25.3"), ("X-Powered-By", "Express")])
    assert "not_listed" not in result.details
