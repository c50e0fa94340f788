"""The headers check reads a header the way Chromium does: what Chromium obeys counts, what it ignores does not.

Given one fixture HTTPS site answering under one name per case (so every case has its own HSTS state
and origin), each name serving the case's header or page, when headless Chromium (Debian's, through
Playwright) loads it, then what Chromium does (keep HSTS, send a full Referer, run an inline script)
is what the headers check's verdict on the same value says it does.

Chromium finds the names through --host-resolver-rules and accepts the test certificate through
--ignore-certificate-errors-spki-list, under which a connection counts as secure (HSTS is processed,
RFC 6797 §8.1); the HTTPS-Upgrades feature is off, so only HSTS turns an http:// navigation into https.
The tests are synchronous: sync Playwright must not run inside the test's event loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Request, Response, RunningSite, Site, SiteFactory, TlsConfig, html
from tests.scanner.browser import chromium_for_site, pages_in_chromium
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.data import permissions_policy_features
from websec_app.scanner.records.structured_fields import parse_dictionary

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser


def outcomes(subject: str, headers: Sequence[tuple[str, str]] = (), body: str = "") -> list[str]:
    snapshot = make_snapshot(headers=list(headers), body=body)
    return [f.outcome for f in check_headers(snapshot).findings if f.subject == subject]


@dataclass(frozen=True)
class CaseSite:
    site: RunningSite
    cases: dict[str, Any]  # name -> its case's key
    echo: str  # one more name, another origin: Referer is read from requests to https://<echo>/echo


def start_site(site_factory: SiteFactory, prefix: str, answers: Mapping[Any, Behaviour]) -> CaseSite:
    """One site whose name `<prefix>-N.test` answers `/` with the N-th answer."""
    cases = {site_factory.unique_host(prefix): key for key in answers}
    echo = site_factory.unique_host(f"{prefix}-echo")

    def front(request: Request) -> Behaviour:
        return answers[cases[request.host or ""]]

    site = site_factory(
        Site(
            names=(*cases, echo),
            routes={"/": front, "/second": html("second"), "/echo": html("echo")},
            tls=TlsConfig(cert="service"),  # valid for decades around the suite's clock, whatever today is
        )
    )
    return CaseSite(site, cases, echo)


@contextmanager
def chromium(site: RunningSite, pki: Pki) -> Iterator[Any]:
    """A browser context that reaches `site` under all its names and trusts its certificate."""
    # HTTPS-Upgrades off: only HSTS may turn an http:// navigation into https://
    with chromium_for_site(site, pki, "--disable-features=HttpsUpgrades") as browser:
        yield browser.new_context()


# --- Strict-Transport-Security --------------------------------------------------------------------

#: Header value -> whether Chromium 156 keeps it (an http:// navigation is then made over https://).
HSTS_CASES = {
    None: False,  # the control: no header, no upgrade
    "max-age=31536000; includeSubDomains": True,
    # RFC 6797 §6.1 ignores unknown directives; Chromium's ParseHSTSHeader rejects repeats of only these two
    "max-age=31536000; includeSubDomains; preload; preload": True,
    "max-age=31536000; foo; foo": True,
    'max-age=31536000; preload="a;b"': True,
    "max-age=31536000; max-age=31536000": False,
    "max-age=31536000; includeSubDomains; includeSubDomains": False,
    "max-age=31536000; foo=a=b": False,
}


def test_chromium_keeps_exactly_the_hsts_headers_the_check_accepts(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a name per header value, each sending it on its HTTPS page
    answers = {
        value: html("first", headers=[("Strict-Transport-Security", value)] if value else []) for value in HSTS_CASES
    }
    started = start_site(site_factory, "hsts", answers)
    try:
        # When Chromium visits each over HTTPS, then follows an http:// link to it (port 80 refuses)
        with chromium(started.site, pki) as context:
            tab = context.new_page()
            for name in started.cases:
                tab.goto(f"https://{name}/")
            for name in started.cases:
                try:
                    tab.goto(f"http://{name}/second", timeout=5000)
                except playwright_api.Error:
                    pass  # not upgraded: the connection to port 80 is refused
    finally:
        started.site.stop()

    # Then Chromium upgraded exactly the names whose header it kept...
    upgraded = {started.cases[r.host or ""] for r in started.site.requests_to("/second") if r.scheme == "https"}
    assert {value: value in upgraded for value in HSTS_CASES} == HSTS_CASES
    # ...and the check calls exactly those headers valid
    accepted = {
        value: value is not None
        and outcomes("Strict-Transport-Security", [("Strict-Transport-Security", value)]) != ["hsts.invalid"]
        for value in HSTS_CASES
    }
    assert accepted == HSTS_CASES


# --- <meta http-equiv="Content-Security-Policy"> ---------------------------------------------------

#: http-equiv value -> whether Chromium 156 enforces the <meta> policy (it blocks the page's inline script).
META_CSP_CASES = {
    "Content-Security-Policy": True,
    "CONTENT-security-policy": True,  # an enumerated attribute: ASCII case-insensitive
    " Content-Security-Policy": False,  # ...but matched whole: HTML trims nothing
    "Content-Security-Policy\t": False,
}


def test_chromium_enforces_exactly_the_meta_policies_the_check_reads(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a page per http-equiv spelling, with a policy forbidding scripts and an inline script
    pages = {
        http_equiv: (
            f'<html><head><meta http-equiv="{http_equiv}" content="script-src \'none\'">'
            "<script>window.ran = true</script></head><body></body></html>"
        )
        for http_equiv in META_CSP_CASES
    }
    started = start_site(site_factory, "meta-csp", {key: html(body) for key, body in pages.items()})
    try:
        # When Chromium loads each
        with chromium(started.site, pki) as context:
            tab = context.new_page()
            ran = {}
            for name, http_equiv in started.cases.items():
                tab.goto(f"https://{name}/")
                ran[http_equiv] = tab.evaluate("window.ran === true")
    finally:
        started.site.stop()

    # Then the policy blocked the script exactly where the check counts it
    assert {key: not ran[key] for key in META_CSP_CASES} == META_CSP_CASES
    read = {key: outcomes("Content-Security-Policy", body=body) != ["csp.missing"] for key, body in pages.items()}
    assert read == META_CSP_CASES


#: <meta> policy -> (whether Chromium 156 runs the page's inline script, whether it runs a script of another
#: origin). Chromium splits the content on commas as it splits a header, and enforces each part (CSP3 §3.3 reads
#: one policy, where "img-src *, script-src 'none'" restricts images only and "script-src 'none', img-src *" lets
#: scripts load from anywhere).
META_COMMA_CASES = {
    "img-src *, script-src 'none'": (False, False),
    "script-src 'none', img-src *": (False, False),
    "script-src * 'unsafe-inline', script-src 'self'": (False, False),
    "script-src * 'unsafe-inline', img-src *": (True, True),
    "script-src * 'unsafe-inline' ,, img-src 'self'": (True, True),  # a part with nothing in it changes nothing
    "img-src *,": (True, True),  # the control: no script restriction
}


def test_chromium_enforces_each_comma_separated_part_of_a_meta_policy_as_the_check_reads_it(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given a page per <meta> policy, with an inline script and a script from another origin
    cdn = site_factory.unique_host("meta-comma-cdn")
    pages = {
        content: (
            f'<html><head><meta http-equiv="Content-Security-Policy" content="{content}">'
            f'<script>window.inline = true</script><script src="https://{cdn}/other.js"></script></head></html>'
        )
        for content in META_COMMA_CASES
    }
    names = {site_factory.unique_host("meta-comma"): content for content in META_COMMA_CASES}
    other = Response(200, [("Content-Type", "text/javascript")], "window.other = true")

    # When Chromium loads each
    ran, _ = pages_in_chromium(
        site_factory,
        pki,
        names,
        lambda name: html(pages[names[name]]),
        {"/other.js": other},
        more_names=(cdn,),
        evaluate="[window.inline === true, window.other === true]",
    )

    # Then the scripts ran exactly where the check says the policies let them
    assert {content: tuple(ran[content]) for content in META_COMMA_CASES} == META_COMMA_CASES
    allowed = {}
    for content, body in pages.items():
        found = set(outcomes("Content-Security-Policy", body=body))
        inline = bool(found & {"csp.unsafe_inline_script", "csp.no_script_restriction", "csp.missing"})
        anywhere = bool(found & {"csp.broad_script_source", "csp.no_script_restriction", "csp.missing"})
        allowed[content] = (inline, anywhere)
    assert allowed == META_COMMA_CASES


#: (Content-Security-Policy header lines, <meta> policy) -> (whether Chromium 156 runs the page's inline script,
#: whether it runs an https:// script of another origin). Every policy must allow a load (CSP3 §8.1), and http:
#: also matches https: URLs (CSP3 "scheme-part match"), so http: and https: together still let any https: script
#: run, where the MDN Observatory intersects them to 'none' (docs/conformance.md, its divergences); a header of an
#: unknown directive restricts nothing.
SEVERAL_POLICY_CASES: dict[tuple[tuple[str, ...], str], tuple[bool, bool]] = {
    (("default-src http:", "default-src https:"), ""): (False, True),
    (("default-src http: http:", "default-src https: https:"), ""): (False, True),
    (("default-src http:",), "default-src https:"): (False, True),
    (("default-src https://mozilla.org", "default-src https://mozilla.com"), ""): (False, False),  # the control
    (("frame-anchestors 'none'",), "frame-ancestors 'none'"): (True, True),
}


def test_chromium_enforces_several_policies_together_as_the_check_reads_them(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given a page per set of policies, with an inline script and an https:// script of another origin
    cdn = site_factory.unique_host("policies-cdn")
    names = {site_factory.unique_host("policies"): case for case in SEVERAL_POLICY_CASES}
    other = Response(200, [("Content-Type", "text/javascript")], "window.other = true")

    def page(case: tuple[tuple[str, ...], str]) -> tuple[list[tuple[str, str]], str]:
        lines, meta = case
        head = f'<meta http-equiv="Content-Security-Policy" content="{meta}">' if meta else ""
        body = (
            f"<html><head>{head}<script>window.inline = true</script>"
            f'<script src="https://{cdn}/other.js"></script></head></html>'
        )
        return [("Content-Security-Policy", line) for line in lines], body

    # When Chromium loads each
    ran, _ = pages_in_chromium(
        site_factory,
        pki,
        names,
        lambda name: html(page(names[name])[1], headers=page(names[name])[0]),
        {"/other.js": other},
        more_names=(cdn,),
        evaluate="[window.inline === true, window.other === true]",
    )

    # Then the scripts ran exactly where the check says the policies let them
    assert {case: tuple(ran[case]) for case in SEVERAL_POLICY_CASES} == SEVERAL_POLICY_CASES
    allowed = {}
    for case in SEVERAL_POLICY_CASES:
        headers, body = page(case)
        found = set(outcomes("Content-Security-Policy", headers, body))
        inline = bool(found & {"csp.unsafe_inline_script", "csp.no_script_restriction", "csp.missing", "csp.invalid"})
        anywhere = bool(found & {"csp.broad_script_source", "csp.no_script_restriction", "csp.missing", "csp.invalid"})
        allowed[case] = (inline, anywhere)
    assert allowed == SEVERAL_POLICY_CASES


# --- Referrer-Policy ---------------------------------------------------------------------------------

#: (header, page) -> whether Chromium 156 sends another origin the page's full URL as Referer.
REFERRER_CASES: dict[tuple[str | None, str], bool] = {
    (None, ""): False,  # the control: strict-origin-when-cross-origin, browsers' default
    ("unsafe-url", ""): True,
    ("no-referrer, unsafe-url", ""): True,  # the last policy browsers know wins...
    ("unsafe-url, foo", ""): True,  # ...past a well-formed one they do not know
    # A token that is not letters and hyphens: Fetch "extract header list values" fails, the header is ignored
    ("unsafe-url, foo_bar", ""): False,
    ("unsafe-url, no-referrer;", ""): False,
    ('unsafe-url, "no-referrer"', ""): False,
    ("unsafe-url", '<meta name="referrer" content="no-referrer">'): False,
    ("unsafe-url", '<meta name="REFERRER" content="no-referrer">'): False,
    ("unsafe-url", '<meta name=" referrer" content="no-referrer">'): True,  # name matched whole, untrimmed
    ("unsafe-url", '<meta name="referrer" content="NO-REFERRER">'): False,
    ("unsafe-url", '<meta name="referrer" content=" no-referrer">'): True,  # the content is not trimmed either
    ("unsafe-url", '<meta name="referrer" content="no-referrer\n">'): True,
}


def full_url_sent(site_factory: SiteFactory, pki: Pki, cases: Iterable[tuple[str | None, str]]) -> dict[Any, bool]:
    """For each (header, <head> markup) case: whether Chromium sends a cross-origin fetch the full page URL."""
    answers = {
        (header, head): html(
            f"<html><head>{head}</head><body></body></html>",
            headers=[("Referrer-Policy", header)] if header is not None else [],
        )
        for header, head in cases
    }
    started = start_site(site_factory, "referrer", answers)
    try:
        with chromium(started.site, pki) as context:
            tab = context.new_page()
            for name in started.cases:
                tab.goto(f"https://{name}/?secret=1")
                tab.evaluate(f"fetch('https://{started.echo}/echo?from={name}', {{mode: 'no-cors'}})")
    finally:
        started.site.stop()
    referers = {r.query.removeprefix("from="): r.header("Referer") for r in started.site.requests_to("/echo")}
    assert set(referers) == set(started.cases)
    return {key: referers[name] == f"https://{name}/?secret=1" for name, key in started.cases.items()}


def leaks_full_url(header: str | None, head: str) -> bool:
    """The check's verdict: the policy in force sends other sites the full URL."""
    found = outcomes("Referrer-Policy", [("Referrer-Policy", header)] if header is not None else [], head)
    return found in (["referrer.unsafe_url"], ["referrer.full_url_cross_origin"])


def test_chromium_sends_the_full_url_exactly_where_the_check_says_it_does(site_factory: SiteFactory, pki: Pki) -> None:
    sent = full_url_sent(site_factory, pki, REFERRER_CASES)

    assert sent == REFERRER_CASES
    assert {case: leaks_full_url(*case) for case in REFERRER_CASES} == REFERRER_CASES


# --- Permissions-Policy ------------------------------------------------------------------------------

#: Header value -> (the check's outcome, the names Chromium 156 calls "Unrecognized feature").
PERMISSIONS_CASES = {
    "camera=()": ("permissions.good", []),
    "camera=(), fullscreen=*": ("permissions.good", []),
    "camra=()": ("permissions.empty", ["camra"]),  # a typo restricts nothing
    "camera=*, microphone=*": ("permissions.empty", []),  # `*` allows every origin: nothing restricted
    "camra=(), geolocaton=(), camera=()": ("permissions.good", ["camra", "geolocaton"]),
}

#: The Chromium major version data/permissions_policy_features.txt was read from.
LISTED_FROM_CHROMIUM = 156

#: For each feature the header names: whether Chromium knows it, and its allowlist there.
READ_POLICY = """(names) => {
  const known = new Set(document.featurePolicy.features());
  return {
    features: [...known],
    allowlists: names.filter((name) => known.has(name))
                     .map((name) => document.featurePolicy.getAllowlistForFeature(name)),
  };
}"""


def test_chromium_restricts_a_feature_exactly_where_the_check_says_so(site_factory: SiteFactory, pki: Pki) -> None:
    # Given a page per Permissions-Policy value
    answers = {value: html("x", headers=[("Permissions-Policy", value)]) for value in PERMISSIONS_CASES}
    started = start_site(site_factory, "permissions", answers)
    unrecognised: dict[str, list[str]] = {value: [] for value in PERMISSIONS_CASES}
    restricts: dict[str, bool] = {}
    try:
        # When Chromium loads each, noting what its console says of the header
        with chromium(started.site, pki) as context:
            tab = context.new_page()
            current: list[str] = []
            tab.on("console", lambda message: current.append(message.text))
            for name, value in started.cases.items():
                current.clear()
                tab.goto(f"https://{name}/")
                read = tab.evaluate(READ_POLICY, [*parse_dictionary(value)])
                unrecognised[value] = re.findall(r"Unrecognized feature: '([^']+)'", " ".join(current))
                restricts[value] = any(allowlist != ["*"] for allowlist in read["allowlists"])
                chromium_features = set(read["features"])
            chromium_major = int(tab.evaluate("navigator.userAgent.match(/Chrome\\/(\\d+)/)[1]"))
    finally:
        started.site.stop()

    # Then Chromium ignores exactly the names the check does not count...
    assert unrecognised == {value: names for value, (_, names) in PERMISSIONS_CASES.items()}
    # ...restricts a feature exactly where the check grades the header good...
    graded = {value: outcomes("Permissions-Policy", [("Permissions-Policy", value)]) for value in PERMISSIONS_CASES}
    assert graded == {value: [outcome] for value, (outcome, _) in PERMISSIONS_CASES.items()}
    assert restricts == {value: outcome == "permissions.good" for value, (outcome, _) in PERMISSIONS_CASES.items()}
    # ...and every feature the Chromium the list was read from knows is in the data file. Another major
    # version may know more: a CI machine with Debian's next Chromium must not go red for it (refresh the
    # list then: see its header).
    if chromium_major != LISTED_FROM_CHROMIUM:
        pytest.skip(f"the feature list was read from Chromium {LISTED_FROM_CHROMIUM}, this is {chromium_major}")
    assert chromium_features - permissions_policy_features() == set()
