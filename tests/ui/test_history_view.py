"""The site page's pure parts (ui/history_view.py): the chart's geometry and words, the diff in plain titles."""

from __future__ import annotations

from datetime import timedelta

from tests.clock import TEST_NOW
from websec_app.scanner.diff import FindingChange, ReportDiff
from websec_app.scanner.rules.titles import plain_title
from websec_app.ui.history_view import diff_view, finding_title, history_rows, score_chart, site_path
from websec_app.usecases.history import HistoryEntry


def entry(days_ago: float, score: int, grade: str = "C", report_id: str = "r") -> HistoryEntry:
    return HistoryEntry(report_id, TEST_NOW - timedelta(days=days_ago), grade, score, "pro")


def test_points_are_spaced_by_time_oldest_left_and_score_100_on_top() -> None:
    # Newest first, as the history gives them; three days then one day apart.
    chart = score_chart([entry(0, 90, "A"), entry(1, 40, "D"), entry(4, 60)])

    assert [(p.x, p.y, p.score) for p in chart.points] == [(0.0, 40.0, 60), (75.0, 60.0, 40), (100.0, 10.0, 90)]
    assert chart.line == "0,40 75,60 100,10"
    assert chart.points[0].dot == "M0 40h0"
    assert (chart.first_day, chart.last_day) == ("2026-11-18", "2026-11-22")
    assert chart.summary == "3 scans from 2026-11-18 to 2026-11-22; lowest 40, highest 90; latest 90 (grade A)."


def test_one_scan_sits_in_the_middle_and_scans_at_one_moment_are_spread_in_order() -> None:
    assert [p.x for p in score_chart([entry(2, 70)]).points] == [50.0]
    same = [HistoryEntry(str(i), TEST_NOW, "B", 70 + i, "pro") for i in range(3)]
    assert [p.x for p in score_chart(same).points] == [0.0, 50.0, 100.0]
    assert score_chart([]).points == [] and score_chart([]).summary == "No scans yet."


def test_scores_outside_0_to_100_stay_on_the_plot() -> None:
    assert [p.y for p in score_chart([entry(1, -5), entry(0, 130)]).points] == [100.0, 0.0]


def test_history_rows_link_each_report_and_name_the_kind() -> None:
    rows = history_rows([HistoryEntry("abc", TEST_NOW, "B", 80, "monitor")])
    assert rows[0].link == "/report/abc" and rows[0].kind == "Monitor run" and rows[0].when == "2026-11-22 12:00 UTC"


def test_site_path_is_the_link_of_the_alert_emails() -> None:
    from websec_app.services.email.monitor_alerts import site_page

    url = "https://shop.example.com/a?b=c&d=e"
    assert "https://websec.example" + site_path(url) == site_page("https://websec.example", url)


def test_the_diff_in_plain_titles() -> None:
    csp = FindingChange("headers", "Content-Security-Policy", "critical", {"status": "missing", "deduction": 20}, None)
    caa = FindingChange(
        "dns", "dns.caa_missing", "important", {"status": "weak", "deduction": 3}, {"status": "missing", "deduction": 6}
    )
    diff = ReportDiff("C", "B", 64, 80, new=(), fixed=(csp,), changed=(caa,))

    view = diff_view(diff, TEST_NOW - timedelta(days=7), TEST_NOW)

    assert view.shown and view.score_change == "+16" and view.before_when == "2026-11-15 12:00 UTC"
    assert [(r.title, r.detail) for r in view.fixed] == [("Content-Security-Policy header", "-20 points")]
    assert [(r.title, r.detail) for r in view.changed] == [(plain_title("dns.caa_missing"), "Weak, -3 → Missing, -6")]
    assert view.summary == "0 new findings, 1 fixed finding, 1 changed finding; grade C → B, score 64 → 80."
    assert finding_title(FindingChange("cookies", "cookies.no_httponly", "important", None, None)) == plain_title(
        "cookies.no_httponly"
    )


def test_a_new_finding_says_what_the_scan_found_and_a_split_cookie_finding_does_not() -> None:
    # Given a later report whose new CSP finding has five notes (one longer than a row quotes), and whose cookie
    # finding names two cookies, each new
    notes = ["no object-src", "x" * 400, "no base-uri directive", "the fourth", "the fifth"]
    csp = {"status": "weak", "deduction": 20, "note": "; ".join(notes), "notes": notes}
    cookie = {"check": "cookie.no_httponly", "status": "weak", "deduction": 5, "subjects": ["sid", "tok"]}
    cookie |= {"note": "sid: x; tok: y", "notes": ["sid: x", "tok: y"]}
    report = {"headers": {"Content-Security-Policy": csp}, "cookies": {"findings": [cookie]}}
    new = (
        FindingChange("headers", "Content-Security-Policy", "important", None, {"status": "weak", "deduction": 20}),
        FindingChange("cookies", "cookie.no_httponly", "important", None, {"status": "weak", "deduction": 5}, "sid"),
    )

    view = diff_view(ReportDiff("A", "C", 90, 65, new=new), TEST_NOW - timedelta(days=1), TEST_NOW, report)

    # Then the CSP row quotes its first three notes, the long one cut, and counts the rest; the cookie row none
    assert view.new[0].found == ["no object-src", "x" * 299 + "…", "no base-uri directive"]
    assert view.new[0].more_found == "and 2 more notes in the report"
    assert (view.new[1].found, view.new[1].more_found) == ([], "")
    # and without the report, no row quotes anything
    assert diff_view(ReportDiff("A", "C", 90, 65, new=new), TEST_NOW - timedelta(days=1), TEST_NOW).new[0].found == []


def test_no_diff_before_a_second_scan_and_nothing_changed_in_words() -> None:
    assert not diff_view(None, None, TEST_NOW).shown
    same = diff_view(ReportDiff("B", "B", 80, 80), TEST_NOW - timedelta(days=1), TEST_NOW)
    assert same.summary == "Nothing changed since the scan before." and same.score_change == "no change"
