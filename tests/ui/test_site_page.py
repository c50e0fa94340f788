"""The site page (`/site?url=...`, issue 17): a Pro subscriber's kept scans of one site, the score over time as
a chart, the latest diff in plain titles, and a link to each kept report.

Given kept scans written through the store (scan records with their stored reports, a month of scores ending
at TEST_NOW), when the subscriber opens the site page with their key, then the chart has one point per scan
at its score, the diff names what was fixed, what is new and what changed, and every row links its report.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.api.fakes import make_report
from tests.clock import TEST_NOW
from websec_app.scanner.rules.titles import plain_title
from websec_app.store import create_subscription, issue_api_key, record_scan, save_report

from .conftest import SCREENSHOTS, App, open_page
from .test_accessibility import axe_violations, browser_context

__all__ = ["browser_context"]  # test_accessibility's Chromium (axe may be injected): used by every test here

SITE = "https://history.example.com/"
#: (days before TEST_NOW, grade, score), oldest first: the chart's points, left to right.
SCANS = ((28, "D", 50), (21, "D", 58), (14, "C", 64), (7, "C", 64), (0, "B", 80))


#: What the latest scan found of X-Content-Type-Options, new in it: four notes, one with a "; " of its own.
XCTO_NOTES = [
    "the page was sent without it; browsers may guess its type",
    "/static/app.js was sent without it",
    "/static/site.css was sent without it",
    "/static/logo.png was sent without it",
]


def _before_body() -> dict[str, Any]:
    body = make_report(SITE, grade="C", score=64).to_dict()
    body["cookies"]["findings"][0]["subjects"] = ["sid"]
    return body


def _after_body() -> dict[str, Any]:
    """The latest scan: CSP fixed, X-Content-Type-Options newly missing, the CAA finding costs more, and a second
    cookie (auth_token) without HttpOnly beside sid."""
    body = copy.deepcopy(_before_body())
    body["cookies"]["findings"][0]["subjects"] = ["sid", "auth_token"]
    body["grade"], body["score"] = "B", 80
    body["headers"]["Content-Security-Policy"].update(present=True, status="good", deduction=0)
    body["headers"]["X-Content-Type-Options"].update(
        present=False, status="missing", severity="important", deduction=5, note="; ".join(XCTO_NOTES), notes=XCTO_NOTES
    )
    body["dns"]["findings"][0]["deduction"] = 6
    body["grading"]["algorithm_version"] = "test.2"  # graded by newer rules than the scans before
    return body


@dataclass(frozen=True)
class Subscriber:
    key: str
    report_ids: list[str]  # oldest first


def _subscriber(app: App, email: str, scans: tuple[tuple[int, str, int], ...] = ()) -> Subscriber:
    ids: list[str] = []
    with app.database.session() as session:
        subscription = create_subscription(session, email=email, now=TEST_NOW)
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, TEST_NOW)
        for index, (days, grade, score) in enumerate(scans):
            body = _after_body() if index == len(scans) - 1 else {**_before_body(), "grade": grade, "score": score}
            when = TEST_NOW - timedelta(days=days)
            record = record_scan(
                session,
                kind="monitor" if index % 2 else "pro",
                url=SITE,
                final_url=SITE,
                grade=grade,
                score=score,
                algorithm_version="test.1",
                now=when,
                subscription_id=subscription.id,
                api_key_id=key.key_id,
            )
            ids.append(save_report(session, body=body, kind="pro", now=when, scan_record_id=record.id).id)
        return Subscriber(key.key, ids)


@pytest.fixture(scope="module")
def subscriber(app: App) -> Subscriber:
    return _subscriber(app, "site-page@example.com", SCANS)


def site_path(url: str = SITE) -> str:
    return f"/site?url={quote(url, safe='')}"


def sign_in_here(page: Page, key: str) -> None:
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()


def open_site(page: Page, app: App, subscriber: Subscriber, url: str = SITE) -> None:
    open_page(page, app.path(site_path(url)))
    sign_in_here(page, subscriber.key)


def test_the_chart_has_a_point_per_kept_scan_at_its_score(page: Page, app: App, subscriber: Subscriber) -> None:
    open_site(page, app, subscriber)

    points = page.get_by_test_id("chart-point")
    expect(points).to_have_count(len(SCANS))
    drawn = [
        (
            float(p.get_attribute("data-x") or "nan"),
            float(p.get_attribute("data-y") or "nan"),
            p.get_attribute("data-score"),
        )
        for p in points.all()
    ]
    # Oldest left, newest right, a week apart over four weeks; score 100 at the top of a 0..100 plot.
    assert [x for x, _, _ in drawn] == [0.0, 25.0, 50.0, 75.0, 100.0]
    assert [y for _, y, _ in drawn] == [100.0 - score for _, _, score in SCANS]
    assert [s for _, _, s in drawn] == [str(score) for _, _, score in SCANS]
    assert points.first.get_attribute("d") == "M0 50h0"
    # Drawn, not just in the DOM: the last dot sits above and right of the first.
    first, last = points.first.bounding_box(), points.last.bounding_box()
    assert first and last and last["x"] > first["x"] and last["y"] < first["y"]
    expect(page.locator("polyline")).to_have_attribute("points", "0,50 25,42 50,36 75,36 100,20")

    # The text alternative: the chart is an image named by its summary.
    expect(page.get_by_role("img", name=re.compile("^Score over time 5 scans from 2026-10-25"))).to_have_count(1)
    expect(page.get_by_test_id("chart-summary")).to_have_text(
        "5 scans from 2026-10-25 to 2026-11-22; lowest 50, highest 80; latest 80 (grade B)."
    )


def test_the_latest_diff_in_plain_titles(page: Page, app: App, subscriber: Subscriber) -> None:
    open_site(page, app, subscriber)

    diff = page.get_by_test_id("latest-diff")
    expect(diff.get_by_test_id("diff-score")).to_have_text("Score 64 → 80 (+16)")
    expect(diff.get_by_role("img", name="Grade C")).to_be_visible()
    expect(diff.get_by_role("img", name="Grade B")).to_be_visible()
    expect(diff.get_by_test_id("diff-summary")).to_have_text(
        "2 new findings, 1 fixed finding, 1 changed finding; grade C → B, score 64 → 80."
    )
    expect(diff.get_by_test_id("diff-new")).to_contain_text("X-Content-Type-Options header")
    # a new finding says what the scan found: its first three notes, a line each, and how many more the report has
    xcto = diff.get_by_test_id("diff-item").filter(has_text="X-Content-Type-Options header")
    expect(xcto.get_by_test_id("diff-found")).to_have_text([f"Found: {note}" for note in XCTO_NOTES[:3]])
    expect(xcto).to_contain_text("and 1 more note in the report")
    # but a cookie finding, split by cookie, quotes none (its notes are not told apart by cookie)
    cookie = diff.get_by_test_id("diff-item").filter(has_text="auth_token")
    expect(cookie.get_by_test_id("diff-found")).to_have_count(0)
    # a finding that names one more cookie is new for that cookie, named in its title
    expect(diff.get_by_test_id("diff-new")).to_contain_text(f"{plain_title('cookies.no_httponly')}: auth_token")
    expect(diff.get_by_test_id("diff-new")).to_contain_text("-5 points")
    # and the cookie finding was there before with the same points: that row shows none of its own
    expect(diff.get_by_test_id("diff-new")).to_contain_text("no points of its own")
    expect(diff.get_by_test_id("diff-fixed")).to_contain_text("Content-Security-Policy header")
    expect(diff.get_by_test_id("diff-changed")).to_contain_text(plain_title("dns.caa_missing"))
    expect(diff.get_by_test_id("diff-changed")).to_contain_text("Missing, -3 → Missing, -6")
    expect(diff).to_contain_text("Compared with the scan of 2026-11-15 12:00 UTC.")
    # the two scans were graded by different rules: part of the change may be theirs
    expect(diff.get_by_test_id("diff-rules")).to_have_text(
        "The two scans were graded with different rules (test.1, then test.2): part of this change may come from "
        "what websec checks now, not from the site."
    )
    assert "dns.caa_missing" not in (diff.text_content() or "")


def test_the_history_links_every_kept_report(page: Page, app: App, subscriber: Subscriber) -> None:
    open_site(page, app, subscriber)

    rows = page.get_by_test_id("history-row")
    expect(rows).to_have_count(len(SCANS))
    expect(rows.first).to_contain_text("2026-11-22 12:00 UTC")
    expect(rows.first).to_contain_text("80")
    expect(rows.nth(1)).to_contain_text("Monitor run")
    hrefs = [link.get_attribute("href") for link in page.get_by_test_id("history-table").get_by_role("link").all()]
    assert hrefs == [f"/report/{i}" for i in reversed(subscriber.report_ids)]

    rows.first.get_by_role("link").click()
    page.wait_for_url(re.compile(rf"/report/{re.escape(subscriber.report_ids[-1])}$"))
    expect(page.get_by_test_id("grade").first).to_have_text("B")


def test_without_a_key_the_page_asks_for_one_and_shows_nobody_elses_history(
    page: Page, app: App, subscriber: Subscriber
) -> None:
    open_page(page, app.path(site_path()))
    expect(page.get_by_label("API key")).to_be_visible()
    expect(page.get_by_test_id("chart-point")).to_have_count(0)
    assert axe_violations(page) == []

    # Another subscriber's key: their (empty) history of the same site, and an offer to scan it.
    other = _subscriber(app, "someone-else@example.com")
    sign_in_here(page, other.key)
    expect(page.get_by_test_id("site-empty")).to_contain_text("Nothing is kept for https://history.example.com/ yet")
    expect(page.get_by_role("button", name="Run Pro scan")).to_be_visible()
    expect(page.get_by_label("Website address")).to_have_value(SITE)
    expect(page.get_by_test_id("chart-point")).to_have_count(0)
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 375, "height": 900})
    page.screenshot(path=str(SCREENSHOTS / "site-empty-375.png"), full_page=True)


def test_an_address_no_scan_accepts_is_explained(page: Page, app: App, subscriber: Subscriber) -> None:
    open_site(page, app, subscriber, "ftp://history.example.com/")
    expect(page.get_by_test_id("site-problem")).to_contain_text("only http and https can be scanned")


def test_keyboard_from_the_sign_in_to_a_report(page: Page, app: App, subscriber: Subscriber) -> None:
    open_page(page, app.path(site_path()))
    page.get_by_label("API key").focus()
    page.keyboard.type(subscriber.key)
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("chart-point")).to_have_count(len(SCANS))

    # Tab along to the first report link and follow it with Enter.
    page.get_by_test_id("history-table").get_by_role("link").first.focus()
    for _ in range(3):
        page.keyboard.press("Shift+Tab")
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('href')") == f"/report/{subscriber.report_ids[-1]}":
            break
    else:
        pytest.fail("Tab never reached the newest report's link")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/report/"))


@pytest.mark.parametrize("width", [1280, 375])
def test_the_site_page_passes_axe_and_is_photographed(page: Page, app: App, subscriber: Subscriber, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_site(page, app, subscriber)
    expect(page.get_by_test_id("chart-point")).to_have_count(len(SCANS))

    assert axe_violations(page) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"site-{width}.png"), full_page=True)


def test_a_pro_scan_from_the_empty_page_starts_the_history(page: Page, app: App, worst_site: Any) -> None:
    """The offer to scan runs a real Pro scan of a fixture site; back on the page, it is the history's first."""
    newcomer = _subscriber(app, "first-scan@example.com")
    open_site(page, app, newcomer, worst_site.url)
    expect(page.get_by_test_id("site-empty")).to_be_visible()

    page.get_by_role("button", name="Run Pro scan").click()
    page.wait_for_url(re.compile(r"/report/[\w-]+$"), timeout=60_000)
    report_path = urlsplit(page.url).path
    open_page(page, app.path(site_path(worst_site.url)))

    expect(page.get_by_test_id("chart-point")).to_have_count(1)
    expect(page.get_by_test_id("history-row")).to_have_count(1)
    expect(page.get_by_test_id("history-table").get_by_role("link")).to_have_attribute("href", report_path)
    expect(page.get_by_test_id("diff-none")).to_have_text(
        "Only one scan is kept so far: the next one will be compared with it."
    )
