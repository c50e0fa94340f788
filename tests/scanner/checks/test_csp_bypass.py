"""A script-src host known to serve JSONP endpoints or AngularJS (Google's CSP Evaluator's lists,
data/csp_script_bypass_hosts.json) is a problem of the Content-Security-Policy header, csp.bypassable_script_host,
which names it (worth no points): the policy does not stop an injected <script src> to it (checks/csp_bypass.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks import csp_bypass
from websec_app.scanner.checks.headers import CSP, check_headers
from websec_app.scanner.findings import Finding
from websec_app.scanner.rules import default_rulebook


def csp_findings(*policies: str) -> list[Finding]:
    snapshot = make_snapshot("https://example.com/", headers=[(CSP, policy) for policy in policies])
    return [f for f in check_headers(snapshot).findings if f.subject == CSP]


def csp_note(*policies: str) -> str:
    return "; ".join(f.note or "" for f in csp_findings(*policies))


def bypass_note(*policies: str) -> str:
    """The note of the policies' csp.bypassable_script_host finding, which must be there."""
    (bypassable,) = [f for f in csp_findings(*policies) if f.outcome == "csp.bypassable_script_host"]
    return bypassable.note or ""


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
    note = bypass_note(policy)
    assert f"{named}" in note and "where Google's CSP Evaluator lists JSONP endpoints" in note, note
    assert "a callback of the attacker's runs under the policy" in note


def test_a_host_serving_angularjs_is_named() -> None:
    note = bypass_note("script-src 'self' gstatic.com; object-src 'none'; base-uri 'none'")
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
    assert "csp.bypassable_script_host" not in [f.outcome for f in csp_findings(*policies)]


def test_a_long_list_of_hosts_names_three() -> None:
    note = bypass_note("script-src *.google.com *.googleapis.com")
    assert (
        "and " in note.split("where Google's CSP Evaluator lists JSONP endpoints")[0].split("scripts may load from")[1]
    )


def test_the_bypass_is_shown_as_a_problem_worth_no_points() -> None:
    # Given a policy that is right in every other way (csp.good before), and one that also allows eval
    alone = csp_findings("script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'")
    with_eval = csp_findings("script-src https://www.google.com 'unsafe-eval'; object-src 'none'; base-uri 'none'")

    # Then the bypass is the header's problem, worth no points; the page loads no script from the host, so the fix
    # keeps it and says what to write instead; beside another problem it comes after it, and the fix repairs both
    book = default_rulebook()
    assert [f.outcome for f in alone] == ["csp.bypassable_script_host"]
    assert book.rules["csp.bypassable_script_host"].deduction == 0
    assert book.rules["csp.bypassable_script_host"].status == "warn"
    assert (
        alone[0].fix_vars["csp_proposal"]
        == "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'"
    )
    assert "https://www.google.com kept (no <script src> of this page uses it): allow only the paths" in (
        alone[0].fix_note or ""
    )
    assert "reCAPTCHA" not in (alone[0].fix_note or "")  # the hint is for www.gstatic.com
    assert [f.outcome for f in with_eval] == ["csp.unsafe_eval", "csp.bypassable_script_host"]
    assert (
        with_eval[0].fix_vars["csp_proposal"] == "script-src https://www.google.com; object-src 'none'; base-uri 'none'"
    )


RECAPTCHA_PAGE = (
    '<html><head><script src="https://www.google.com/recaptcha/api.js"></script><script src="/app.js"></script>'
    "</head><body>x</body></html>"
)


def csp_findings_on(body: str, *policies: str) -> list[Finding]:
    snapshot = make_snapshot("https://example.com/", headers=[(CSP, policy) for policy in policies], body=body)
    return [f for f in check_headers(snapshot).findings if f.subject == CSP]


def csp_fix(body: str, *policies: str) -> tuple[list[str], str, str]:
    """(outcomes, the proposed policy, its fix note) of the Content-Security-Policy header."""
    snapshot = make_snapshot("https://example.com/", headers=[(CSP, policy) for policy in policies], body=body)
    found = [f for f in check_headers(snapshot).findings if f.subject == CSP]
    return [f.outcome for f in found], found[0].fix_vars.get("csp_proposal", ""), found[0].fix_note or ""


def test_a_proposed_policy_allows_a_bypass_host_by_the_paths_the_page_loads_scripts_from() -> None:
    # Given a page without a CSP that loads reCAPTCHA from www.google.com, which also serves JSONP endpoints
    outcomes, proposal, _ = csp_fix(RECAPTCHA_PAGE)

    # Then the proposal allows /recaptcha/ there, not the whole host (which CSP Evaluator and websec flag), with the
    # path on www.gstatic.com its api.js loads the widget from (as Google documents), and the proposal, sent, is not
    # bypassable
    assert outcomes == ["csp.missing"]
    assert "script-src 'self' https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/;" in proposal
    assert csp_fix(RECAPTCHA_PAGE, proposal)[0] == ["csp.good"]


def test_the_fix_of_a_bypassable_policy_narrows_each_host_the_page_loads_from_and_keeps_the_others() -> None:
    # Given the site's policy allowing www.google.com whole, and www.gstatic.com, which no <script src> of the page
    # uses (reCAPTCHA's api.js loads from www.gstatic.com/recaptcha/ when it runs)
    policy = "script-src 'self' https://www.google.com www.gstatic.com; object-src 'none'; base-uri 'none'"
    outcomes, proposal, note = csp_fix(RECAPTCHA_PAGE, policy)

    # Then the fix is the site's policy with the paths the page loads instead, the other host kept with what to
    # write instead (removing it would break reCAPTCHA), each said
    assert outcomes == ["csp.bypassable_script_host"]
    assert proposal == (
        "script-src 'self' https://www.google.com/recaptcha/ www.gstatic.com; object-src 'none'; base-uri 'none'"
    )
    assert "https://www.google.com -> https://www.google.com/recaptcha/" in note
    assert "www.gstatic.com kept (no <script src> of this page uses it)" in note
    assert "for reCAPTCHA, https://www.gstatic.com/recaptcha/" in note


def test_a_bypass_host_in_default_src_is_narrowed_in_a_script_src_of_its_own() -> None:
    # Given default-src allowing *.google.com for everything (images from it too)
    policy = "default-src 'self' *.google.com; object-src 'none'; base-uri 'none'"
    outcomes, proposal, note = csp_fix(RECAPTCHA_PAGE, policy)

    # Then default-src is kept for the rest, and scripts get the narrowed list
    assert outcomes == ["csp.bypassable_script_host"]
    assert proposal == (
        "default-src 'self' *.google.com; object-src 'none'; base-uri 'none'; "
        "script-src 'self' https://www.google.com/recaptcha/"
    )
    assert "in a script-src of its own" in note
    assert csp_fix(RECAPTCHA_PAGE, proposal)[0] == ["csp.good"]


def test_a_script_in_a_directory_that_holds_a_known_endpoint_is_allowed_by_its_own_path() -> None:
    # Given a page loading a script beside one of CSP Evaluator's AngularJS copies (ajax.googleapis.com/ajax/libs/
    # angularjs/1.2.0rc1/angular-route.min.js), and one far from any
    page = (
        '<script src="https://ajax.googleapis.com/ajax/libs/angularjs/1.2.0rc1/angular-sanitize.min.js"></script>'
        '<script src="https://ajax.googleapis.com/ajax/libs/jquery/3.7.1/jquery.min.js"></script>'
    )
    _, proposal, _ = csp_fix(page)

    # Then the first is allowed by its own path (its directory would allow the AngularJS copy), the other by its
    # directory
    assert (
        "script-src 'self' https://ajax.googleapis.com/ajax/libs/angularjs/1.2.0rc1/angular-sanitize.min.js "
        "https://ajax.googleapis.com/ajax/libs/jquery/3.7.1/;"
    ) in proposal, proposal


@pytest.mark.parametrize(
    "policies",
    [
        # a source on another port loads nothing from the host's default port (CSP3 §6.7.2.8 port-part)
        ("script-src 'self' https://www.google.com:8443; object-src 'none'; base-uri 'none'",),
        # a policy of sandbox alone runs no script, whatever the other policy allows
        ("sandbox allow-forms", "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'"),
        ("sandbox, script-src 'self' https://www.google.com; object-src 'none'; base-uri 'none'",),
    ],
    ids=["other-port", "sandbox-policy", "sandbox-policy-one-line"],
)
def test_no_bypass_is_named_where_the_port_or_a_sandbox_stops_the_script(policies: tuple[str, ...]) -> None:
    assert "csp.bypassable_script_host" not in [f.outcome for f in csp_findings(*policies)]


@pytest.mark.parametrize("port", [":443", ":*", ""])
def test_a_source_on_the_default_port_or_any_port_allows_the_script(port: str) -> None:
    assert "www.google.com" in bypass_note(f"script-src https://www.google.com{port}; object-src 'none'")


@pytest.mark.parametrize("broad", ["https:", "*", "https://*"])
def test_a_policy_allowing_every_script_beside_one_naming_the_host_leaves_the_bypass(broad: str) -> None:
    # Given two policies: one allows any script URL, the other www.google.com: the JSONP endpoint passes both
    note = bypass_note(f"script-src {broad}", "script-src 'self' https://www.google.com; object-src 'none'")

    # Then it is named (each policy alone said nothing of it: the first is csp.broad_script_source's)
    assert "www.google.com" in note
    assert "csp.bypassable_script_host" not in [f.outcome for f in csp_findings(f"script-src {broad}")]


def test_many_policies_of_one_list_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a page of 2,000 <meta> policies each holding 50 comma-separated copies of one list (a 2 MiB page holds
    # 116,000 policies: each read against every listed script took 22.6 s)
    calls: list[tuple[str, ...]] = []
    real = csp_bypass._read_list

    def counted(sources: tuple[str, ...], eval_allowed: bool) -> Any:
        calls.append(sources)
        return real(sources, eval_allowed)

    monkeypatch.setattr(csp_bypass, "_read_list", counted)
    one = '<meta http-equiv=content-security-policy content="' + ",".join(["script-src *.google.com"] * 50) + '">'
    snapshot = make_snapshot("https://example.com/", body="<html><head>" + one * 2_000 + "</head></html>")

    # When the headers are checked
    found = [f for f in check_headers(snapshot).findings if f.subject == CSP]

    # Then the list is read once, and its bypass named
    assert calls == [("*.google.com",)]
    assert "csp.bypassable_script_host" in [f.outcome for f in found]


@pytest.mark.parametrize("culprit", ["https://www.google.com:443", "www.google.com:80", "https://*.google.com:443"])
def test_a_culprit_on_the_default_port_is_narrowed(culprit: str) -> None:
    _, proposal, _ = csp_fix(RECAPTCHA_PAGE, f"script-src 'self' {culprit}; object-src 'none'; base-uri 'self'")
    assert "https://www.google.com/recaptcha/" in proposal, proposal


def test_a_page_listing_too_many_scripts_keeps_each_culprit_and_says_why() -> None:
    # Given a page loading scripts from 25 origins (past MAX_ORIGINS) and reCAPTCHA last
    page = (
        "<html><head>"
        + "".join(f'<script src="https://a{i}.example/x.js"></script>' for i in range(25))
        + '<script src="https://www.google.com/recaptcha/api.js"></script></head><body></body></html>'
    )
    others = " ".join(f"https://a{i}.example" for i in range(25))
    _, proposal, note = csp_fix(page, f"script-src 'self' {others} https://www.google.com; object-src 'none'")

    # Then no partial list decides: www.google.com stays (reCAPTCHA keeps working), and the note says why
    assert " https://www.google.com;" in proposal
    assert "https://www.google.com kept (this page lists too many scripts to read)" in note


def test_the_hosts_of_a_policy_other_than_the_one_repaired_are_said_not_moved() -> None:
    # Given a header policy for framing and a <meta> one restricting scripts through www.google.com
    snapshot = make_snapshot(
        "https://example.com/",
        headers=[(CSP, "frame-ancestors 'self'")],
        body='<html><head><meta http-equiv="Content-Security-Policy" content="script-src \'self\' '
        "https://www.google.com; object-src 'none'; base-uri 'self'\"></head></html>",
    )
    (finding,) = [f for f in check_headers(snapshot).findings if f.subject == CSP]

    # Then the fix keeps the header policy as it is (the header is replaced by the fix), and says where to change
    assert finding.outcome == "csp.bypassable_script_host"
    assert finding.fix_vars["csp_proposal"] == "frame-ancestors 'self'"
    assert (finding.fix_note or "").startswith(
        "The proposed policy is the site's current one. The policy allowing scripts from https://www.google.com "
        "(hosts that also serve JSONP endpoints or AngularJS) is another of the site's policies"
    ), finding.fix_note


def test_the_change_note_names_a_few_sources_of_thousands() -> None:
    # Given 4,096 ways of writing www.google.com (each letter in either case), and a page loading 20 scripts under as
    # many directories there
    host = "www.google.com"
    letters = [i for i, char in enumerate(host) if char.isalpha()]
    variants = [
        "https://"
        + "".join(
            char.upper() if i in letters and mask >> letters.index(i) & 1 else char for i, char in enumerate(host)
        )
        for mask in range(2 ** len(letters))
    ]
    page = "<html><head>" + "".join(f'<script src="https://www.google.com/d{i:02d}/x.js"></script>' for i in range(20))
    found = csp_findings_on(page + "</head></html>", f"script-src 'self' {' '.join(variants)}; object-src 'none'")

    # Then the fix's note names a few and counts the rest (all of them: 7 MB)
    assert max(len(f.fix_note or "") for f in found) < 8_192
    assert "more" in (found[0].fix_note or "")


@pytest.mark.parametrize("path", ["x;sandbox", "x,sandbox"])
def test_a_script_path_adds_no_directive_or_policy(path: str) -> None:
    page = f'<html><head><script src="https://www.google.com/tools/feedback/{path}"></script></head></html>'
    _, proposal, _ = csp_fix(page, "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'self'")
    assert ";sandbox" not in proposal and ",sandbox" not in proposal, proposal


@pytest.mark.parametrize(
    "src",
    [
        "https://www.google.com/recaptcha/../recaptcha/api.js",
        "https://www.google.com/recaptcha/%2E%2E/recaptcha/api.js",
        "https://www.google.com/recaptcha/./api.js",
    ],
)
def test_a_path_with_dot_segments_is_narrowed_to_the_path_browsers_load(src: str) -> None:
    page = f'<html><head><script src="{src}"></script></head></html>'
    _, derived, _ = csp_fix(page)
    _, repaired, note = csp_fix(page, "script-src 'self' https://www.google.com; object-src 'none'")
    assert "script-src 'self' https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/;" in derived
    assert "script-src 'self' https://www.google.com/recaptcha/;" in repaired, repaired
    assert "no <script src> of this page uses it" not in note


def test_a_host_whose_jsonp_needs_eval_is_left_alone_once_the_fix_removes_eval() -> None:
    # Given Google Tag Manager allowed with 'unsafe-eval' (its JSONP runs its callback through eval), and loaded
    page = '<html><head><script src="https://www.googletagmanager.com/gtag/js?id=G-1"></script></head></html>'
    outcomes, proposal, note = csp_fix(
        page, "script-src 'self' 'unsafe-eval' https://www.googletagmanager.com; object-src 'none'; base-uri 'self'"
    )

    # Then the fix removes 'unsafe-eval', which ends the bypass: the host stays whole, and nothing is said of it
    assert outcomes == ["csp.unsafe_eval", "csp.bypassable_script_host"]
    assert proposal == "script-src 'self' https://www.googletagmanager.com; object-src 'none'; base-uri 'self'"
    assert "googletagmanager" not in note
    assert csp_fix(page, proposal)[0] == ["csp.good"]


@pytest.mark.parametrize(
    "source", ["https://www.google.com/tools%2F", "https://www.google.com/tools%2Ffeedback%2Fescalation-options"]
)
def test_an_encoded_slash_is_decoded_as_chromium_decodes_it(source: str) -> None:
    # Chromium 156 decodes a source's path whole, an encoded slash too, and loads /tools/feedback/escalation-options
    # under either (checked over loopback by the fourth review); CSP3 §6.7.2.8 would split on "/" first. A scanner
    # flags what a browser lets through
    outcomes = [f.outcome for f in csp_findings(f"script-src 'self' {source}; object-src 'none'; base-uri 'self'")]
    assert outcomes == ["csp.bypassable_script_host"]


def test_a_script_src_added_for_default_src_copies_only_writable_sources() -> None:
    policy = "default-src 'self' https://www.google.com https://cdn.example.net/${HOME}/; object-src 'none'"
    _, proposal, _ = csp_fix(RECAPTCHA_PAGE, policy)
    assert "script-src 'self' https://www.google.com/recaptcha/" in proposal and "${HOME}" not in proposal, proposal


@pytest.mark.parametrize(
    ("source", "bypassed"),
    [
        ("https://www.google.com:0443", True),  # the port-part is a number (CSP3 §6.7.2.8)
        ("https://www.google.com.", True),  # one dot may end a name
        ("https://www.google.com..", False),  # two may not
        ("https://www.google.com/%74ools/", True),  # paths compared percent-decoded: /tools/feedback/...
    ],
)
def test_ports_dots_and_escapes_are_read_as_csp3_reads_them(source: str, bypassed: bool) -> None:
    outcomes = [f.outcome for f in csp_findings(f"script-src {source}; object-src 'none'; base-uri 'none'")]
    assert ("csp.bypassable_script_host" in outcomes) == bypassed


def test_a_page_loading_from_many_directories_of_a_bypass_host_is_told_as_such() -> None:
    # Given a page loading scripts from 25 directories of www.google.com, each allowed by its path
    page = "<html><head>" + "".join(f'<script src="https://www.google.com/d{i:02d}/x.js"></script>' for i in range(25))
    _, proposal, note = csp_fix(page + "</head></html>")

    # Then past the bound the proposal is the generic policy, saying what it counted: paths, not 25 origins
    assert "script-src 'self';" in proposal
    assert "more than 20 origins and paths" in note, note


def test_a_wildcard_culprit_is_narrowed_to_the_pages_paths_and_the_origins_of_hosts_serving_no_listed_script() -> None:
    # Given *.google.com, and a page loading reCAPTCHA from www.google.com and Sign-In from apis.google.com (which
    # serves no listed script)
    page = (
        '<html><head><script src="https://www.google.com/recaptcha/api.js"></script>'
        '<script src="https://apis.google.com/js/platform.js"></script></head></html>'
    )
    _, proposal, note = csp_fix(page, "script-src 'self' https://*.google.com; object-src 'none'; base-uri 'self'")

    # Then the fix allows reCAPTCHA's path and Sign-In's origin, both scripts load, and the fix is no longer bypassable
    assert proposal == (
        "script-src 'self' https://www.google.com/recaptcha/ https://apis.google.com; "
        "object-src 'none'; base-uri 'self'"
    )
    assert "https://*.google.com -> https://www.google.com/recaptcha/ https://apis.google.com" in note
    assert csp_fix(page, proposal)[0] == ["csp.good"]


def test_a_culprit_whose_page_script_path_cannot_be_written_is_kept() -> None:
    # Given a page loading a script from www.google.com by a path a policy cannot hold as written (a quote)
    page = '<html><head><script src="https://www.google.com/x\'y/z.js"></script></head></html>'
    _, proposal, note = csp_fix(page, "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'self'")

    # Then the culprit stays, so the script loads, and the note says why
    assert proposal == "script-src 'self' https://www.google.com; object-src 'none'; base-uri 'self'"
    assert "https://www.google.com kept (this page loads scripts from it by paths a policy cannot hold" in note


def test_hosts_needing_eval_are_named_when_the_policy_allowing_eval_is_not_the_one_repaired() -> None:
    # Given a header policy for framing, and a <meta> one allowing eval and Google Tag Manager (whose JSONP needs it)
    meta = (
        "script-src 'self' 'unsafe-eval' https://www.googletagmanager.com https://www.google.com; object-src 'none'; "
        "base-uri 'self'"
    )
    snapshot = make_snapshot(
        "https://example.com/",
        headers=[(CSP, "frame-ancestors 'self'")],
        body=f'<html><head><meta http-equiv="Content-Security-Policy" content="{meta}"></head></html>',
    )
    note = " ".join(f.fix_note or "" for f in check_headers(snapshot).findings if f.subject == CSP)

    # Then the fix, which leaves the <meta> policy's eval as it is, names both hosts there
    assert "https://www.google.com, https://www.googletagmanager.com (hosts that also serve" in note, note


def test_the_fix_says_eval_is_removed_only_where_the_policy_it_repairs_writes_it() -> None:
    # Given a header policy for framing, and a <meta> one allowing eval
    meta = "script-src 'self' 'unsafe-eval' https://www.google.com; object-src 'none'; base-uri 'self'"
    snapshot = make_snapshot(
        "https://example.com/",
        headers=[(CSP, "frame-ancestors 'self'")],
        body=f'<html><head><meta http-equiv="Content-Security-Policy" content="{meta}"></head></html>',
    )
    note = " ".join(f.fix_note or "" for f in check_headers(snapshot).findings if f.subject == CSP)

    # Then the fix (the header's policy) claims no removal it did not make
    assert "'unsafe-eval' removed" not in note, note
