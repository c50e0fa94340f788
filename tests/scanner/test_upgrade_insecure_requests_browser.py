"""Page analysis and the CSP check count upgrade-insecure-requests exactly where Chromium upgrades.

Given one fixture HTTPS site answering under one name per case, each name serving a page that loads its
script from `http://<name>/app.js` under a policy whose script-src names that http:// source, and
upgrade-insecure-requests in one place per case (a header, Report-Only, a <meta> in <head>, inside
<noscript> or <template>, in <body>, after </body>, in <head> after the script), when headless Chromium
(Debian's, through Playwright) loads it, then the script ran (it was fetched over https://, where the http://
source still matches it) exactly where page analysis says the page is upgraded and the CSP check does not call
the source insecure: both read records/csp.upgrades_insecure_requests (page analysis only from the <meta>
on). Sync Playwright must not run inside the test's event loop, so the test is synchronous.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.fixtures.sites import Behaviour, Response, SiteFactory, html
from tests.scanner.browser import pages_in_chromium
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.checks.page import check_page

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

SCRIPT = '<script src="http://{name}/app.js"></script>'
UPGRADE = '<meta http-equiv="{http_equiv}" content="upgrade-insecure-requests">'
CSP = "Content-Security-Policy"
OWN_POLICY = "script-src http://{name}; object-src 'none'; base-uri 'self'"


def with_name(name: str, headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(key, value.replace("{name}", name)) for key, value in headers]


def page(head: str = "", body: str = SCRIPT, after: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body>{after}</html>"


#: case -> (extra response headers, page, whether Chromium 156 upgrades the http:// script).
CASES: dict[str, tuple[Sequence[tuple[str, str]], str, bool]] = {
    "none": ((), page(), False),  # the control: active mixed content, blocked
    "in the policy": (((CSP, OWN_POLICY + "; upgrade-insecure-requests"),), page(), True),
    "another header": (((CSP, "upgrade-insecure-requests"),), page(), True),
    "with a value": (((CSP, "upgrade-insecure-requests\tnow"),), page(), True),  # the value is ignored
    "report-only": ((("Content-Security-Policy-Report-Only", "upgrade-insecure-requests"),), page(), False),
    "meta in head": ((), page(head=UPGRADE.format(http_equiv=CSP)), True),
    "meta, any case": ((), page(head=UPGRADE.format(http_equiv=CSP.upper())), True),
    "meta padded": ((), page(head=UPGRADE.format(http_equiv=" " + CSP)), False),
    # Chromium splits a <meta> policy on commas, as a header (CSP3 §3.3 reads one policy: img-src with two sources)
    "meta, after a comma": (
        (),
        page(head=f'<meta http-equiv="{CSP}" content="img-src *, upgrade-insecure-requests">'),
        True,
    ),
    "meta in noscript": ((), page(head=f"<noscript>{UPGRADE.format(http_equiv=CSP)}</noscript>"), False),
    "meta in template": ((), page(head=f"<template>{UPGRADE.format(http_equiv=CSP)}</template>"), False),
    "meta in body": ((), page(body=UPGRADE.format(http_equiv=CSP) + SCRIPT), False),
    "meta after body": ((), page(body="", after=UPGRADE.format(http_equiv=CSP) + SCRIPT), False),
    "meta after the script": ((), page(head=SCRIPT + UPGRADE.format(http_equiv=CSP), body=""), False),
}
#: Cases where the script is blocked but the policy's http:// source is no risk: the <meta> upgrades what follows
#: it, and what precedes it is blocked as mixed content, so the CSP check rightly does not call it insecure.
CSP_SECURE_ANYWAY = frozenset({"meta after the script"})


def test_chromium_upgrades_exactly_where_page_analysis_and_the_csp_check_say_it_does(
    site_factory: SiteFactory, pki: Pki
) -> None:
    # Given one name per case, each serving its page with the case's headers
    names = {site_factory.unique_host("uir"): case for case in CASES}

    def page(name: str) -> Behaviour:
        extra, body, _ = CASES[names[name]]
        return html(body.replace("{name}", name), headers=with_name(name, [(CSP, OWN_POLICY), *extra]))

    # When Chromium loads each
    script = Response(200, [("Content-Type", "text/javascript")], "window.ran = true")
    ran, _ = pages_in_chromium(
        site_factory, pki, names, page, {"/app.js": script}, over_http=True, evaluate="window.ran === true"
    )

    # Then the script ran where the upgrade applied
    expected = {case: upgraded for case, (_, _, upgraded) in CASES.items()}
    assert ran == expected
    # And page analysis and the CSP check say so for the same responses
    upgraded_by_page, secure_by_csp = {}, {}
    for case, (extra, body, _) in CASES.items():
        cdn = "cdn.example.com"
        headers = with_name(cdn, [(CSP, OWN_POLICY), *extra])
        snapshot = make_snapshot("https://www.example.com/", headers=headers, body=body.replace("{name}", cdn))
        upgraded_by_page[case] = check_page(snapshot).details["mixed_content"]["upgraded_by_csp"]
        findings = check_headers(snapshot).findings
        secure_by_csp[case] = not any(f.outcome == "csp.insecure_source" for f in findings)
    assert upgraded_by_page == expected
    assert secure_by_csp == {case: upgraded or case in CSP_SECURE_ANYWAY for case, upgraded in expected.items()}
