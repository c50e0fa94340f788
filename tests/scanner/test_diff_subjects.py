"""The diff of two reports subject by subject (websec_app/scanner/diff.py, issue 17's own example): a deploy
that ships a second session cookie without Secure, beside one that already had that finding, is a new
issue, and the monitor's alert sees it. Real scans of a fixture site whose cookies change between scans."""

from __future__ import annotations

import copy
from typing import Any

from tests.factories import make_snapshot
from tests.fixtures import catalog
from tests.fixtures.sites import Response, SiteFactory, html
from websec_app.scanner import scan
from websec_app.scanner.diff import diff_reports
from websec_app.scanner.scan import grade_snapshot
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons


async def test_a_second_cookie_without_secure_is_new_and_alerts_and_its_removal_is_fixed(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose session cookie lacks Secure, with no HSTS policy to keep it off plain HTTP
    site = catalog.best_practices(site_factory.unique_host("cookies"), remove_headers=["Strict-Transport-Security"])
    home = site.routes["/"]
    assert isinstance(home, Response)
    state: dict[str, Any] = {
        "headers": [*home.headers, ("Set-Cookie", "sessionid=abc; Path=/; HttpOnly; SameSite=Lax")]
    }
    site.routes["/"] = lambda request: html(catalog.BEST_PAGE, headers=state["headers"])
    running = site_factory(site)
    before = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)

    # When a deploy adds a second session cookie without Secure (one finding now names both cookies)
    state["headers"] = [*state["headers"], ("Set-Cookie", "auth_token=xyz; Path=/; HttpOnly; SameSite=Lax")]
    after = (await scan(running.url, scan_settings)).to_dict(pro=True, include_fix=True)
    merged = [f for f in after["cookies"]["findings"] if f["check"] == "cookie.session_no_secure"]
    assert [f["subjects"] for f in merged] == [["sessionid", "auth_token"]]

    # Then the diff names the new cookie's issue, and nothing else
    diff = diff_reports(before, after)
    assert [c.to_dict() for c in diff.new] == [
        {
            "section": "cookies",
            "name": "cookie.session_no_secure",
            "subject": "auth_token",
            "severity": "important",
            "before": None,
            # the finding was there before with the same points: the new cookie costs none of its own
            "after": {"status": merged[0]["status"], "deduction": 0},
        }
    ]
    assert diff.fixed == () and diff.changed == ()
    # and the monitor's run alerts on it
    reasons, _ = alert_reasons(before, after, diff, None)
    assert len(reasons) == 1 and reasons[0].startswith("New critical or important finding: ")
    assert "auth_token" in reasons[0]

    # and when the deploy is rolled back, that cookie's issue is fixed (the other's stays)
    back = diff_reports(after, before)
    assert [(c.name, c.subject) for c in back.fixed] == [("cookie.session_no_secure", "auth_token")]
    assert back.new == () and back.changed == ()


def test_a_cookie_named_in_utf8_is_the_same_cookie_in_a_report_graded_before_it_was_named_by_its_characters() -> None:
    # Given a site's session cookie named in UTF-8, graded now (session_ü) and as a report stored before d36bc23
    # named it (the latin-1 text of its bytes: session_Ã¼)
    line = "session_ü=abc123def456ghi789; Path=/".encode().decode("latin-1")
    now = grade_snapshot(make_snapshot(headers=[("Set-Cookie", line)])).to_dict(pro=True, include_fix=True)
    before = copy.deepcopy(now)
    for finding in before["cookies"]["findings"]:
        finding["subjects"] = [s.encode().decode("latin-1") for s in finding.get("subjects") or []]
    assert any("session_Ã¼" in (f.get("subjects") or []) for f in before["cookies"]["findings"])

    # Then the diff sees the same cookie: nothing new, nothing fixed, no alert after the deploy that renamed it
    diff = diff_reports(before, now)
    assert (diff.new, diff.fixed) == ((), ())


def _graded(*names: bytes, secure: tuple[bool, ...] = ()) -> dict[str, Any]:
    lines = [
        (name + b"=abc123def456ghi789; Path=/" + (b"; Secure" if flag else b"")).decode("latin-1")
        for name, flag in zip(names, secure or (False,) * len(names), strict=True)
    ]
    return grade_snapshot(make_snapshot(headers=[("Set-Cookie", line) for line in lines])).to_dict(
        pro=True, include_fix=True
    )


def test_a_cookie_name_is_decoded_once_and_only_for_a_report_graded_before() -> None:
    # Given a cookie whose UTF-8 bytes spell text that is itself latin-1 (a name a framework mangled once: Ã¼)
    name = "session_Ã¼".encode()
    now = _graded(name)
    before = copy.deepcopy(now)
    for finding in before["cookies"]["findings"]:
        finding["subjects"] = [
            name.decode("latin-1") if s == "session_Ã¼" else s for s in finding.get("subjects") or []
        ]

    # Then against an old report it is the same cookie, and between two new reports it keeps its name
    diff = diff_reports(before, now)
    assert (diff.new, diff.fixed) == ((), ())
    newer = diff_reports(_graded(name, secure=(True,)), now)
    assert newer.new and all(change.subject == "session_Ã¼" for change in newer.new)
