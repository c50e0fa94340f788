"""The points of a diff add up to what changed (websec_app/scanner/diff.py): a finding naming several subjects
(cookies) is one finding with one deduction, so a subject joining or leaving it while it stays as it was costs
nothing, and a finding that appears, goes or changes shows its points once, not once per subject. The alert
email and the site page say "no points of its own" for such a subject rather than repeating the finding's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from websec_app.scanner.diff import diff_reports
from websec_app.services.email.monitor_alerts import monitor_alert_email
from websec_app.ui.history_view import diff_view

CHECK = "cookie.session_no_secure"


def body(subjects: list[str], score: int, *, status: str = "bad", deduction: int = 10) -> dict[str, Any]:
    finding = {"check": CHECK, "status": status, "severity": "important", "deduction": deduction}
    findings = [{**finding, "subjects": subjects}] if subjects else []
    return {"grade": "B", "score": score, "cookies": {"status": "bad", "deduction": deduction, "findings": findings}}


def points(changes: Any, side: str) -> list[int]:
    return [int((c.to_dict()[side] or {}).get("deduction", 0)) for c in changes]


def test_cookies_joining_a_finding_that_stayed_cost_no_points_in_the_diff_the_email_and_the_page() -> None:
    before, after = body(["sessionid"], 80), body(["sessionid", "auth_token", "csrftoken"], 80)

    diff = diff_reports(before, after)

    # each new cookie is named (the JSON's shape unchanged), with its status and no points of its own
    assert [c.to_dict() for c in diff.new] == [
        {
            "section": "cookies",
            "name": CHECK,
            "subject": subject,
            "severity": "important",
            "before": None,
            "after": {"status": "bad", "deduction": 0},
        }
        for subject in ("auth_token", "csrftoken")
    ]
    assert diff.fixed == () and diff.changed == ()
    mail = monitor_alert_email(
        to="a@example.com",
        url="https://s.example/",
        reasons=["x"],
        diff=diff,
        report=after,
        scanned_at=datetime(2026, 11, 22, tzinfo=UTC),
        base_url="https://w.example",
    )
    assert "score 80 -> 80." in mail.text
    assert "-10" not in mail.text and "-10" not in mail.html
    assert mail.text.count("no points of its own") == 2
    view = diff_view(diff, datetime(2026, 11, 15, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC))
    assert [r.detail for r in view.new] == ["no points of its own"] * 2

    # and the way back: the cookies leaving it are fixed, for no points either
    back = diff_reports(after, before)
    assert [(c.subject, c.to_dict()["before"]) for c in back.fixed] == [
        ("auth_token", {"status": "bad", "deduction": 0}),
        ("csrftoken", {"status": "bad", "deduction": 0}),
    ]


def test_a_finding_that_appears_goes_or_changes_shows_its_points_once() -> None:
    none, three = body([], 100), body(["sessionid", "auth_token", "csrftoken"], 90)

    appeared = diff_reports(none, three)
    assert [(c.subject, c.shared) for c in appeared.new] == [
        ("sessionid", False),
        ("auth_token", True),
        ("csrftoken", True),
    ]
    assert sum(points(appeared.new, "after")) == 10
    assert sum(points(diff_reports(three, none).fixed, "before")) == 10

    # a status change of a three-cookie finding: three entries, the points on the first only
    warned = body(["sessionid", "auth_token", "csrftoken"], 95, status="warn", deduction=5)
    changed = diff_reports(warned, three)
    assert [(c.subject, c.to_dict()["before"], c.to_dict()["after"]) for c in changed.changed] == [
        ("sessionid", {"status": "warn", "deduction": 5}, {"status": "bad", "deduction": 10}),
        ("auth_token", {"status": "warn", "deduction": 0}, {"status": "bad", "deduction": 0}),
        ("csrftoken", {"status": "warn", "deduction": 0}, {"status": "bad", "deduction": 0}),
    ]
    view = diff_view(changed, datetime(2026, 11, 15, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC))
    assert [r.detail for r in view.changed] == [
        "Warning, -5 → Bad, -10",
        "Warning → Bad, no points of its own",
        "Warning → Bad, no points of its own",
    ]

    # and a cookie added while the finding changed: its points are the changed entry's, not its own too
    grown = diff_reports(body(["sessionid"], 95, status="warn", deduction=5), three)
    assert sum(points(grown.changed, "after")) + sum(points(grown.new, "after")) == 10
    assert [c.shared for c in grown.new] == [True, True]
