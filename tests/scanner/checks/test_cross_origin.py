"""Stories about the cross-origin isolation headers (COOP, COEP, CORP)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import make_snapshot
from websec_app.scanner.checks.cross_origin import HEADERS, check_cross_origin
from websec_app.scanner.findings import STATUSES
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.snapshot import FetchChain, SiteSnapshot

CONTEXT = {"host": "example.com", "domain": "example.com", "origin": "https://example.com"}
ISOLATED = [
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Embedder-Policy", "require-corp"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
]


def outcome(subject: str, headers: list[tuple[str, str]], **kwargs: Any) -> str:
    result = check_cross_origin(make_snapshot(headers=headers, **kwargs))
    [found] = [f for f in result.findings if f.subject == subject]
    return found.outcome


def section(headers: list[tuple[str, str]]) -> dict[str, Any]:
    return grade([check_cross_origin(make_snapshot(headers=headers))], default_rulebook(), CONTEXT).sections[
        "cross_origin"
    ]


def test_an_isolated_page_is_good_everywhere() -> None:
    # Given a page with COOP same-origin, COEP require-corp and CORP same-origin
    graded = section(ISOLATED)

    # Then the section is good, deducts nothing and says the page is cross-origin isolated
    assert graded["status"] == "good"
    assert graded["deduction"] == 0
    assert graded["cross_origin_isolated"] is True
    assert all(graded[name]["status"] == "good" for name in HEADERS)


def test_a_page_without_any_loses_six_points() -> None:
    graded = section([])

    assert {name: graded[name]["deduction"] for name in HEADERS} == {
        "Cross-Origin-Opener-Policy": 3,
        "Cross-Origin-Embedder-Policy": 1,
        "Cross-Origin-Resource-Policy": 2,
    }
    assert graded["deduction"] == 6
    assert graded["status"] == "missing"
    assert graded["cross_origin_isolated"] is False


@pytest.mark.parametrize("headers", [[], ISOLATED, [(name, "bogus") for name in HEADERS]])
def test_header_objects_follow_spec_2_3(headers: list[tuple[str, str]]) -> None:
    graded = section(headers)

    for name in HEADERS:
        obj = graded[name]
        # spec 2.3's fields, and fix_snippets beside fix (issue 15: null exactly where fix is), and fix_note
        assert set(obj) == {
            "present",
            "value",
            "status",
            "severity",
            "deduction",
            "explanation",
            "fix",
            "note",
            "notes",
            "fix_snippets",
            "fix_note",
        }
        assert (obj["fix_snippets"] is None) == (obj["fix"] is None)
        assert obj["fix"] is not None or obj["fix_note"] is None
        assert obj["status"] in STATUSES
        assert obj["present"] == bool(headers)
        assert (obj["fix"] is None) == (obj["status"] == "good")
    assert {f["check"] for f in graded["findings"]} <= set(default_rulebook().rules)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("same-origin", "coop.good"),
        ('same-origin; report-to="coop"', "coop.good"),
        ("same-origin-allow-popups", "coop.allow_popups"),
        ("noopener-allow-popups", "coop.allow_popups"),
        ("unsafe-none", "coop.unsafe_none"),
        ("Same-Origin", "coop.invalid"),  # structured-field tokens are case-sensitive
        ('"same-origin"', "coop.invalid"),  # a string, not a token
        ("same-origin, same-origin", "coop.invalid"),  # two values: not one item
        ("", "coop.invalid"),
    ],
)
def test_cross_origin_opener_policy(value: str, expected: str) -> None:
    assert outcome("Cross-Origin-Opener-Policy", [("Cross-Origin-Opener-Policy", value)]) == expected


@pytest.mark.parametrize(
    ("value", "hint"),
    [("Same-Origin", "(values are case-sensitive)"), ('"same-origin"', "(it must be a bare token, without quotes)")],
)
def test_an_invalid_coop_note_says_what_is_wrong_with_the_value(value: str, hint: str) -> None:
    result = check_cross_origin(make_snapshot(headers=[("Cross-Origin-Opener-Policy", value)]))

    assert (result.findings[0].note or "").endswith(hint)


def test_coop_sent_twice_is_read_as_one_invalid_value() -> None:
    headers = [("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Opener-Policy", "same-origin")]

    result = check_cross_origin(make_snapshot(headers=headers))

    assert result.findings[0].outcome == "coop.invalid"
    assert "2 headers were sent" in (result.findings[0].note or "")


def test_coop_and_coep_need_https() -> None:
    # HTML "obtain a cross-origin opener policy": outside a secure context
    # the policy is unsafe-none whatever the header says
    url = "http://example.com/"

    assert outcome("Cross-Origin-Opener-Policy", ISOLATED, url=url) == "coop.invalid"
    assert outcome("Cross-Origin-Embedder-Policy", ISOLATED, url=url) == "coep.invalid"
    assert outcome("Cross-Origin-Resource-Policy", ISOLATED, url=url) == "corp.good"  # Fetch applies it anyway


def test_report_only_coop_is_noted() -> None:
    result = check_cross_origin(make_snapshot(headers=[("Cross-Origin-Opener-Policy-Report-Only", "same-origin")]))

    assert result.findings[0].outcome == "coop.missing"
    assert "Report-Only" in (result.findings[0].note or "")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("require-corp", "coep.good"),
        ("credentialless", "coep.good"),
        ('require-corp; report-to="coep"', "coep.good"),
        ("unsafe-none", "coep.unsafe_none"),
        ("require_corp", "coep.invalid"),
        ("Require-Corp", "coep.invalid"),
    ],
)
def test_cross_origin_embedder_policy(value: str, expected: str) -> None:
    assert outcome("Cross-Origin-Embedder-Policy", [("Cross-Origin-Embedder-Policy", value)]) == expected


def test_isolation_needs_both_coop_same_origin_and_coep() -> None:
    allow_popups = [("Cross-Origin-Opener-Policy", "same-origin-allow-popups"), ISOLATED[1]]

    assert check_cross_origin(make_snapshot(headers=allow_popups)).details["cross_origin_isolated"] is False
    assert check_cross_origin(make_snapshot(headers=ISOLATED[:2])).details["cross_origin_isolated"] is True


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("same-origin", "corp.good"),
        ("same-site", "corp.good"),
        (" same-site ", "corp.good"),
        ("cross-origin", "corp.cross_origin"),
        ("Same-Origin", "corp.invalid"),  # Fetch compares bytes exactly
        ("same-origin, same-site", "corp.invalid"),
        ("none", "corp.invalid"),
    ],
)
def test_cross_origin_resource_policy(value: str, expected: str) -> None:
    assert outcome("Cross-Origin-Resource-Policy", [("Cross-Origin-Resource-Policy", value)]) == expected


@pytest.mark.parametrize("space", ["\xa0", "\x85"])
def test_corp_with_a_space_browsers_do_not_trim_is_invalid(space: str) -> None:
    # Given CORP same-origin followed by a no-break space (U+00A0) or NEL (U+0085), which str.strip() removes
    # but Fetch does not: it trims only spaces and tabs, and Chromium ignores the header
    result = check_cross_origin(make_snapshot(headers=[("Cross-Origin-Resource-Policy", f"same-origin{space}")]))

    # Then the header protects nothing, and the note says why
    [corp] = [f for f in result.findings if f.subject == "Cross-Origin-Resource-Policy"]
    assert corp.outcome == "corp.invalid"
    assert "trim only spaces and tabs" in (corp.note or "")


def test_corp_cross_origin_is_a_deliberate_choice_without_deduction() -> None:
    obj = section([("Cross-Origin-Resource-Policy", "cross-origin")])["Cross-Origin-Resource-Policy"]

    assert obj["status"] == "good" and obj["deduction"] == 0
    assert "deliberate" in obj["note"]


def test_uppercase_corp_is_explained() -> None:
    result = check_cross_origin(make_snapshot(headers=[("Cross-Origin-Resource-Policy", "Same-Origin")]))

    assert "lowercase" in (result.findings[2].note or "")


def test_no_response_is_a_check_error() -> None:
    base = make_snapshot()
    snapshot = SiteSnapshot(target=base.target, main=FetchChain(base.target.url), fetched_at=None)

    result = check_cross_origin(snapshot)

    assert [f.outcome for f in result.findings] == ["check.error"]
    assert result.details["cross_origin_isolated"] is False
