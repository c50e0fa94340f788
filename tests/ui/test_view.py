"""The report as the UI shows it: worst findings first, locked Pro sections, readable text, binding caps."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from tests.api.fakes import make_report
from tests.reports import FREE_ORDER, impact_report
from websec_app.scanner import SECTIONS, TargetRefused, TargetUnreachable
from websec_app.scanner.report import fixes_by_impact
from websec_app.scanner.rules import default_rulebook
from websec_app.store import TokenProblem, TokenRejected
from websec_app.ui.evidence import ScoreBar
from websec_app.ui.messages import describe, wait_for
from websec_app.ui.view import PRO_ONLY_NAMES, _headline, _prose, report_view
from websec_app.usecases import FreeQuotaUsed


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


def test_sections_carry_the_section_tables_titles_and_summaries_in_its_order() -> None:
    # Given the same scan as a full and as a free report
    full = report_view(make_report().to_dict(pro=True))
    free = report_view(make_report().to_dict(pro=False, include_fix=False))

    # Then both list every section of the table, in its order, under its title and summary (free: Pro-only locked)
    for view in (full, free):
        assert [(s.key, s.title, s.about) for s in view.sections] == [(e.key, e.title, e.summary) for e in SECTIONS]
    assert [s.key for s in free.sections if s.locked] == [e.key for e in SECTIONS if e.pro_only]
    assert PRO_ONLY_NAMES == "cookies and cross-origin isolation"


def test_worst_findings_come_first_within_a_section() -> None:
    view = report_view(make_report().to_dict())

    headers = view.sections[0]
    assert [f.status for f in headers.problems] == ["missing", "weak"] and len(headers.passed) == 1


def test_fix_these_first_goes_by_points_lost_and_keeps_the_biggest_fix() -> None:
    # Given issue 11's report: CSP -15 (warn), HSTS -12 (weak), the rest -5 and less
    body = impact_report().to_dict(pro=False, include_fix=False)

    # When the report page builds its rows
    view = report_view(body)

    # Then "Fix these first" is the shared ranking's top five, CSP first, each linking to its finding
    assert [f.deduction for f in view.top] == [d for _, _, d in FREE_ORDER[:5]]
    assert view.top[0].title == "Content-Security-Policy weakened"
    assert [f.key for f in view.top] == [f"{fix.section}-{fix.index}" for fix in fixes_by_impact(body, limit=5)]
    anchors = {f.key for s in view.sections for f in s.problems}
    assert {f.key for f in view.top} <= anchors


def test_a_free_report_says_how_many_findings_pro_would_add() -> None:
    free = report_view(impact_report().to_dict(pro=False, include_fix=False))
    full = report_view(impact_report().to_dict())

    assert (free.total, free.locked) == (7, 3)
    assert (
        free.locked_text == "3 more findings in cookies and cross-origin isolation: Pro or a one-time scan shows them."
    )
    assert (full.locked, full.locked_text) == (0, "")


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

    assert quota.kind == "quota" and "used its 10 free scans for today" in quota.text and "in 10 h 20 min" in quota.text
    assert refused.kind == "refused" and refused.text.endswith("Only public addresses can be scanned.")
    assert unreachable.text.startswith("DNS lookup failed: x.invalid does not exist (NXDOMAIN). Check the address")
    assert "already used on Sunday 22 November 2026, 09:00 UTC" in used.text
    assert describe(RuntimeError("boom"), NOW).kind == "error"


def test_a_site_requiring_a_client_certificate_is_not_said_to_be_down() -> None:
    reason = "the server requires a client certificate (mutual TLS): it answered the request with the TLS alert"
    refused = TargetUnreachable(f"Could not reach https://x.test/: {reason}", url="https://x.test/", reason=reason)
    down = TargetUnreachable("Could not reach https://x.test/: connection refused", reason="connection refused")

    assert describe(refused, NOW).title == "The site requires a client certificate"
    assert "Scan a page of the site that does not ask for one" in describe(refused, NOW).text
    assert describe(down, NOW).title == "The site could not be reached"


def test_waits_read_in_days_hours_or_minutes() -> None:
    assert wait_for(datetime(2026, 12, 1, tzinfo=UTC), NOW) == "in 8 days"
    assert wait_for(datetime(2026, 11, 22, 13, 45, tzinfo=UTC), NOW) == "in 5 min"
    assert wait_for(NOW, NOW) == "in 1 min"


def test_points_and_waits_are_counted_in_words() -> None:
    view = report_view(impact_report().to_dict())

    dns = next(s for s in view.sections if s.key == "dns")
    assert dns.problems[0].points == "−1 pt" and dns.points == "−1 pt"
    assert view.top[0].points == "−15 pts"
    assert wait_for(datetime(2026, 11, 23, 13, 40, tzinfo=UTC), NOW) == "in 1 day"


def test_counts_of_one_read_in_the_singular() -> None:
    from websec_app.services.admission import ScannerBusy

    busy = describe(ScannerBusy(1), NOW)
    quota = describe(FreeQuotaUsed(1, datetime(2026, 11, 23, tzinfo=UTC)), NOW)

    assert "try again in 1 second." in busy.text
    assert "used its 1 free scan for today" in quota.text


def test_the_key_exchange_of_a_dhe_suite_is_its_group_size() -> None:
    from websec_app.ui.evidence import evidence

    tls = {"protocol": "TLSv1.2", "cipher": "DHE-RSA-AES128-GCM-SHA256", "key_exchange_group": None}
    shown = evidence({"tls": {**tls, "dh_group": {"prime_bits": 1024}}}, [], [])
    ecdhe = evidence({"tls": {**tls, "cipher": "ECDHE-RSA-AES128-GCM-SHA256", "key_exchange_group": "X25519"}}, [], [])

    assert ("Key exchange group", "Diffie-Hellman, 1024 bits") in [(row.name, row.value) for row in shown.negotiated]
    assert ("Key exchange group", "X25519") in [(row.name, row.value) for row in ecdhe.negotiated]
    # RSA key exchange negotiated: the DH group the scan read is that of the server's DHE suites, not this one's
    rsa = evidence({"tls": {**tls, "cipher": "AES128-GCM-SHA256", "dh_group": {"prime_bits": 1024}}}, [], [])
    assert "Key exchange group" not in [row.name for row in rsa.negotiated]


def _all_clear_but_the_locked_sections(body: dict[str, Any]) -> dict[str, Any]:
    """`body` (a free body of impact_report) with nothing wrong in the sections it shows: only the cookies
    (-12) and cross-origin isolation (-2) it hides lost points, so the score is 86, a B."""
    for header in body["headers"].values():
        header.update(status="good", deduction=0)
    for name in ("dns", "page_analysis"):
        body[name].update(status="good", deduction=0)
        for finding in body[name]["findings"]:
            finding.update(status="good", deduction=0)
    body.update(score=86, grade="B", issue_counts={"critical": 0, "important": 0, "minor": 0, "total": 0, "locked": 3})
    body["grading"]["uncapped_score"] = 86
    return body


def test_the_points_the_locked_sections_lost_have_a_bar_of_their_own() -> None:
    # Given issue 11's free report: score 42; the shown sections lost 44 points, cookies and COOP 14 more
    body = impact_report().to_dict(pro=False, include_fix=False)
    body["grading"]["uncapped_score"] = 42

    # When the chart is built
    evidence = report_view(body).evidence

    # Then the bars add up to what the score lost, the locked sections' points last, in a bar of their own
    assert evidence.score_bars[-1] == ScoreBar(
        "locked", "Cookies and cross-origin isolation (full report only)", "−14 pts", 14, locked=True
    )
    assert sum(bar.percent for bar in evidence.score_bars) == 100 - 42
    assert "Cookies and cross-origin isolation (full report only) 14 points; 58 points in all" in evidence.score_text
    # and a full report, which shows every section, has no such bar
    assert not any(bar.locked for bar in report_view(impact_report().to_dict()).evidence.score_bars)


def test_a_free_report_whose_points_went_in_locked_sections_does_not_say_every_check_passed() -> None:
    body = _all_clear_but_the_locked_sections(impact_report().to_dict(pro=False, include_fix=False))

    view = report_view(body)

    assert view.top == []
    assert view.clear_text == (
        "No problems in the sections shown; 3 more findings in cookies and cross-origin isolation: "
        "Pro or a one-time scan shows them."
    )
    assert [(bar.section, bar.points) for bar in view.evidence.score_bars] == [("locked", "−14 pts")]
    assert not view.evidence.score_text.startswith("No points lost")
    # A full report with nothing wrong anywhere still says so
    full = impact_report().to_dict()
    for name in ("cookies", "cross_origin"):
        full.pop(name)
    full = _all_clear_but_the_locked_sections({**full, "grading": dict(full["grading"])})
    full.update(score=100, grade="A+")
    full["grading"]["uncapped_score"] = 100
    assert report_view(full).clear_text == "No problems found: every check passed."


def test_at_a_score_of_0_the_locked_sections_lost_at_least_what_the_shown_ones_left() -> None:
    # Given a free body scored 0 whose shown sections lost 44 points: the hidden ones lost 56 or more
    body = impact_report().to_dict(pro=False, include_fix=False)
    body.update(score=0, grade="F")
    body["grading"]["uncapped_score"] = 0

    bar = report_view(body).evidence.score_bars[-1]

    assert (bar.section, bar.points, bar.percent) == ("locked", "−56 pts or more", 56)


def test_fix_these_first_says_when_fixing_the_first_problem_would_leave_the_score_at_0() -> None:
    # Given issue 11's report (58 points lost in all) and the same with a CSP costing 165 (208 in all, score 0)
    body = impact_report().to_dict()
    floored = impact_report().to_dict()
    floored["headers"]["Content-Security-Policy"]["deduction"] = 165
    floored.update(score=0, grade="F")

    # Then only the second says its problems cost more than a score has, and how much must be fixed first
    assert report_view(body).floor_text == ""
    assert report_view(floored).floor_text == (
        "All the problems found cost 208 points together, more than the 100 a score starts from, so the score "
        "stays at 0 until fixes take back more than 108 points."
    )
    # A free body at 0 knows only a lower bound of what its locked sections cost
    free = impact_report().to_dict(pro=False, include_fix=False)
    free["headers"]["Content-Security-Policy"]["deduction"] = 165
    free.update(score=0, grade="F")
    assert report_view(free).floor_text == (
        "All the problems found cost at least 194 points together, more than the 100 a score starts from: the "
        "score stays at 0 until several are fixed."
    )


def test_what_the_scan_could_not_test_is_said_in_whole_sentences() -> None:
    body = make_report().to_dict()
    body["tls"]["not_testable"] = ["SSLv3: OpenSSL 3.0.15 3 Sep 2024 was built without SSL 3.0 support (no-ssl3)"]

    (sslv3,) = report_view(body).evidence.not_testable

    assert sslv3 == "SSLv3: OpenSSL 3.0.15 3 Sep 2024 was built without SSL 3.0 support (no-ssl3)"


def test_the_csp_proposals_advice_is_shown_with_its_fix_and_not_as_what_was_found() -> None:
    # Given a site with a weak CSP: what was found, and a fix built from the page with how to roll it out
    from tests.factories import make_handshake, make_snapshot
    from websec_app.scanner.scan import grade_snapshot

    headers = [("Content-Security-Policy", "script-src *; object-src 'none'")]
    report = grade_snapshot(make_snapshot(body="<p>hi</p>", headers=headers, tls=make_handshake()))
    rollout = "Report-Only first, use the site for a week"

    def csp(body: dict[str, Any]) -> Any:
        return next(f for f in report_view(body).sections[0].problems if f.title.startswith("Content-Security-Policy"))

    # When the free and the Pro report pages are built
    free, pro = csp(report.to_dict(pro=False, include_fix=False)), csp(report.to_dict())

    # Then both say what was found; only Pro shows the advice, beside its fix
    assert "scripts may load from *" in free.note and free.note == pro.note
    assert "proposed policy" not in free.note and rollout not in free.note
    assert (free.fix, free.fix_note) == ("", "")
    assert pro.fix and rollout in pro.fix_note


def test_a_findings_notes_are_kept_one_by_one_and_an_older_reports_note_is_one() -> None:
    # Given a report whose session-cookie finding has two notes, each with a "; " of its own (Markdown backticks too)
    body = impact_report().to_dict()
    raw = next(f for f in body["cookies"]["findings"] if f["status"] != "good")
    notes = ["`sid`: set over plain HTTP; set it on HTTPS only", "sid (set by the redirect response from http://x/)"]
    raw.update(note="; ".join(notes), notes=notes)

    def cookie_view(report: dict[str, Any]) -> Any:
        cookies = next(s for s in report_view(report).sections if s.key == "cookies")
        return next(f for f in cookies.problems if f.check == raw["check"])

    # When the report page is built, the finding carries both notes apart, to be listed one a line
    view = cookie_view(body)
    assert view.notes == [_prose(note) for note in notes] and view.many_notes
    assert view.note == _prose("; ".join(notes))
    # And a report made before `notes` was added shows its joined note as one, as it did
    del raw["notes"]
    older = cookie_view(body)
    assert older.notes == [older.note] and not older.many_notes


#: The longest word a finding's heading can hold on a 375 px phone (the bold heading fits 31 characters of
#: "(ERR_SSL_KEY_USAGE_INCOMPATIBLE"); a longer word is cut anywhere by `overflow-wrap`, leaving a stray ")".
HEADING_WORD_FITS = 28


def test_every_findings_heading_breaks_only_where_a_phone_can_wrap_it() -> None:
    # Given every outcome's heading: the first sentence of its explanation, as the report shows it
    too_long = {
        outcome: word
        for outcome, rule in default_rulebook().rules.items()
        for word in _headline(_prose(rule.explanation))[0].split()
        # browsers break a word after a hyphen or a slash, not after an underscore or a dot
        if any(len(part) > HEADING_WORD_FITS for part in re.split(r"(?<=[-/])", word))
    }

    # Then none has a word a phone must cut in the middle (tls.cert_key_usage's Chrome error code had)
    assert too_long == {}
