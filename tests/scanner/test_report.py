"""The report's shared views: fixes in order of points lost, issue counts that match what is shown, the points
each section lost and what the score's floor at 0 means for them."""

from __future__ import annotations

from tests.reports import FREE_ORDER, PRO_ORDER, impact_report
from websec_app.scanner.report import count_issues, fixes_by_impact, score_floor_sentence, section_points


def _order(fixes: list) -> list[tuple[str, str, int]]:
    return [(fix.section, fix.name, fix.deduction) for fix in fixes]


def test_fixes_go_by_points_lost_then_severity_then_section() -> None:
    # Given issue 11's report: CSP -15 (warn), HSTS -12 (weak), a session cookie -10 (bad)
    report = impact_report()

    # When the fixes are ranked
    fixes = fixes_by_impact(report)

    # Then the biggest fix comes first, whatever its status, and check.error is no fix
    assert _order(fixes) == PRO_ORDER


def test_the_free_report_ranks_only_what_it_shows_and_never_drops_the_biggest_fix() -> None:
    body = impact_report().to_dict(pro=False, include_fix=False)

    top = fixes_by_impact(body, limit=5)

    assert _order(fixes_by_impact(body)) == FREE_ORDER
    assert _order(top) == FREE_ORDER[:5]
    assert top[0].name == "Content-Security-Policy" and top[0].status == "warn"


def test_a_dict_and_the_report_rank_alike() -> None:
    report = impact_report()

    assert _order(fixes_by_impact(report.to_dict())) == _order(fixes_by_impact(report))


def test_a_fix_carries_its_item_and_its_place_in_the_section() -> None:
    fixes = {(f.section, f.name): f for f in fixes_by_impact(impact_report())}

    hsts = fixes[("headers", "Strict-Transport-Security")]
    cookie = fixes[("cookies", "cookie.session_no_secure")]
    assert hsts.index == 1 and hsts.item["note"] == "max-age=300" and hsts.severity == "important"
    assert cookie.index == 0 and cookie.item["subjects"] == ["sid"]


def test_the_free_issue_counts_count_what_is_shown_and_lock_the_rest() -> None:
    # Given a report with 3 findings in the Pro-only sections (2 cookies, 1 cross-origin)
    report = impact_report()

    # When it is shown free and in full
    free = report.to_dict(pro=False)["issue_counts"]
    full = report.to_dict(pro=True)["issue_counts"]

    # Then the free counts are what the free report lists, and `locked` says how many more Pro shows
    assert free == {"critical": 0, "important": 2, "minor": 5, "total": 7, "locked": 3}
    assert full == {"critical": 0, "important": 4, "minor": 6, "total": 10, "locked": 0}
    assert free["total"] == len(fixes_by_impact(report.to_dict(pro=False)))
    assert full["total"] == len(fixes_by_impact(report))


def test_issue_counts_keep_their_meaning_every_status_but_good_and_no_check_error() -> None:
    counts = count_issues(impact_report().sections)

    assert counts == {"critical": 0, "important": 4, "minor": 6, "total": 10}


def test_a_blocked_scans_unread_headers_are_not_counted_or_listed_as_fixes() -> None:
    """A check that could not run (the page was a WAF block page) is no issue to fix (issue 11)."""
    not_checked = {
        "present": False,
        "value": None,
        "status": "warn",
        "severity": "minor",
        "deduction": 0,
        "explanation": "This check could not run.",
        "fix": None,
        "note": "not checked",
    }
    body = {
        "headers": {"Content-Security-Policy": dict(not_checked), "X-Frame-Options": dict(not_checked)},
        "page_analysis": {
            "findings": [{"check": "scan.blocked", "status": "warn", "severity": "important", "deduction": 0}]
        },
    }
    assert count_issues(body) == {"critical": 0, "important": 1, "minor": 0, "total": 1}
    assert [item.name for item in fixes_by_impact(body)] == ["scan.blocked"]


def test_a_sections_points_are_its_header_objects_in_the_header_map_and_its_own_deduction_elsewhere() -> None:
    # Given issue 11's report, scored 42: its bare header map, and cross_origin's header object beside its finding
    report = impact_report()

    # When each section's points are read
    points = {name: section_points(name, body) for name, body in report.sections.items()}

    # Then the header map's are its header objects' (15 + 12 + 5 + 3 + 3), cross_origin's its own deduction (its
    # COOP header object restates the finding, not counted twice), and together they are what the score lost
    assert points["headers"] == 38
    assert points["cross_origin"] == 2 and points["cookies"] == 12 and points["tls"] == 0
    assert sum(points.values()) == 100 - report.score


def test_past_100_points_lost_the_floor_sentence_says_how_much_must_be_fixed_before_the_score_moves() -> None:
    # A score starts from 100 and is floored at 0: up to 100 points lost, every fix moves it
    assert score_floor_sentence(100) == "" and score_floor_sentence(100, at_least=True) == ""

    # Past 100, the full report says how many points fixes must take back; a free report, which knows only a
    # lower bound of its locked sections' points, says several must be fixed
    assert score_floor_sentence(208) == (
        "All the problems found cost 208 points together, more than the 100 a score starts from, so the score "
        "stays at 0 until fixes take back more than 108 points."
    )
    assert score_floor_sentence(101).endswith("until fixes take back more than 1 point.")
    assert score_floor_sentence(172, at_least=True) == (
        "All the problems found cost at least 172 points together, more than the 100 a score starts from: the "
        "score stays at 0 until several are fixed."
    )
