# Test cases adapted from Mozilla's http-observatory (httpobs 0.9.3, MPL-2.0,
# https://github.com/mozilla/http-observatory); this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the Observatory's test_misc.py: CORS and redirection (docs/conformance.md).

CORS: the Observatory's `cors` response is the page fetched with `Origin: https://{HOST}`; here it is the
snapshot's foreign-origin probe, sent with that same Origin. Its crossdomain.xml and clientaccesspolicy.xml cases
are not ported: Flash (end of life 2020-12-31) and Silverlight (2021-10-12) were their only readers, and websec
does not fetch them.

Redirection: the Observatory's `http` response with its `history` is the http:// chain of the snapshot
(`http_upgrade`), each hop a 301 to the next URL of the history, the last one answering 200.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance._observatory import HOST, URL, Case, assert_conforms, params
from tests.factories import make_response, make_snapshot
from websec_app.scanner.checks.cors import check_cors
from websec_app.scanner.checks.redirection import check_redirection
from websec_app.scanner.fetch.cors_origins import cors_probe_origins
from websec_app.scanner.snapshot import CorsProbe, Failure, FetchChain, TlsHandshake
from websec_app.scanner.target import parse_target

OBSERVATORY_ORIGIN = f"https://{HOST}"

CORS_CASES = [
    Case(
        "TestCORS.test_acao_not_implemented",
        "#0 no ACAO",
        "cross-origin-resource-sharing-not-implemented",
        {"cors": []},
        ("cors.not_exposed",),
    ),
    Case(
        "TestCORS.test_acao_public",
        "#0 Access-Control-Allow-Origin: *",
        "cross-origin-resource-sharing-implemented-with-public-access",
        {"cors": [("Access-Control-Allow-Origin", "*")]},
        ("cors.public",),
    ),
    Case(
        "TestCORS.test_acao_restricted_with_acao",
        "#0 Access-Control-Allow-Origin: https://mozilla.com",
        "cross-origin-resource-sharing-implemented-with-restricted-access",
        {"cors": [("Access-Control-Allow-Origin", "https://mozilla.com")]},
        ("cors.allowlist",),
    ),
    Case(
        "TestCORS.test_acao_universal_with_acao",
        "#0 Access-Control-Allow-Origin: https://http-observatory.security.mozilla.org, Access-Control-Allow-Credentials: true",
        "cross-origin-resource-sharing-implemented-with-universal-access",
        {
            "cors": [
                ("Access-Control-Allow-Origin", "https://http-observatory.security.mozilla.org"),
                ("Access-Control-Allow-Credentials", "true"),
            ]
        },
        ("cors.origin_reflected_credentials", "cors.vary_missing"),
    ),
]

REDIRECTION_CASES = [
    Case(
        "TestRedirection.test_no_http_but_does_have_https",
        "#0 no http",
        "redirection-not-needed-no-http",
        {"chain": None},
        ("redirect.http_not_served",),
    ),
    Case(
        "TestRedirection.test_redirection_missing",
        "#0 http://http-observatory.security.mozilla.org/",
        "redirection-missing",
        {"chain": ["http://http-observatory.security.mozilla.org/"]},
        ("redirect.missing",),
    ),
    Case(
        "TestRedirection.test_redirection_not_to_https",
        "#0 http://http-observatory.security.mozilla.org/ > http://http-observatory.security.mozilla.org/foo",
        "redirection-not-to-https",
        {
            "chain": [
                "http://http-observatory.security.mozilla.org/",
                "http://http-observatory.security.mozilla.org/foo",
            ]
        },
        ("redirect.missing",),
    ),
    Case(
        "TestRedirection.test_redirects_to_https",
        "#0 http://http-observatory.security.mozilla.org/ > https://http-observatory.security.mozilla.org/",
        "redirection-to-https",
        {"chain": ["http://http-observatory.security.mozilla.org/", "https://http-observatory.security.mozilla.org/"]},
        ("redirect.to_https",),
    ),
    Case(
        "TestRedirection.test_redirects_to_https_with_port_number",
        "#0 http://http-observatory.security.mozilla.org/ > https://http-observatory.security.mozilla.org:443/",
        "redirection-to-https",
        {
            "chain": [
                "http://http-observatory.security.mozilla.org/",
                "https://http-observatory.security.mozilla.org:443/",
            ]
        },
        ("redirect.to_https",),
    ),
    Case(
        "TestRedirection.test_redirects_invalid_cert",
        "#0 http://http-observatory.security.mozilla.org/ > https://http-observatory.security.mozilla.org/, untrusted certificate",
        "redirection-invalid-cert",
        {
            "chain": [
                "http://http-observatory.security.mozilla.org/",
                "https://http-observatory.security.mozilla.org/",
            ],
            "untrusted": True,
        },
        ("redirect.to_https",),
        why="the certificate is graded once, in the TLS section (tls.*); the redirect itself is correct",
    ),
    Case(
        "TestRedirection.test_first_redirection_still_http",
        "#0 http://http-observatory.security.mozilla.org/ > http://http-observatory.security.mozilla.org/foo > https://http-observatory.security.mozilla.org/foo",
        "redirection-not-to-https-on-initial-redirection",
        {
            "chain": [
                "http://http-observatory.security.mozilla.org/",
                "http://http-observatory.security.mozilla.org/foo",
                "https://http-observatory.security.mozilla.org/foo",
            ]
        },
        ("redirect.first_hop_http",),
    ),
    Case(
        "TestRedirection.test_first_redirection_off_host",
        "#0 http://http-observatory.security.mozilla.org/ > https://http-foo.services.mozilla.com/",
        "redirection-off-host-from-http",
        {"chain": ["http://http-observatory.security.mozilla.org/", "https://http-foo.services.mozilla.com/"]},
        ("redirect.off_host",),
    ),
    Case(
        "TestRedirection.test_all_redirections_preloaded",
        "#0 http://pokeinthe.io/ > https://pokeinthe.io/ > https://www.pokeinthe.io/ > https://baz.pokeinthe.io/foo > https://www.pokeinthe.io/foo/bar",
        "redirection-all-redirects-preloaded",
        {
            "chain": [
                "http://pokeinthe.io/",
                "https://pokeinthe.io/",
                "https://www.pokeinthe.io/",
                "https://baz.pokeinthe.io/foo",
                "https://www.pokeinthe.io/foo/bar",
            ]
        },
        ("redirect.to_https",),
    ),
]

GROUPS = {"TestCORS": CORS_CASES, "TestRedirection": REDIRECTION_CASES}


@pytest.mark.parametrize("case", params(CORS_CASES))
def test_cors(case: Case) -> None:
    probe = make_response(URL, headers=case.given["cors"])
    # The Observatory sends one Origin; our other probes get a plain answer, so only its verdict decides.
    plain = make_response(URL)
    probes = (
        CorsProbe("foreign", OBSERVATORY_ORIGIN, probe),
        *(
            CorsProbe(kind, origin, plain)
            for kind, origin in cors_probe_origins(parse_target(URL))
            if kind != "foreign"
        ),
    )
    snapshot = make_snapshot(URL, cors_probes=probes)
    assert_conforms(case, [f.outcome for f in check_cors(snapshot).findings])


def http_chain(urls: list[str] | None) -> FetchChain:
    if urls is None:  # the Observatory's `responses['http'] = None`: nothing answers on port 80
        refused = Failure("unreachable", "connection refused: nothing accepts connections on that port")
        return FetchChain(f"http://{HOST}/", (), refused)
    hops = [
        make_response(url, 301, {"Location": to}, content_type=None) for url, to in zip(urls, urls[1:], strict=False)
    ]
    return FetchChain(urls[0], (*hops, make_response(urls[-1])))


@pytest.mark.parametrize("case", params(REDIRECTION_CASES))
def test_redirection(case: Case) -> None:
    urls = case.given["chain"]
    target = URL if urls is None or HOST in urls[0] else urls[0].replace("http://", "https://")
    extra: dict[str, Any] = {}
    if case.given.get("untrusted"):  # the Observatory's `verified = False`
        extra["tls"] = TlsHandshake(host=HOST, port=443, trusted=False, verify_error="self-signed certificate")
    snapshot = make_snapshot(target, http_upgrade=http_chain(urls), **extra)
    assert_conforms(case, [f.outcome for f in check_redirection(snapshot).findings])
