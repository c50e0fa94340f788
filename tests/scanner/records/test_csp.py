"""Stories about parsing Content Security Policies the way browsers do (CSP3 §2.2, §2.3.1)."""

from __future__ import annotations

import pytest

from websec_app.scanner.checks.csp import evaluate
from websec_app.scanner.records import csp


def test_directive_names_are_lowercased_and_trailing_semicolons_ignored() -> None:
    # Given a policy written in capitals with stray semicolons
    policy = csp.parse_policy("DEFAULT-SRC 'self';; Script-Src 'SELF' https://cdn.example.com ;")

    # Then directive names are lowercased, values kept as written, and nothing is lost
    assert policy.names == ("default-src", "script-src")
    assert policy.get("script-src") == ("'SELF'", "https://cdn.example.com")
    assert policy.warnings == ()


def test_a_repeated_directive_keeps_the_first_and_says_so() -> None:
    # CSP3 §2.2.1: a duplicate directive is ignored.
    policy = csp.parse_policy("script-src 'self'; script-src *")

    assert policy.get("script-src") == ("'self'",)
    assert any("appears twice" in w for w in policy.warnings)


def test_tabs_and_newlines_separate_sources() -> None:
    policy = csp.parse_policy("script-src\t'self'\nhttps://a.example")

    assert policy.get("script-src") == ("'self'", "https://a.example")


def test_a_header_with_commas_holds_several_policies() -> None:
    # CSP3 §2.2.2: each comma-separated piece is its own policy
    policies = csp.parse_header_policies(["script-src 'self', object-src 'none'", "base-uri 'none'"])

    assert [p.names for p in policies] == [("script-src",), ("object-src",), ("base-uri",)]


def test_meta_policies_drop_frame_ancestors_report_uri_and_sandbox() -> None:
    # HTML http-equiv processing removes these three from <meta> policies
    (policy,), _ = csp.parse_meta_policies("default-src 'self'; frame-ancestors 'none'; report-uri /r; sandbox")

    assert policy.names == ("default-src",)
    assert policy.delivery == "meta"
    assert len(policy.warnings) == 3


def test_a_meta_policy_is_split_on_commas_as_chromium_splits_it() -> None:
    # CSP3 §3.3 reads the content as one policy; Chromium 156 enforces each comma-separated part
    # (tests/scanner/test_headers_browser.py), and drops the parts with nothing in them
    policies, unread = csp.parse_meta_policies("img-src *, script-src 'none' ,\t, upgrade-insecure-requests,")

    assert [(p.names, p.delivery, p.enforced) for p in policies] == [
        (("img-src",), "meta", True),
        (("script-src",), "meta", True),
        (("upgrade-insecure-requests",), "meta", True),
    ]
    assert policies[1].get("script-src") == ("'none'",) and not unread


def test_a_meta_policy_of_many_commas_is_read_up_to_a_bound() -> None:
    # Given a hostile page's <meta> policy of a million parts (2 MiB of "a,": 4.5 s to parse each as a policy)
    content = "a," * 1_000_000

    # When it is parsed, then only the first parts are, and the rest is said to be unread
    policies, unread = csp.parse_meta_policies(content)
    assert len(policies) == csp.MAX_META_POLICIES and unread
    # A policy past the bound is not read (a stricter reading than Chromium's: policies only restrict)
    assert not csp.parse_meta_policies("a," * csp.MAX_META_POLICIES + "script-src 'none'")[0][-1].get("script-src")
    # Blank parts past the bound leave nothing unread
    assert csp.parse_meta_policies("script-src 'none'" + ", " * 60) == (
        csp.parse_meta_policies("script-src 'none'")[0],
        False,
    )


def test_common_typos_are_pointed_out() -> None:
    # Given a missing semicolon, unquoted keywords, an unknown and an obsolete directive
    policy = csp.parse_policy("default-src 'self' script-src self; scirpt-src 'none'; block-all-mixed-content")

    warnings = " | ".join(policy.warnings)
    assert "a ';' is probably missing" in warnings
    assert "self without single quotes" in warnings
    assert "'scirpt-src' is not a CSP directive" in warnings
    assert "block-all-mixed-content is obsolete" in warnings


def test_a_missing_semicolon_after_a_directive_without_a_source_list_is_pointed_out() -> None:
    # Given directives whose values are no source list, each followed by a directive without its ';' (the case of
    # Google's CSP Evaluator's lighthouse test "whenMissingSemicolon"): browsers set neither object-src nor
    # script-src, so the policy's note must say why
    policy = csp.parse_policy("script-src 'self'; report-uri /csp object-src 'none'; sandbox allow-forms SCRIPT-SRC")

    warnings = " | ".join(policy.warnings)
    assert "report-uri lists 'object-src', which is a directive name: a ';' is probably missing" in warnings
    assert "sandbox lists 'SCRIPT-SRC', which is a directive name" in warnings
    assert policy.get("object-src") is None
    # A Trusted Types policy may be named like a directive: that is no typo
    assert not csp.parse_policy("trusted-types script-src default").warnings


def test_serialize_round_trips_and_can_drop_sources_and_directives() -> None:
    policy = csp.parse_policy("script-src 'self' 'unsafe-eval'; object-src *;")

    assert csp.serialize(policy) == "script-src 'self' 'unsafe-eval'; object-src *"
    dropped = csp.serialize(policy, lambda _d, s: None if s == "'unsafe-eval'" else s, without=("object-src",))
    assert dropped == "script-src 'self'"


@pytest.mark.parametrize(
    ("source", "is_one"),
    [
        ("'nonce-abc123'", True),
        ("'NONCE-abc123=='", True),
        ("'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", True),
        ("'sha1-abc'", False),
        ("'nonce-'", False),  # an empty nonce is not a nonce-source and does not cancel 'unsafe-inline'
        ("nonce-abc", False),
    ],
)
def test_nonce_and_hash_sources(source: str, is_one: bool) -> None:
    assert csp.is_nonce_or_hash(source) is is_one


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("'unsafe-everything'", "not a CSP keyword"),
        ("'self", "not a CSP keyword"),  # unterminated quote
        ("'nonce-abc$'", "not a valid nonce"),
        ("'nonce-'", "not a valid nonce"),
        ("'NONCE-a.b'", "not a valid nonce"),
        ("'sha256-!!'", "not a valid hash"),
        ("'sha256-abc=def'", "not a valid hash"),  # '=' only as padding at the end
        ("'sha1-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", "not a valid hash"),  # unsupported algorithm
    ],
)
def test_malformed_sources_are_named_as_ignored(source: str, says: str) -> None:
    # Given a source expression that matches none of the CSP3 §2.3.1 productions
    policy = csp.parse_policy(f"script-src 'self' {source}")

    # Then the policy says that browsers ignore it (Chromium logs "contains an invalid source ... ignored")
    [warning] = [w for w in policy.warnings if source in w]
    assert says in warning and "ignore" in warning
    assert csp.ignored_sources(policy.get("script-src") or ()) == (source,)


@pytest.mark.parametrize(
    "text",
    [
        "script-src 'SELF' 'Unsafe-Inline' 'NONCE-abc123==' 'sha512-AbC+/-_=' 'report-sample' 'strict-dynamic'",
        "script-src 'wasm-unsafe-eval' 'unsafe-hashes' 'report-sha256' 'inline-speculation-rules'",
        "script-src 'trusted-types-eval' 'unsafe-allow-redirects'; connect-src 'unsafe-webtransport-hashes'",
        "trusted-types default 'allow-duplicates' 'none'; require-trusted-types-for 'script'",  # not source lists
        "sandbox allow-scripts; webrtc 'block'",
    ],
)
def test_valid_quoted_sources_and_non_source_list_values_are_not_called_malformed(text: str) -> None:
    policy = csp.parse_policy(text)

    assert not [w for w in policy.warnings if "ignore" in w], policy.warnings


def test_a_list_of_only_malformed_sources_matches_nothing() -> None:
    # Every source is skipped, leaving an empty list, which matches nothing (CSP3 "Does url match source list")
    assert csp.matches_nothing(("'unsafe-everything'", "'nonce-$'"))
    assert csp.matches_nothing(("'none'", "'bogus'"))
    assert not csp.matches_nothing(("'bogus'", "'self'"))


def test_upgrade_insecure_requests_counts_in_an_enforced_policy_only() -> None:
    # Upgrade Insecure Requests §4.1: the header's or a <meta>'s policy upgrades, whatever value follows the name;
    # a Report-Only one upgrades nothing
    assert csp.upgrades_insecure_requests(csp.parse_header_policies(["default-src https:, UPGRADE-INSECURE-REQUESTS"]))
    assert csp.upgrades_insecure_requests(csp.parse_meta_policies("upgrade-insecure-requests\tnow")[0])
    assert not csp.upgrades_insecure_requests(csp.parse_header_policies(["upgrade-insecure-requests"], enforced=False))
    assert not csp.upgrades_insecure_requests([csp.parse_policy("default-src https:; upgrade-insecure-requests-x")])
    assert not csp.upgrades_insecure_requests([])


def test_a_huge_policy_lists_its_skipped_sources_once_per_directive(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a <meta> policy of thousands of sources browsers skip (a hostile page may send 2 MiB of them)
    calls: list[int] = []
    real = csp.ignored_sources

    def counted(sources: tuple[str, ...]) -> tuple[str, ...]:
        calls.append(len(sources))
        return real(sources)

    monkeypatch.setattr(csp, "ignored_sources", counted)

    # When it is parsed
    skipped = " ".join(f"'x{i}" for i in range(5_000))
    (policy,), _ = csp.parse_meta_policies(f"script-src 'none' {skipped}; style-src 'self' a b")

    # Then the skipped sources are worked out once per directive, not once per source (quadratic: a 2 MiB
    # policy kept a worker busy for hours), with the same reading: every 'x is skipped, so 'none' stands alone
    assert len(calls) == 2
    assert len(policy.get("script-src") or ()) == 5_001
    assert not any("combines 'none'" in w for w in policy.warnings)
    assert csp.matches_nothing(policy.get("script-src") or ())


def test_a_source_written_many_times_is_read_once() -> None:
    # Given a <meta> policy of a million `*` (2 MiB: 2.3 s of grading CPU when each was read apart)
    (policy,), _ = csp.parse_meta_policies("script-src " + "* " * 1_000_000 + "'self' *")

    # Then each source is kept once, in the order written: a source list matches when any of its sources does
    # (CSP3 §6.7.2.5), so the copies change nothing
    assert policy.get("script-src") == ("*", "'self'")
    assert evaluate([policy]).broad_script_sources == ("*",)


def test_the_quoted_sources_of_a_long_list_are_sorted_once_for_every_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a policy of 5,000 quoted sources browsers skip, among hosts
    calls: list[str] = []
    real = csp._is_valid_quoted

    def counted(source: str) -> bool:
        calls.append(source)
        return real(source)

    monkeypatch.setattr(csp, "_is_valid_quoted", counted)
    skipped = " ".join(f"'x{i}' host{i}.example" for i in range(5_000))

    # When it is parsed and judged (which reads script-src for elements, attributes, eval, notes and flags)
    (policy,), _ = csp.parse_meta_policies(f"script-src 'none' {skipped}")
    evaluation = evaluate([policy])

    # Then each quoted source is checked twice at most (its parse warning, and the list's skipped sources once),
    # not once per reading (ten readings of a 2 MiB list took 1.2 s)
    assert len(calls) <= 2 * 5_001
    assert not evaluation.inline_script and not evaluation.broad_script_sources
