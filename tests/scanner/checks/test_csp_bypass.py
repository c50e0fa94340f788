"""A script-src host known to serve JSONP endpoints or AngularJS (Google's CSP Evaluator's lists,
data/csp_script_bypass_hosts.json) is named in the Content-Security-Policy note: the policy does not stop an injected
<script src> to it (checks/csp_bypass.py)."""

from __future__ import annotations

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.headers import CSP, check_headers


def csp_note(*policies: str) -> str:
    snapshot = make_snapshot("https://example.com/", headers=[(CSP, policy) for policy in policies])
    return "; ".join(f.note or "" for f in check_headers(snapshot).findings if f.subject == CSP)


@pytest.mark.parametrize(
    ("policy", "named"),
    [
        # a host of the JSONP list, directly or under a wildcard, and a path prefix holding its endpoint
        ("script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'", "www.google.com"),
        ("script-src *.google.com", "accounts.google.com"),
        ("script-src https://ajax.googleapis.com/ajax/", "ajax.googleapis.com"),
        # Google Tag Manager's endpoint runs its callback through eval(): only with 'unsafe-eval'
        ("script-src https://www.googletagmanager.com 'unsafe-eval'", "www.googletagmanager.com"),
        # 'none' beside other sources is ignored (CSP3 §2.3.1), so the host is allowed
        ("script-src *.google.com 'none'", "accounts.google.com"),
    ],
)
def test_a_host_serving_jsonp_endpoints_is_named(policy: str, named: str) -> None:
    note = csp_note(policy)
    assert f"{named}" in note and "where Google's CSP Evaluator lists JSONP endpoints" in note, note
    assert "a callback of the attacker's runs under the policy" in note


def test_a_host_serving_angularjs_is_named() -> None:
    note = csp_note("script-src 'self' gstatic.com; object-src 'none'; base-uri 'none'")
    assert "scripts may load from gstatic.com, where Google's CSP Evaluator lists AngularJS" in note, note


@pytest.mark.parametrize(
    "policies",
    [
        # no listed URL is allowed: another host, a path beside the endpoints, an exact path that is not one
        ("script-src 'self' https://cdn.example.net",),
        ("script-src https://www.google.com/recaptcha/",),
        ("script-src https://ajax.googleapis.com/ajax",),
        # Google Tag Manager's JSONP needs eval, which the policy blocks
        ("script-src https://www.googletagmanager.com",),
        # 'strict-dynamic' drops host sources (CSP3 §8.2); a sandbox without allow-scripts runs nothing
        ("script-src 'nonce-abcdefgh12345678' 'strict-dynamic' https://www.google.com",),
        ("script-src https://www.google.com; sandbox allow-forms",),
        # every enforced policy must allow the script: the second allows nonce-bearing scripts only
        ("script-src *.google.com; object-src 'none'", "script-src 'nonce-abcdefgh12345678'; base-uri 'none'"),
        # a source of another scheme loads no script from the host over the web
        ("script-src wss://www.google.com",),
    ],
)
def test_no_listed_script_is_named_where_the_policies_do_not_allow_one(policies: tuple[str, ...]) -> None:
    assert "Google's CSP Evaluator lists" not in csp_note(*policies)


def test_a_long_list_of_hosts_names_three() -> None:
    note = csp_note("script-src *.google.com *.googleapis.com")
    assert (
        "and " in note.split("where Google's CSP Evaluator lists JSONP endpoints")[0].split("scripts may load from")[1]
    )
