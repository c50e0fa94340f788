# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
# ruff: noqa: E501  (case tables: one Observatory input and its reason per line)
"""Conformance with the MDN Observatory's test/redirection.test.js (docs/conformance.md): its routes that are new
or changed since httpobs 0.9.3.

The test's http:// route is the snapshot's http:// chain (`http_upgrade`), each hop redirecting (with the test's
status) to the next URL; the scanned site is the route's first host over https://.
"""

from __future__ import annotations

import pytest

from tests.conformance._mdn_observatory import DEFAULT_ROUTE, assert_conforms, http_chain
from tests.conformance._observatory import Case, params
from tests.factories import make_snapshot
from websec_app.scanner.checks.redirection import check_redirection

REDIRECTION_TEST = "redirection.test.js"


def route_label(route: tuple[tuple[str, int], ...]) -> str:
    return " > ".join(url for url, _ in route)


def redirection_case(
    title: str, index: int, obs: str, route: tuple[tuple[str, int], ...], ours: tuple[str, ...]
) -> Case:
    return Case(f"{REDIRECTION_TEST}: {title}", f"#{index} {route_label(route)}", obs, {"route": route}, ours)


REDIRECTION_CASES = [
    redirection_case(
        "checks for redirection not to https",
        0,
        "redirection-not-to-https",
        (("http://mozilla.org/", 301), ("http://www.mozilla.org/", 200)),
        ("redirect.missing",),
    ),
    redirection_case(
        "checks for redirection not to https",
        1,
        "redirection-not-to-https",
        (("http://mozilla.org/", 301), ("http://www.mozilla.org/", 302), ("http://www.mozilla.org/en/", 200)),
        ("redirect.missing",),
    ),
    redirection_case(
        "checks for proper redirection to https",
        0,
        "redirection-to-https",
        DEFAULT_ROUTE,
        ("redirect.to_https",),
    ),
    redirection_case(
        "checks for proper redirection to https with port number",
        0,
        "redirection-to-https",
        (("http://mozilla.org/", 301), ("https://mozilla.org:8443/", 200)),
        ("redirect.to_https",),
    ),
    redirection_case(
        "checks for first redirection to http",
        0,
        "redirection-not-to-https-on-initial-redirection",
        (("http://mozilla.org/", 301), ("http://www.mozilla.org/", 301), ("https://www.mozilla.org/", 200)),
        ("redirect.first_hop_http",),
    ),
    redirection_case(
        "checks for first redirection off host",
        0,
        "redirection-off-host-from-http",
        (("http://mozilla.org/", 301), ("https://www.mozilla.org/", 200)),
        ("redirect.off_host",),
    ),
    redirection_case(
        "checks for all redirections preloaded",
        0,
        "redirection-all-redirects-preloaded",
        (
            ("http://cloudflare.com/", 301),
            ("https://cloudflare.com/", 302),
            ("https://www.cloudflare.com/", 302),
            ("https://baz.cloudflare.com/foo", 200),
        ),
        ("redirect.to_https",),
    ),
]

GROUPS = {REDIRECTION_TEST: REDIRECTION_CASES}


@pytest.mark.parametrize("case", params(REDIRECTION_CASES))
def test_redirection(case: Case) -> None:
    route = case.given["route"]
    snapshot = make_snapshot(route[0][0].replace("http://", "https://", 1), http_upgrade=http_chain(route))
    assert_conforms(case, [f.outcome for f in check_redirection(snapshot).findings])
