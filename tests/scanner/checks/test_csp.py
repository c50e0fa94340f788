"""Stories about what Content Security Policies allow, evaluated the way browsers do (parsing: records/test_csp.py)."""

from __future__ import annotations

import pytest

from websec_app.scanner.checks import csp
from websec_app.scanner.records.csp import effective_sources, parse_header_policies, parse_meta_policies, parse_policy

# Real-world shapes (abridged where noted, otherwise as sent).
GOOGLE_STRICT = (
    "script-src 'nonce-q7d8Mz2JvD3kXn0Ff9Q6uA' 'unsafe-inline' 'unsafe-eval' 'strict-dynamic' https: http:;"
    "object-src 'none';base-uri 'self';report-uri https://csp.withgoogle.com/csp/gws/other-hp"
)
# github.com's policy as sent in 2024 (a long allowlist, some host lists abridged).
GITHUB = "; ".join(
    [
        "default-src 'none'",
        "base-uri 'self'",
        "child-src github.com/assets-cdn/worker/ github.com/webpack/ github.com/assets/ "
        "gist.github.com/assets-cdn/worker/",
        "connect-src 'self' uploads.github.com www.githubstatus.com collector.github.com raw.githubusercontent.com "
        "api.github.com github-cloud.s3.amazonaws.com *.rel.tunnels.api.visualstudio.com "
        "wss://*.rel.tunnels.api.visualstudio.com objects-origin.githubusercontent.com *.actions.githubusercontent.com "
        "wss://*.actions.githubusercontent.com productionresultssa0.blob.core.windows.net/ wss://alive.github.com",
        "font-src github.githubassets.com",
        "form-action 'self' github.com gist.github.com copilot-workspace.githubnext.com",
        "frame-ancestors 'none'",
        "frame-src viewscreen.githubusercontent.com notebooks.githubusercontent.com",
        "img-src 'self' data: blob: github.githubassets.com media.githubusercontent.com camo.githubusercontent.com "
        "identicons.github.com avatars.githubusercontent.com private-avatars.githubusercontent.com",
        "manifest-src 'self'",
        "media-src github.com user-images.githubusercontent.com/ secured-user-images.githubusercontent.com/",
        "script-src github.githubassets.com",
        "style-src 'unsafe-inline' github.githubassets.com",
        "upgrade-insecure-requests",
        "worker-src github.com/assets-cdn/worker/ github.com/webpack/ github.com/assets/ "
        "gist.github.com/assets-cdn/worker/",
    ]
)


def evaluate(*texts: str) -> csp.CspEvaluation:
    return csp.evaluate([parse_policy(text) for text in texts])


# --- Parsing -------------------------------------------------------------------------------------


def test_the_first_of_two_duplicate_directives_decides_what_is_allowed() -> None:
    # Given a policy whose second, ignored script-src would have been broad
    evaluation = evaluate("script-src 'self'; script-src *; object-src 'none'; base-uri 'none'")

    # Then nothing broad is reported
    assert evaluation.broad_script_sources == ()


@pytest.mark.parametrize("text", ["", "   ", ";;;", ",", "\u00e9t\u00e9 'self'", "scirpt-src 'self'", "'self'"])
def test_empty_or_hostile_policies_have_no_effect_and_do_not_crash(text: str) -> None:
    # Given header values with nothing a browser can act on
    policies = parse_header_policies([text])

    # Then no policy takes effect
    assert not any(p.has_effect for p in policies)
    assert csp.evaluate(policies).policies == ()


# --- Source expressions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "broad"),
    [
        ("*", True),
        ("https:", True),
        ("HTTP:", True),
        ("data:", True),
        ("blob:", True),
        ("https://*", True),
        ("http://*:8080", True),
        ("*.example.com", False),
        ("https://cdn.example.com/js/", False),
        ("'self'", False),
        ("wss:", False),
    ],
)
def test_broad_sources(source: str, broad: bool) -> None:
    assert csp.is_broad(source) is broad


@pytest.mark.parametrize(
    ("source", "insecure"),
    [
        ("http:", True),
        ("http://cdn.example.com", True),
        ("HTTP://x.example", True),
        ("https:", False),
        ("x.com", False),
    ],
)
def test_insecure_sources(source: str, insecure: bool) -> None:
    assert csp.is_insecure(source) is insecure


# --- Evaluation: scripts --------------------------------------------------------------------------


def test_http_script_sources_are_not_insecure_under_an_enforced_upgrade_insecure_requests() -> None:
    # Given an http:// script host in a policy that also upgrades insecure requests (Chromium fetches it over TLS)
    value = "script-src 'self' http://cdn.example.com; object-src 'none'; base-uri 'self'"
    evaluation = evaluate(f"{value}; upgrade-insecure-requests")

    # Then nothing loads in cleartext, and the note says why the http:// source is fine
    assert evaluation.insecure_script_sources == ()
    assert "scripts named with http:// (http://cdn.example.com) are fetched over https://" in " ".join(evaluation.notes)

    # But a Report-Only policy upgrades nothing: the enforced one's http:// source still loads in cleartext
    report_only = parse_policy(f"{value}; upgrade-insecure-requests", enforced=False)
    assert csp.evaluate([parse_policy(value), report_only]).insecure_script_sources == ("http://cdn.example.com",)


def test_google_nonce_and_strict_dynamic_policy_is_strong_apart_from_eval() -> None:
    # Given Google's strict policy with fallbacks for old browsers
    evaluation = evaluate(GOOGLE_STRICT)

    # Then 'unsafe-inline', https: and http: are ignored by CSP3 browsers...
    assert evaluation.inline_script == ()
    assert evaluation.broad_script_sources == ()
    assert evaluation.insecure_script_sources == ()
    assert not evaluation.object_unrestricted
    assert not evaluation.base_uri_unrestricted
    # ...but 'unsafe-eval' stands, and the report explains the ignored keywords
    assert evaluation.eval_allowed
    assert any("'unsafe-inline' in script-src is ignored" in n for n in evaluation.notes)
    assert any("'strict-dynamic'" in n for n in evaluation.notes)


def test_github_long_allowlist_policy_only_allows_inline_styles() -> None:
    evaluation = evaluate(GITHUB)

    assert evaluation.restricts_scripts
    assert evaluation.inline_script == ()
    assert not evaluation.eval_allowed
    assert evaluation.broad_script_sources == ()
    assert not evaluation.object_unrestricted  # default-src 'none' covers object-src
    assert not evaluation.base_uri_unrestricted
    assert evaluation.inline_style == ("<style> elements", "style attributes")
    assert evaluation.frame_ancestors == "restrictive"


def test_unsafe_inline_without_nonce_allows_inline_script() -> None:
    evaluation = evaluate("default-src 'self' 'unsafe-inline'")

    assert evaluation.inline_script == ("<script> elements", "event handler attributes")


@pytest.mark.parametrize(
    "cancel", ["'nonce-r4nd0m'", "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", "'strict-dynamic'"]
)
def test_a_nonce_hash_or_strict_dynamic_cancels_unsafe_inline(cancel: str) -> None:
    # CSP3 "Does a source list allow all inline behavior for type?": CSP2+ browsers
    # ignore 'unsafe-inline' next to any of these
    evaluation = evaluate(f"script-src 'self' 'unsafe-inline' {cancel}")

    assert evaluation.inline_script == ()


def test_a_malformed_nonce_does_not_cancel_unsafe_inline() -> None:
    evaluation = evaluate("script-src 'self' 'unsafe-inline' 'nonce-'")

    assert evaluation.inline_script == ("<script> elements", "event handler attributes")


def test_script_src_attr_can_reopen_event_handlers() -> None:
    # Given a nonce-based script-src but handlers allowed through the -attr directive
    evaluation = evaluate("script-src 'nonce-abc'; script-src-attr 'unsafe-inline'")

    # Then <script> elements are protected but onclick= handlers are not
    assert evaluation.inline_script == ("event handler attributes",)


def test_script_src_elem_overrides_script_src_for_elements_only() -> None:
    evaluation = evaluate("script-src 'self' 'unsafe-inline'; script-src-elem 'self'")

    assert evaluation.inline_script == ("event handler attributes",)


def test_script_src_falls_back_to_default_src() -> None:
    evaluation = evaluate("default-src https:")

    assert evaluation.restricts_scripts
    assert evaluation.broad_script_sources == ("https:",)


def test_eval_is_judged_on_script_src_not_script_src_elem() -> None:
    # CSP3 EnsureCSPDoesNotBlockStringCompilation: checks script-src, then default-src; never script-src-elem
    evaluation = evaluate("script-src-elem 'self'")

    assert evaluation.restricts_scripts
    assert evaluation.eval_allowed


def test_wasm_unsafe_eval_is_not_unsafe_eval() -> None:
    evaluation = evaluate("script-src 'self' 'wasm-unsafe-eval'")

    assert not evaluation.eval_allowed
    assert any("WebAssembly" in n for n in evaluation.notes)


def test_keywords_are_case_insensitive() -> None:
    evaluation = evaluate("SCRIPT-SRC 'SELF' 'UNSAFE-INLINE' 'Unsafe-Eval'")

    assert evaluation.inline_script
    assert evaluation.eval_allowed


def test_strict_dynamic_ignores_the_host_allowlist() -> None:
    evaluation = evaluate("script-src 'nonce-abc' 'strict-dynamic' * http://cdn.example.com")

    assert evaluation.broad_script_sources == ()
    assert evaluation.insecure_script_sources == ()


def test_strict_dynamic_without_nonce_blocks_every_script() -> None:
    evaluation = evaluate("script-src 'strict-dynamic' 'unsafe-inline'")

    assert evaluation.inline_script == ()
    assert any("no script can run" in n for n in evaluation.notes)


def test_broad_and_insecure_script_sources_are_collected() -> None:
    evaluation = evaluate("script-src 'self' data: http://cdn.example.com https://*")

    assert evaluation.broad_script_sources == ("data:", "https://*")
    assert evaluation.insecure_script_sources == ("http://cdn.example.com",)


def test_none_with_other_sources_is_ignored() -> None:
    policy = parse_policy("script-src 'none' *")

    assert any("'none' is then ignored" in w for w in policy.warnings)
    assert csp.evaluate([policy]).broad_script_sources == ("*",)


def test_sandbox_without_allow_scripts_blocks_every_script() -> None:
    # Given a header policy that sandboxes the page without allow-scripts
    evaluation = evaluate("sandbox allow-forms")

    # Then no script, eval or plugin can run, although no script-src is given
    assert evaluation.restricts_scripts
    assert evaluation.inline_script == ()
    assert not evaluation.eval_allowed
    assert not evaluation.object_unrestricted


def test_sandbox_with_allow_scripts_does_not_restrict_scripts() -> None:
    evaluation = evaluate("sandbox allow-scripts allow-same-origin")

    assert not evaluation.restricts_scripts
    assert evaluation.inline_script


def test_a_policy_without_script_directives_restricts_no_scripts() -> None:
    evaluation = evaluate("upgrade-insecure-requests; frame-ancestors 'self'")

    assert not evaluation.restricts_scripts
    assert evaluation.eval_allowed


# --- Evaluation: several policies -----------------------------------------------------------------


def test_the_strictest_policy_wins_for_each_concern() -> None:
    # Given two enforced policies, each weak in a different way
    evaluation = evaluate("script-src * 'unsafe-inline'", "script-src 'self' 'unsafe-eval'")

    # Then a script must pass both: inline is blocked by the second, broad hosts by the second,
    # eval by the first
    assert evaluation.inline_script == ()
    assert evaluation.broad_script_sources == ()
    assert not evaluation.eval_allowed
    assert any("2 policies are enforced together" in n for n in evaluation.notes)


def test_a_weakness_shared_by_every_policy_remains() -> None:
    evaluation = evaluate("script-src https: 'unsafe-inline'", "default-src * 'unsafe-inline'")

    assert evaluation.inline_script
    assert evaluation.broad_script_sources == ("https:", "*")


def test_a_policy_without_scripts_does_not_weaken_another() -> None:
    evaluation = evaluate("img-src *", "script-src 'self'")

    assert evaluation.restricts_scripts
    assert evaluation.inline_script == ()


def test_report_only_policies_are_not_enforced() -> None:
    policies = parse_header_policies(["script-src 'none'"], enforced=False)

    assert csp.evaluate(policies).policies == ()


# --- Evaluation: objects, base-uri, styles, frame-ancestors -------------------------------------


@pytest.mark.parametrize(
    ("text", "unrestricted"),
    [
        ("script-src 'self'", True),
        (
            "default-src 'self'",
            False,
        ),  # object-src falls back to default-src (CSP3 §6.8, "Get fetch directive fallback list")
        ("default-src *", True),
        ("default-src 'none'", False),
        ("object-src 'none'", False),
        ("object-src 'self'", False),
        ("object-src *", True),
        ("default-src 'none'; object-src https:", True),
        ("object-src", False),  # an empty source list matches nothing
    ],
)
def test_object_src(text: str, unrestricted: bool) -> None:
    assert evaluate(text).object_unrestricted is unrestricted


def test_one_policy_restricting_objects_is_enough() -> None:
    assert not evaluate("script-src 'self'", "object-src 'none'").object_unrestricted


@pytest.mark.parametrize(
    ("text", "unrestricted"),
    [("script-src 'self'", True), ("base-uri 'none'", False), ("base-uri 'self'", False), ("base-uri *", True)],
)
def test_base_uri_has_no_fallback(text: str, unrestricted: bool) -> None:
    assert evaluate(f"default-src 'none'; {text}").base_uri_unrestricted is unrestricted


def test_inline_styles_are_flagged_only_when_explicitly_allowed() -> None:
    assert evaluate("script-src 'self'").inline_style == ()
    assert evaluate("style-src 'self' 'unsafe-inline'").inline_style == ("<style> elements", "style attributes")
    assert evaluate("style-src 'nonce-abc' 'unsafe-inline'").inline_style == ()
    assert evaluate("style-src 'self'; style-src-attr 'unsafe-inline'").inline_style == ("style attributes",)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (("default-src 'self'",), None),  # frame-ancestors has no fallback
        (("frame-ancestors 'none'",), "restrictive"),
        (("frame-ancestors 'self' https://partner.example",), "restrictive"),
        (("frame-ancestors *",), "permissive"),
        (("frame-ancestors https:", "frame-ancestors 'self'"), "restrictive"),
    ],
)
def test_frame_ancestors(texts: tuple[str, ...], expected: str | None) -> None:
    assert evaluate(*texts).frame_ancestors == expected


def test_frame_ancestors_in_a_meta_policy_does_not_count() -> None:
    evaluation = csp.evaluate(parse_meta_policies("frame-ancestors 'none'; script-src 'self'")[0])

    assert evaluation.frame_ancestors is None


# --- Fallbacks (CSP3 §6.8: "Get the effective directive for request" and the directive fallback list) -----
#
# A directive that is absent is replaced by the first present directive of its fallback list, and
# browsers then apply that source list exactly as if it had been written under the absent name.
# So a policy must be judged the same whichever name in the list carries a source list.

FALLBACK_LISTS = {
    # CSP3 §6.8 "Get fetch directive fallback list", as Chromium and Firefox implement it
    "script-src-elem": ("script-src-elem", "script-src", "default-src"),
    "script-src-attr": ("script-src-attr", "script-src", "default-src"),
    "style-src-elem": ("style-src-elem", "style-src", "default-src"),
    "style-src-attr": ("style-src-attr", "style-src", "default-src"),
    "worker-src": ("worker-src", "child-src", "script-src", "default-src"),
    "frame-src": ("frame-src", "child-src", "default-src"),
    "fenced-frame-src": ("fenced-frame-src", "frame-src", "child-src", "default-src"),  # Fenced Frames spec
    "connect-src": ("connect-src", "default-src"),
    "manifest-src": ("manifest-src", "default-src"),
    "object-src": ("object-src", "default-src"),
    "media-src": ("media-src", "default-src"),
    "font-src": ("font-src", "default-src"),
    "img-src": ("img-src", "default-src"),
    # Not a request's effective directive, but where eval() is judged (CSP3
    # "EnsureCSPDoesNotBlockStringCompilation": script-src, then default-src).
    "script-src": ("script-src", "default-src"),
    "style-src": ("style-src", "default-src"),
    "child-src": ("child-src", "default-src"),
}
# Directives that are not fetch directives never fall back to default-src (CSP3 §6.3.1 base-uri,
# §6.4.1 form-action, §6.4.2 frame-ancestors, §6.3.2 sandbox).
NO_FALLBACK = ("base-uri", "form-action", "frame-ancestors", "sandbox", "report-to", "upgrade-insecure-requests")


@pytest.mark.parametrize(("directive", "chain"), sorted(FALLBACK_LISTS.items()))
def test_every_fetch_directive_falls_back_along_its_list(directive: str, chain: tuple[str, ...]) -> None:
    # Given a policy holding only the n-th directive of the fallback list
    for position, carrier in enumerate(chain):
        # (every directive before it in the list is absent; a later one is present but must lose)
        later = "; ".join(f"{name} https://later.example" for name in chain[position + 1 :])
        policy = parse_policy(f"{carrier} 'self'" + (f"; {later}" if later else ""))

        # Then that directive is the one that applies
        assert effective_sources(policy, directive) == (carrier, ("'self'",)), (directive, carrier)


@pytest.mark.parametrize("directive", NO_FALLBACK)
def test_non_fetch_directives_have_no_fallback(directive: str) -> None:
    policy = parse_policy("default-src 'none'; script-src 'none'; child-src 'none'")

    assert effective_sources(policy, directive) is None


# Source lists a site may write, including every spelling a browser reads the same way.
SOURCE_LISTS = [
    "'self'",
    "'SELF'",
    "'none'",
    "'NONE'",
    "",  # an empty list matches nothing, like 'none' (CSP3 "Does url match source list")
    "'none' https:",  # 'none' with other sources is ignored
    "*",
    "https:",
    "http:",
    "data:",
    "https://*",
    "https://cdn.example.com",
    "http://cdn.example.com",
    "'self' 'unsafe-inline'",
    "'self' 'unsafe-eval'",
    "'self' 'wasm-unsafe-eval'",
    "'nonce-r4nd0m' 'unsafe-inline'",
    "'nonce-r4nd0m' 'strict-dynamic' https: 'unsafe-inline'",
    "'strict-dynamic'",
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' 'unsafe-inline'",
    "'unsafe-everything'",  # malformed: ignored, so the list matches nothing
]


def _object(e: csp.CspEvaluation) -> object:
    return e.object_unrestricted


def _script_elements(e: csp.CspEvaluation) -> object:
    return (
        e.restricts_scripts,
        "<script> elements" in e.inline_script,
        e.broad_script_sources,
        e.insecure_script_sources,
    )


def _script_attributes(e: csp.CspEvaluation) -> object:
    return "event handler attributes" in e.inline_script


def _eval(e: csp.CspEvaluation) -> object:
    return e.eval_allowed


def _style_elements(e: csp.CspEvaluation) -> object:
    return "<style> elements" in e.inline_style


def _style_attributes(e: csp.CspEvaluation) -> object:
    return "style attributes" in e.inline_style


# What the check judges, and the directive whose fallback list decides it.
JUDGED = [
    ("object-src", _object),
    ("script-src-elem", _script_elements),
    ("script-src-attr", _script_attributes),
    ("script-src", _eval),
    ("style-src-elem", _style_elements),
    ("style-src-attr", _style_attributes),
]


@pytest.mark.parametrize("sources", SOURCE_LISTS)
@pytest.mark.parametrize(("directive", "judge"), JUDGED, ids=[d for d, _ in JUDGED])
def test_a_fallback_is_judged_exactly_like_the_same_list_written_out(directive: str, judge, sources: str) -> None:
    # CSP3 §6.8: with `directive` absent, browsers enforce its fallback's source list in its place.
    explicit = judge(evaluate(f"{directive} {sources}"))
    for fallback in FALLBACK_LISTS[directive][1:]:
        for spelling in (fallback, fallback.upper()):  # directive names are case-insensitive (§2.2.1)
            assert judge(evaluate(f"{spelling} {sources}")) == explicit, (directive, spelling, sources)
            # the same when the fallback sits among unrelated directives
            assert judge(evaluate(f"img-src *; {spelling}\t{sources} ;form-action 'self'")) == explicit


@pytest.mark.parametrize("sources", ["'self'", "https://cdn.example.com", "'none'", ""])
def test_default_src_self_restricts_plugins_like_object_src_self(sources: str) -> None:
    # The most common baseline on the web: object-src falls back to it (CSP3 §6.8, "Get fetch directive fallback list")
    assert not evaluate(f"default-src {sources}").object_unrestricted
    assert not evaluate(f"object-src {sources}").object_unrestricted


@pytest.mark.parametrize("sources", ["*", "https:", "data:", "http://*"])
def test_a_broad_default_src_leaves_plugins_as_open_as_a_broad_object_src(sources: str) -> None:
    assert evaluate(f"default-src {sources}").object_unrestricted
    assert evaluate(f"object-src {sources}").object_unrestricted


def test_an_explicit_object_src_overrides_default_src_either_way() -> None:
    assert evaluate("default-src *; object-src 'none'").object_unrestricted is False
    assert evaluate("default-src 'none'; object-src *").object_unrestricted is True


@pytest.mark.parametrize("sources", ["'none'", "'self'", ""])
def test_base_uri_and_frame_ancestors_ignore_default_src(sources: str) -> None:
    # CSP3 §6.3.1 and §6.4.2: neither is a fetch directive, so default-src never stands in for them
    evaluation = evaluate(f"default-src {sources}")

    assert evaluation.base_uri_unrestricted
    assert evaluation.frame_ancestors is None


# --- Malformed sources (CSP3 §2.3.1 grammar; browsers skip what does not parse) ------------------


def test_a_malformed_nonce_is_named_when_it_fails_to_cancel_unsafe_inline() -> None:
    evaluation = evaluate("script-src 'nonce-abc$' 'unsafe-inline'; object-src 'none'; base-uri 'none'")

    assert evaluation.inline_script == ("<script> elements", "event handler attributes")
    assert any("'nonce-abc$'" in n and "ignore" in n for n in evaluation.notes)
