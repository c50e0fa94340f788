"""A finding lists at most 50 subjects (grading.LIST_LIMIT) and counts the rest in `subjects_not_listed`: the diff,
the monitor's alert and SARIF's fingerprint must not read a cut list as the finding's whole list. A site that sets
60 session cookies without Secure, in one order and then in another, changed nothing (docs/api.md: a subject
added is new, a subject gone is fixed; SARIF 2.1.0 3.27.17: a result keeps its fingerprint from run to run)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.factories import make_snapshot
from websec_app.report_formats import render_sarif
from websec_app.scanner.checks.cookies import check_cookies
from websec_app.scanner.checks.page import check_page
from websec_app.scanner.diff import diff_reports
from websec_app.scanner.findings import LIST_LIMIT
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.usecases.monitors import alert_reasons

HOST = "example.com"
URL = f"https://{HOST}/"
NAMES = [f"sessionid{i}" for i in range(60)]
OUTCOME = "cookie.session_no_secure"


def report_of(names: Sequence[str]) -> dict[str, Any]:
    """The report of a page setting these session cookies, each without Secure, in this order."""
    snapshot = make_snapshot(
        URL, headers=[("Set-Cookie", f"{name}=v; Path=/; HttpOnly; SameSite=Lax") for name in names]
    )
    graded = grade([check_cookies(snapshot)], default_rulebook(), {"host": HOST, "domain": HOST})
    return {"url": URL, "final_url": URL, "grade": graded.grade, "score": graded.score, **graded.sections}


def finding_of(report: dict[str, Any]) -> dict[str, Any]:
    (finding,) = [f for f in report["cookies"]["findings"] if f["check"] == OUTCOME]
    return finding


def fingerprint_of(report: dict[str, Any]) -> str:
    results = json.loads(render_sarif(report))["runs"][0]["results"]
    (result,) = [r for r in results if r["ruleId"].endswith(OUTCOME)]
    return str(result["partialFingerprints"]["websecFinding/v1"])


def test_sixty_cookies_sent_in_another_order_are_no_change_no_alert_and_the_same_sarif_result() -> None:
    # Given the 60 cookies, then the same 60 in reverse order: each report lists 50 of them, and other ones
    before, after = report_of(NAMES), report_of(NAMES[::-1])
    assert finding_of(before)["subjects"] == NAMES[:LIST_LIMIT]
    assert finding_of(after)["subjects"] == NAMES[::-1][:LIST_LIMIT]

    # When they are compared
    diff = diff_reports(before, after)

    # Then nothing is new or fixed (before this fix: 10 new, 10 fixed), no alert goes out
    assert (diff.new, diff.fixed, diff.changed) == ((), (), ())
    assert diff.unchanged
    reasons, _ = alert_reasons(before, after, diff, None)
    assert reasons == []
    # and SARIF gives the finding the same fingerprint
    assert fingerprint_of(before) == fingerprint_of(after)
    # and each report says how many it did not list
    assert finding_of(before)["subjects_not_listed"] == finding_of(after)["subjects_not_listed"] == 10


def test_a_cookie_added_in_front_does_not_make_the_one_it_pushed_off_the_list_fixed() -> None:
    before, after = report_of(NAMES), report_of(["sessionidNEW", *NAMES])
    diff = diff_reports(before, after)
    # sessionid49 is still sent: counted, no longer listed. (sessionidNEW may be among the 10 `before` did not
    # list, so it is not new either: the note's count went from 10 to 11.)
    assert diff.fixed == () and diff.new == ()
    assert finding_of(after)["subjects_not_listed"] == 11


def test_a_report_kept_before_the_lists_were_cut_does_not_see_the_unlisted_cookies_as_fixed() -> None:
    # Given a report kept before the bound (all 60 listed, no `subjects_not_listed`) and the next one, cut
    kept = report_of(NAMES)
    finding = finding_of(kept)
    finding["subjects"] = list(NAMES)
    finding.pop("subjects_not_listed", None)
    finding["note"] = None

    diff = diff_reports(kept, report_of(NAMES))

    assert diff.fixed == () and diff.new == () and diff.changed == ()


def test_a_cookie_gone_from_a_whole_list_is_still_fixed_and_one_added_to_it_new() -> None:
    # Lists that were not cut are read as before: the site dropped sessionid0 and added sessionidNEW
    before, after = report_of(NAMES[:40]), report_of([*NAMES[1:40], "sessionidNEW"])
    diff = diff_reports(before, after)
    assert [c.subject for c in diff.fixed] == ["sessionid0"]
    assert [c.subject for c in diff.new] == ["sessionidNEW"]


def test_a_finding_whose_points_changed_is_changed_even_when_its_cut_lists_share_no_subject() -> None:
    # Given 100 cookies listed 0-49 before and 99-50 after, the finding's deduction changed in between (a new
    # grading version, say)
    names = [f"sessionid{i}" for i in range(100)]
    before, after = report_of(names), report_of(names[::-1])
    finding_of(after)["deduction"] += 5
    assert not set(finding_of(before)["subjects"]) & set(finding_of(after)["subjects"])

    diff = diff_reports(before, after)

    # Then the change is reported once with its points, on after's first subject, and nothing is new or fixed
    assert diff.new == () and diff.fixed == ()
    points = [
        (c.subject, c.before["deduction"] if c.before else None, c.after["deduction"] if c.after else None)
        for c in diff.changed
        if not c.shared
    ]
    deduction = finding_of(before)["deduction"]
    assert points == [("sessionid99", deduction, deduction + 5)]


def test_a_cut_finding_keeps_its_fingerprint_while_its_count_stays_and_a_whole_one_by_its_subjects() -> None:
    assert fingerprint_of(report_of(NAMES)) != fingerprint_of(report_of([*NAMES, "sessionidNEW"]))
    assert fingerprint_of(report_of(NAMES[:40])) == fingerprint_of(report_of(NAMES[:40][::-1]))
    assert fingerprint_of(report_of(NAMES[:40])) != fingerprint_of(report_of([*NAMES[1:40], "sessionidNEW"]))


def page_report(scripts: Sequence[str]) -> dict[str, Any]:
    """The report of an https page loading these http:// scripts, in this order."""
    body = "".join(f'<script src="{url}"></script>' for url in scripts)
    graded = grade([check_page(make_snapshot(URL, body=body))], default_rulebook(), {"host": HOST, "domain": HOST})
    return {"url": URL, "final_url": URL, "grade": graded.grade, "score": graded.score, **graded.sections}


def test_a_page_loading_sixty_http_scripts_in_another_order_is_no_change() -> None:
    # Given a page loading 60 http:// scripts, each from an origin of its own, then the same 60 in reverse order
    scripts = [f"http://cdn{i}.other.net/a.js" for i in range(60)]
    before, after = page_report(scripts), page_report(scripts[::-1])

    # When they are compared
    diff = diff_reports(before, after)

    # Then nothing is new or fixed: each report lists 50 origins and counts the other 10 (the page check listed the
    # first 50 scripts' findings and said "and 10 more like these", so the 50 origins read as the whole list: 10
    # new, 10 fixed and an alert for scripts the page had loaded all along)
    assert (diff.new, diff.fixed) == ((), ())
    (finding,) = [f for f in after["page_analysis"]["findings"] if f["check"] == "page.mixed_active"]
    assert finding["subjects"][:2] == ["http://cdn59.other.net", "http://cdn58.other.net"]
    assert finding["subjects_not_listed"] == 10
