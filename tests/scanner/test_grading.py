"""Grading: deductions, once per outcome, header caps, grade caps and issue counts."""

from pathlib import Path

import pytest

from websec_app.scanner.findings import CheckResult, Finding
from websec_app.scanner.grading import grade, render_template
from websec_app.scanner.rules import load_rulebook

TABLE = """
[outcomes."h.good"]
section = "headers"
subject = "X-Test"
status = "good"
severity = "important"
explanation = "fine"

[outcomes."h.missing"]
section = "headers"
subject = "X-Test"
status = "missing"
severity = "important"
deduction = 10
explanation = "absent"
fix = "X-Test: on for {host}"

[outcomes."h.weak_a"]
section = "headers"
subject = "X-Test"
status = "weak"
severity = "minor"
deduction = 6
explanation = "weak a"

[outcomes."h.warn_b"]
section = "headers"
subject = "X-Test"
status = "warn"
severity = "minor"
deduction = 6
explanation = "warn b"

[outcomes."c.insecure"]
section = "cookies"
status = "weak"
severity = "important"
deduction = 7
cwe = "CWE-614"
explanation = "cookie lacks Secure"
fix = "Set-Cookie: {name}=...; Secure"

[outcomes."c.fine"]
section = "cookies"
status = "good"
severity = "minor"
explanation = "ok"

[outcomes."x.cap"]
section = "cookies"
status = "bad"
severity = "critical"
deduction = 1
max_grade = "C"
explanation = "caps"
"""


@pytest.fixture
def book(tmp_path: Path):
    (tmp_path / "grading.toml").write_text(
        (Path(__file__).parents[2] / "websec_app/scanner/rules/grading.toml").read_text()
    )
    (tmp_path / "t.toml").write_text(TABLE)
    return load_rulebook(tmp_path)


def test_given_a_clean_site_then_score_is_100_and_grade_a_plus(book) -> None:
    results = [
        CheckResult("headers", (Finding("h.good"),), {"X-Test": {"present": True, "value": "on"}}),
        CheckResult("cookies", (Finding("c.fine"),)),
    ]
    graded = grade(results, book, {"host": "example.com"})
    assert (graded.score, graded.grade) == (100, "A+")
    assert graded.sections["headers"]["X-Test"] == {
        "present": True,
        "value": "on",
        "status": "good",
        "severity": "important",
        "deduction": 0,
        "explanation": "fine",
        "fix": None,
        "fix_snippets": None,
        "fix_note": None,
        "note": None,
        "notes": [],
    }
    assert graded.issue_counts == {"critical": 0, "important": 0, "minor": 0, "total": 0}


def test_given_a_missing_header_then_the_full_deduction_and_a_rendered_fix(book) -> None:
    results = [CheckResult("headers", (Finding("h.missing"),), {"X-Test": {"present": False, "value": None}})]
    graded = grade(results, book, {"host": "example.com"})
    header = graded.sections["headers"]["X-Test"]
    assert (header["status"], header["deduction"], header["fix"]) == ("missing", 10, "X-Test: on for example.com")
    assert graded.score == 90
    assert graded.issue_counts["important"] == 1


def test_given_several_header_problems_then_the_worst_leads_and_the_sum_is_capped_at_absence(book) -> None:
    findings = (Finding("h.warn_b", note="b"), Finding("h.weak_a", note="a"))
    graded = grade([CheckResult("headers", findings, {"X-Test": {"present": True, "value": "x"}})], book, {})
    header = graded.sections["headers"]["X-Test"]
    assert header["status"] == "weak"  # weak ranks worse than warn
    assert header["deduction"] == 10  # 6 + 6 capped at the 10 that absence costs
    assert header["note"] == "b; a"


def test_given_the_same_outcome_on_many_cookies_then_it_deducts_once_and_lists_them(book) -> None:
    findings = tuple(Finding("c.insecure", subject=name, fix_vars={"name": name}) for name in ("a", "b", "c"))
    graded = grade([CheckResult("cookies", findings, {"count": 3})], book, {})
    section = graded.sections["cookies"]
    assert section["deduction"] == 7 and graded.score == 93
    assert section["findings"][0]["subjects"] == ["a", "b", "c"]
    assert section["findings"][0]["fix"] == "Set-Cookie: a=...; Secure"
    assert section["findings"][0]["cwe"] == "CWE-614"
    assert section["count"] == 3 and section["status"] == "weak"


def test_given_a_capping_outcome_then_score_is_held_to_the_top_of_that_band(book) -> None:
    graded = grade([CheckResult("cookies", (Finding("x.cap"),))], book, {})
    assert graded.uncapped_score == 99
    assert (graded.score, graded.grade) == (69, "C")
    assert graded.caps == ({"outcome": "x.cap", "max_grade": "C"},)
    assert graded.issue_counts == {"critical": 1, "important": 0, "minor": 0, "total": 1}


def test_findings_are_listed_worst_first(book) -> None:
    graded = grade([CheckResult("cookies", (Finding("c.fine"), Finding("x.cap"), Finding("c.insecure")))], book, {})
    assert [f["check"] for f in graded.sections["cookies"]["findings"]] == ["x.cap", "c.insecure", "c.fine"]


def test_an_outcome_from_another_section_is_a_programming_error(book) -> None:
    with pytest.raises(ValueError, match="belongs to"):
        grade([CheckResult("cookies", (Finding("h.good"),))], book, {})


def test_templates_leave_unknown_placeholders_alone() -> None:
    assert render_template("{host} {other}", {"host": "a.test"}) == "a.test {other}"


def test_a_header_whose_check_could_not_run_is_shown_as_not_checked_never_good(tmp_path: Path) -> None:
    from websec_app.scanner.rules import default_rulebook

    book = default_rulebook()
    graded = grade([CheckResult("headers", (Finding("check.error", note="boom"),))], book, {})
    csp = graded.sections["headers"]["Content-Security-Policy"]
    assert (csp["status"], csp["deduction"], csp["note"]) == ("warn", 0, "not checked")


def test_a_check_that_crashes_caps_the_grade_so_a_page_cannot_delete_its_own_penalties(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a page that would lose points in headers and CORS, and checks that raise on something in it
    from tests.factories import make_snapshot
    from websec_app.scanner import checks
    from websec_app.scanner.scan import grade_snapshot

    def trips(snapshot: object) -> CheckResult:
        raise ValueError("Invalid IPv6 URL " + "x" * 1000)

    crashing = {"headers", "cors"}
    monkeypatch.setattr(checks, "CHECKS", [(s, trips if s in crashing else c) for s, c in checks.CHECKS])
    report = grade_snapshot(make_snapshot(body="<html><body>hi</body></html>"))

    # Then those sections say the scanner failed (headers: each one "not checked"), and the grade is capped
    # at F: scored 0, the crash would have removed every deduction the sections hold
    assert report.sections["headers"]["Content-Security-Policy"]["note"] == "not checked"
    [crashed] = [f for f in report.sections["cors"]["findings"] if f["check"] == "check.crashed"]
    assert crashed["note"].startswith("ValueError: Invalid IPv6 URL") and len(crashed["note"]) <= 300
    assert report.grade == "F"
    assert {"outcome": "check.crashed", "max_grade": "F"} in report.caps
