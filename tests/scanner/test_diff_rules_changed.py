"""Two reports graded by different rules (a check added, a deduction changed: rules/grading.toml's version moved
between them) may differ with nothing changed on the site. The diff knows both versions, and the alert email and
the site page say so beside the change; reports graded alike, or one that does not say, get no such sentence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from websec_app.scanner.diff import ReportDiff, diff_reports
from websec_app.services.email.monitor_alerts import monitor_alert_email
from websec_app.services.email.render import RenderedEmail
from websec_app.ui.history_view import diff_view

NOTE = (
    "The two scans were graded with different rules (2026.11.23, then 2026.11.29): part of this change may come "
    "from what websec checks now, not from the site."
)


def body(version: str | None, *, new_check: bool = False) -> dict[str, Any]:
    finding = {"check": "redirect.host_without_hsts", "status": "warn", "severity": "minor", "deduction": 3}
    report: dict[str, Any] = {
        "grade": "A+",
        "score": 97 if new_check else 100,
        "redirection": {
            "status": "warn",
            "deduction": 3 if new_check else 0,
            "findings": [finding] if new_check else [],
        },
    }
    if version is not None:
        report["grading"] = {"algorithm_version": version, "uncapped_score": report["score"], "caps": []}
    return report


def alert(diff: ReportDiff) -> RenderedEmail:
    return monitor_alert_email(
        to="a@example.com",
        url="https://s.example/",
        reasons=["x"],
        diff=diff,
        report=None,
        scanned_at=datetime(2026, 11, 22, tzinfo=UTC),
        base_url="https://websec.example",
    )


def test_a_finding_new_under_new_rules_is_said_to_maybe_come_from_them_in_the_email_and_on_the_site_page() -> None:
    # Given a monitored site unchanged between two scans, the second graded by rules that added a check it fails
    diff = diff_reports(body("2026.11.23"), body("2026.11.29", new_check=True))
    assert [c.name for c in diff.new] == ["redirect.host_without_hsts"]
    # Then the diff says the rules changed, and the alert email and the site page repeat it after the grade line
    assert diff.rules_note == NOTE
    mail = alert(diff)
    lines = mail.text.splitlines()
    assert lines[lines.index("Grade A+ -> A+, score 100 -> 97.") + 1] == NOTE
    assert NOTE in mail.html
    view = diff_view(diff, datetime(2026, 11, 21, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC))
    assert view.rules_note == NOTE
    # And the JSON of the diff keeps its shape
    assert set(diff.to_dict()) == {"grade", "score", "new", "fixed", "changed"}


def test_reports_graded_alike_or_without_a_version_get_no_such_sentence() -> None:
    when = datetime(2026, 11, 22, tzinfo=UTC)
    for before, after in (("2026.11.29", "2026.11.29"), (None, "2026.11.29"), ("2026.11.23", None)):
        diff = diff_reports(body(before), body(after, new_check=True))
        assert diff.rules_note is None
        assert diff_view(diff, when - timedelta(days=1), when).rules_note == ""
        assert "graded with different rules" not in alert(diff).text
