# Test cases adapted from the http-state cookie parser suite (Adam Barth, IETF http-state working group), as
# web-platform-tests carries it (cookies/http-state/, BSD-3-Clause) and tough-cookie ships it in one file
# (test/ietf_data/parser.json, MIT: (C) GoInstant, Inc. and other contributors), copied unchanged to
# files/http-state-parser.json, with its licence in files/http-state-parser.LICENSE.
# ruff: noqa: E501  (case tables: one suite test and its reason per line)
"""Conformance of websec's cookie jar with the http-state cookie parser suite (docs/conformance.md, _http_state.py).

Every case of files/http-state-parser.json is read; websec's Cookie header for it (judged at TEST_NOW) must be the
suite's, unless the case is a documented divergence (DIVERGES: the 2011 expectation is not what Chromium 156 does,
and websec does what Chromium does; test_http_state_browser.py checks that against Chromium) or is not ported
(NOT_PORTED, with the reason). A divergence that comes to agree fails, so no case drifts unnoticed.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from tests.clock import TEST_NOW
from tests.conformance._http_state import SUITE, SuiteCase, load_suite, websec_sends

CASES = load_suite()
#: tough-cookie's test/ietf_data/parser.json (salesforce/tough-cookie 1af799c7a5024121691e9fcab3cc7e5e0556de2b)
SUITE_SHA256 = "abb466a68ddc62d33f48becd911e8d42119a5bbefe0e6b0ad2c7c34c0dc906ab"

EXPIRED = (
    "the Expires date has passed since the suite was written (2011): an expired cookie is not stored (6265bis 5.7)"
)
NAMELESS = "6265bis 5.6: a line without a name (no '=', or nothing before it) is a cookie of an empty name, which Chromium 156 stores and sends as its bare value; RFC 6265 ignored the line"

DIVERGES: dict[str, str] = {
    "0002": EXPIRED,
    "0003": EXPIRED,
    "COMMA0006": EXPIRED,
    "COMMA0007": EXPIRED,
    "0004": NAMELESS,
    "0021": NAMELESS,
    "0023": NAMELESS,
    "0024": NAMELESS,
    "0025": NAMELESS,
    "0026": NAMELESS,
    "0027": NAMELESS,
    "0028": NAMELESS,
    "CHROMIUM0009": NAMELESS,
    "CHROMIUM0010": NAMELESS,
    "CHROMIUM0012": NAMELESS,
    "MOZILLA0012": NAMELESS,
    "MOZILLA0014": NAMELESS,
    "MOZILLA0015": NAMELESS,
    "MOZILLA0016": NAMELESS,
    "MOZILLA0017": NAMELESS,
    "NAME0023": NAMELESS,
    "NAME0028": NAMELESS,
    "NAME0031": NAMELESS,
    "NAME0032": NAMELESS,
    "NAME0033": NAMELESS,
    "OPTIONAL_DOMAIN0042": "6265bis 5.7: the last Domain attribute counts, and an empty one leaves the cookie host-only, so it is sent back to its host (RFC 6265 let a user agent ignore the empty one)",
    "ORDERING0001": "6265bis 5.8.3 step 2: cookies with longer paths come first, so key=val5 (/cookie-parser-result/foo) leads; the suite lists it last",
    "DISABLED_CHROMIUM0022": "a NUL in a header line: Chromium refuses the whole response (ERR_INVALID_HTTP_RESPONSE), so no cookie is set",
    "DISABLED_PATH0029": "6265bis 5.1.4 compares paths as written: /f%6Fo/bar is not under /foo/bar, and Chromium sends nothing",
}

NOT_PORTED: dict[str, str] = {
    "DISABLED_CHROMIUM0023": "a bare CR inside a header line is HTTP framing, not cookie parsing: Chromium ends the line there, websec's HTTP client (h11) refuses the response",
}


def group(name: str) -> str:
    """The suite's group of a test: the name's letters without DISABLED_/OPTIONAL_ ("GENERAL" for the bare numbers)."""
    letters = re.sub(r"^(DISABLED|OPTIONAL)_|\d+$", "", name)
    return letters or "GENERAL"


def tally(names: list[str]) -> tuple[int, int, int, int]:
    """(cases, agree, divergences, not ported)."""
    kinds = Counter("not ported" if n in NOT_PORTED else "diverges" if n in DIVERGES else "agrees" for n in names)
    return len(names), kinds["agrees"], kinds["diverges"], kinds["not ported"]


GROUPS: dict[str, list[str]] = {}
for _name in CASES:
    GROUPS.setdefault(group(_name), []).append(_name)


def ours(case: SuiteCase) -> str:
    return websec_sends(case.received, case.set_from, case.sent_to, TEST_NOW)


def test_the_suite_file_is_the_one_ported() -> None:
    assert hashlib.sha256(SUITE.read_bytes()).hexdigest() == SUITE_SHA256
    assert len(CASES) == 222
    assert set(DIVERGES) | set(NOT_PORTED) <= set(CASES) and not set(DIVERGES) & set(NOT_PORTED)


def test_websec_sends_what_the_suite_expects_but_for_the_documented_divergences() -> None:
    ported = [case for name, case in CASES.items() if name not in NOT_PORTED]
    agreeing = {case.name: ours(case) for case in ported if case.name not in DIVERGES}
    assert agreeing == {name: CASES[name].expected for name in agreeing}
    still_agreeing = [case.name for case in ported if case.name in DIVERGES and ours(case) == case.expected]
    assert still_agreeing == [], "a divergence that agrees now must leave DIVERGES"


def test_a_cookie_without_a_name_is_sent_back_as_its_value() -> None:
    # the cases the fix of ChainCookies is about, asserted outright (Chromium 156's answers, test_http_state_browser.py)
    assert ours(CASES["0027"]) == "bar"
    assert ours(CASES["MOZILLA0017"]) == "eight; test=six"
    assert ours(CASES["0021"]) == "a=b; x; c=d"
    assert ours(CASES["NAME0033"]) == "aaa"  # "=foo=bar" is refused: it would read back as foo=bar
