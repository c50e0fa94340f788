"""The diff of two reports subject by subject (websec_app/scanner/diff.py, issue 17's own example): a deploy
that ships a second session cookie without Secure, beside one that already had that finding, is a new
issue, and the monitor's alert sees it. Real scans of a fixture site whose cookies change between scans."""

from __future__ import annotations

from typing import Any

from tests.fixtures import catalog
from tests.fixtures.sites import Response, SiteFactory, html
from websec_app.scanner import scan
from websec_app.scanner.diff import diff_reports
from websec_app.settings import Settings
from websec_app.usecases.monitors import alert_reasons


async def test_a_second_cookie_without_secure_is_new_and_alerts_and_its_removal_is_fixed(
    site_factory: SiteFactory, scan_settings: Settings
) -> None:
    # Given a site whose session cookie lacks Secure
    site = catalog.best_practices(site_factory.unique_host("cookies"))
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
