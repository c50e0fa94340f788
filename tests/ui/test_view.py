"""The report as the UI shows it: worst findings first, locked Pro sections, readable text, binding caps."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.api.fakes import make_report
from websec_app.scanner import TargetRefused, TargetUnreachable
from websec_app.store import TokenProblem, TokenRejected
from websec_app.ui.flows import FreeQuotaUsed
from websec_app.ui.messages import describe, wait_for
from websec_app.ui.view import report_view


def test_a_free_report_locks_the_pro_sections_and_has_no_fixes() -> None:
    view = report_view(make_report().to_dict(pro=False, include_fix=False))

    locked = {s.key for s in view.sections if s.locked}
    assert locked == {"cookies", "cross_origin"}
    assert not view.pro
    assert all(f.fix == "" for s in view.sections for f in s.problems)


def test_a_full_report_has_every_section_with_fixes() -> None:
    view = report_view(make_report().to_dict(pro=True, include_fix=True))

    assert view.pro and not any(s.locked for s in view.sections)
    csp = next(f for f in view.sections[0].problems if f.title.startswith("Content-Security-Policy"))
    assert csp.title == "Content-Security-Policy not set" and csp.fix == "default-src 'self'"


def test_worst_findings_come_first() -> None:
    view = report_view(make_report().to_dict())

    ranks = [("good", "warn", "weak", "missing", "bad").index(f.status) for f in view.top]
    assert ranks == sorted(ranks, reverse=True)
    assert view.top[0].status == "missing" and view.top[0].severity == "critical"
    headers = view.sections[0]
    assert [f.status for f in headers.problems] == ["missing", "weak"] and len(headers.passed) == 1


def test_markdown_backticks_are_dropped_and_dates_read_well() -> None:
    body = make_report().to_dict()
    body["cors"]["findings"][0].update(status="bad", explanation="The site echoes `Origin`. Anyone can read it.")

    view = report_view(body)

    cors = next(s for s in view.sections if s.key == "cors")
    assert cors.problems[0].title == "The site echoes Origin." and cors.problems[0].detail == "Anyone can read it."
    assert view.scanned_at == "22 Nov 2026, 12:00 UTC"


def test_only_a_cap_that_set_the_grade_is_mentioned() -> None:
    body = make_report(grade="C").to_dict()
    body["grading"]["caps"] = [
        {"outcome": "hsts.missing", "max_grade": "A"},
        {"outcome": "dns.caa_missing", "max_grade": "C"},
    ]

    assert report_view(body).caps == ["Grade capped at C: Explanation of dns.caa_missing."]


NOW = datetime(2026, 11, 22, 13, 40, tzinfo=UTC)


def test_messages_say_what_happened_and_what_next() -> None:
    quota = describe(FreeQuotaUsed(10, datetime(2026, 11, 23, tzinfo=UTC)), NOW)
    refused = describe(
        TargetRefused("Refusing to scan: 10.0.0.1 is a private address. Only public addresses can be scanned."), NOW
    )
    unreachable = describe(TargetUnreachable("DNS lookup failed: x.invalid does not exist (NXDOMAIN)"), NOW)
    used = describe(TokenRejected(TokenProblem.USED, datetime(2026, 11, 22, 9, tzinfo=UTC)), NOW)

    assert quota.kind == "quota" and "All 10 free scans" in quota.text and "in 10 h 20 min" in quota.text
    assert refused.kind == "refused" and refused.text.endswith("Only public addresses can be scanned.")
    assert unreachable.text.startswith("DNS lookup failed: x.invalid does not exist (NXDOMAIN). Check the address")
    assert "already used on Sunday 22 November 2026, 09:00 UTC" in used.text
    assert describe(RuntimeError("boom"), NOW).kind == "error"


def test_waits_read_in_days_hours_or_minutes() -> None:
    assert wait_for(datetime(2026, 12, 1, tzinfo=UTC), NOW) == "in 8 days"
    assert wait_for(datetime(2026, 11, 22, 13, 45, tzinfo=UTC), NOW) == "in 5 min"
    assert wait_for(NOW, NOW) == "in 1 min"
