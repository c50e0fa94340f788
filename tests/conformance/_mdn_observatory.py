# Test cases adapted from the MDN HTTP Observatory (MPL-2.0, https://github.com/mdn/mdn-http-observatory);
# this file is available under MPL-2.0.
"""Shared pieces of the MDN HTTP Observatory conformance suite (docs/conformance.md).

The MDN HTTP Observatory replaced Mozilla's Python httpobs in 2024 (Node.js, mdn/mdn-http-observatory). Its
`test/*.test.js` files are ported here as the httpobs 0.9.3 ones are (tests/conformance/_observatory.py): a case
is one input a test builds, the result name it asserts, and websec's exact outcome ids for that input, held to
mdn_observatory_map.toml both ways. Only what httpobs 0.9.3 did not test is ported: the groups it lacks
(Cross-Origin-Opener-Policy, -Embedder-Policy, -Resource-Policy, the CSP parser) and, in the other groups, the
inputs or results that are new or changed; an input already ported from httpobs, the scanned host and markup
whitespace aside, is not repeated.

Every MDN test scans https://mozilla.org/ (test/helpers.js `emptyRequests`), whose http:// form redirects to
https://mozilla.org/ and then to https://www.mozilla.org/ unless the test says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from tests.conformance._observatory import HERE, Case, Table
from tests.factories import make_response
from websec_app.scanner.snapshot import Failure, FetchChain

HOST = "mozilla.org"
URL = f"https://{HOST}/"
#: A test's http:// route, (URL, status) per hop; None: nothing answers on port 80 (`responses.http = null`).
Route = Sequence[tuple[str, int]] | None
#: emptyRequests' route, which a test keeps unless it sets its own
DEFAULT_ROUTE: tuple[tuple[str, int], ...] = (
    ("http://mozilla.org/", 301),
    ("https://mozilla.org/", 301),
    ("https://www.mozilla.org/", 200),
)
MDN = Table.load("mdn_observatory_map.toml")


def fixture(name: str) -> str:
    """One of the MDN tests' HTML pages (test/files/), copied unchanged to tests/conformance/files/mdn/."""
    return (HERE / "files" / "mdn" / name).read_text()


def assert_conforms(case: Case, actual: Sequence[str]) -> None:
    MDN.assert_conforms(case, actual)


def http_chain(route: Route) -> FetchChain:
    """The snapshot's http:// chain (`http_upgrade`) for a test's route: each hop redirects to the next URL."""
    if route is None:
        refused = Failure("unreachable", "connection refused: nothing accepts connections on that port")
        return FetchChain(f"http://{HOST}/", (), refused)
    hops = [
        make_response(url, status, {"Location": to}, content_type=None)
        for (url, status), (to, _) in zip(route, route[1:], strict=False)
    ]
    last_url, last_status = route[-1]
    return FetchChain(route[0][0], (*hops, make_response(last_url, last_status)))
