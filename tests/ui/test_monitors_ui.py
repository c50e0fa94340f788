"""Monitors in the Pro area (issue 17): add one (address, daily or weekly), see its next and last run with the
run's report and the site page, remove it after a confirmation; the form says what is wrong in the page.

Given a Pro key, when the subscriber manages monitors from /pro with the mouse or the keyboard, then the
store holds exactly what the page shows (`store.monitors.monitors_of`), and the eleventh is refused in words.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from itertools import count

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.api.fakes import make_report
from tests.clock import TEST_NOW
from websec_app.store import create_subscription, issue_api_key, save_report
from websec_app.store.monitors import MAX_MONITORS, add_monitor, claim_run, finish_run, monitors_of, schedule_due_runs

from .conftest import SCREENSHOTS, App, open_page
from .test_accessibility import axe_violations, browser_context

__all__ = ["browser_context"]  # test_accessibility's Chromium (axe may be injected): used by every test here

_EMAILS = count(1)


class Pro:
    def __init__(self, app: App) -> None:
        self.app = app
        with app.database.session() as session:
            subscription = create_subscription(session, email=f"monitors-{next(_EMAILS)}@example.com", now=TEST_NOW)
            assert subscription.id is not None
            issued = issue_api_key(session, subscription.id, TEST_NOW)
        self.subscription_id, self.key_id, self.key = subscription.id, issued.key_id, issued.key

    def monitors(self) -> list[tuple[str, str]]:
        with self.app.database.session() as session:
            return [(m.url, m.interval) for m in monitors_of(session, self.subscription_id)]

    def add_in_store(self, url: str, *, now: datetime = TEST_NOW) -> int:
        with self.app.database.session() as session:
            monitor = add_monitor(
                session,
                subscription_id=self.subscription_id,
                api_key_id=self.key_id,
                url=url,
                interval="daily",
                callback_url=None,
                now=now,
            )
            assert monitor.id is not None
            return monitor.id


@pytest.fixture
def pro(app: App) -> Pro:
    return Pro(app)


def sign_in(page: Page, pro: Pro) -> Locator:
    open_page(page, pro.app.path("/pro"))
    page.get_by_label("API key").fill(pro.key)
    page.get_by_role("button", name="Sign in").click()
    section = page.get_by_test_id("monitors")
    expect(section).to_be_visible()
    return section


def add_form(section: Locator) -> Locator:
    return section.get_by_role("form", name="Add a monitor")


def test_add_and_remove_a_monitor(page: Page, pro: Pro) -> None:
    section = sign_in(page, pro)
    expect(section.get_by_test_id("monitor-empty")).to_have_text("No monitored sites yet.")
    expect(section.get_by_test_id("monitor-count")).to_have_text("0 of 10 monitors in use.")
    form = add_form(section)
    field = form.get_by_label("Website address")

    # What is wrong is said next to the field, and nothing is stored.
    form.get_by_role("button", name="Add monitor").click()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_test_id("field-monitor-url-error")).to_have_text(re.compile("Enter the address of the website"))
    field.fill("ftp://shop.example.com/")
    form.get_by_role("button", name="Add monitor").click()
    expect(form.get_by_test_id("field-monitor-url-error")).to_contain_text("only http and https can be scanned")
    assert pro.monitors() == []

    field.fill("shop.example.com")
    form.get_by_text("Weekly").click()
    form.get_by_role("button", name="Add monitor").click()

    expect(section.get_by_test_id("monitor-notice")).to_contain_text(
        "https://shop.example.com/ is now monitored weekly"
    )
    expect(field).to_have_attribute("aria-invalid", "false")
    assert pro.monitors() == [("https://shop.example.com/", "weekly")]
    row = section.get_by_test_id("monitor")
    expect(row).to_have_count(1)
    expect(row.get_by_role("link", name="https://shop.example.com/")).to_have_attribute(
        "href", "/site?url=https%3A%2F%2Fshop.example.com%2F"
    )
    expect(row.get_by_test_id("monitor-next")).to_have_text(
        re.compile(r"^Weekly · next run 2026-11-2\d \d\d:\d\d UTC$")
    )
    expect(row).to_contain_text("Not run yet")
    expect(section.get_by_test_id("monitor-count")).to_have_text("1 of 10 monitors in use.")

    # Remove asks first: "Keep it" keeps it.
    row.get_by_role("button", name="Remove the monitor of https://shop.example.com/").click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text("Stop monitoring this site?")
    expect(dialog).to_contain_text("https://shop.example.com/ will no longer be scanned weekly.")
    dialog.get_by_role("button", name="Keep it").click()
    expect(dialog).to_have_count(0)
    assert pro.monitors() == [("https://shop.example.com/", "weekly")]

    row.get_by_role("button", name="Remove the monitor of https://shop.example.com/").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Stop monitoring").click()
    expect(section.get_by_test_id("monitor-notice")).to_contain_text("https://shop.example.com/ is no longer monitored")
    expect(section.get_by_test_id("monitor")).to_have_count(0)
    assert pro.monitors() == []


def test_the_eleventh_monitor_is_refused_in_words(page: Page, pro: Pro) -> None:
    for n in range(MAX_MONITORS):
        pro.add_in_store(f"https://site{n}.example.com/")
    section = sign_in(page, pro)
    expect(section.get_by_test_id("monitor")).to_have_count(MAX_MONITORS)
    expect(section.get_by_test_id("monitor-count")).to_have_text("10 of 10 monitors in use.")

    form = add_form(section)
    form.get_by_label("Website address").fill("https://one-too-many.example.com/")
    form.get_by_role("button", name="Add monitor").click()

    expect(section.get_by_role("alert")).to_have_text(
        "You already monitor 10 sites, the most a subscription can. Remove one to add another."
    )
    assert len(pro.monitors()) == MAX_MONITORS
    assert ("https://one-too-many.example.com/", "daily") not in pro.monitors()


def _with_a_finished_run(pro: Pro, url: str) -> str:
    """A monitor whose first run (an hour before TEST_NOW) kept a report: the report's id. Its next run is due
    23 hours after TEST_NOW, so the app's own monitor tick (running from start-up, on a clock that starts at
    TEST_NOW) leaves it alone while the test looks at it."""
    due = TEST_NOW - timedelta(hours=1)
    monitor_id = pro.add_in_store(url, now=due)
    with pro.app.database.session() as session:
        report_id = save_report(session, body=make_report(url).to_dict(), kind="monitor", now=due).id
        runs = schedule_due_runs(session, due)
        for run_id in runs:
            claimed = claim_run(session, run_id, due)
            if claimed is not None and claimed.monitor.id == monitor_id:
                finish_run(session, run_id, status="done", now=due, report_id=report_id)
    return report_id


def test_the_last_run_links_its_report_and_the_site_page(page: Page, pro: Pro) -> None:
    report_id = _with_a_finished_run(pro, "https://watched.example.com/")
    section = sign_in(page, pro)

    row = section.get_by_test_id("monitor")
    expect(row).to_contain_text("Scanned")
    expect(row).to_contain_text("2026-11-22 11:00 UTC")
    expect(row.get_by_role("link", name=re.compile("^Report"))).to_have_attribute("href", f"/report/{report_id}")
    expect(row.get_by_test_id("monitor-next")).to_have_text("Daily · next run 2026-11-23 11:00 UTC")

    row.get_by_role("link", name="https://watched.example.com/").click()
    page.wait_for_url(re.compile(r"/site/?\?url=https%3A%2F%2Fwatched\.example\.com%2F$"))
    expect(page.get_by_role("heading", name="Site history")).to_be_visible()
    expect(page.get_by_text("https://watched.example.com/").first).to_be_visible()


def _focused(page: Page) -> str:
    return str(page.evaluate("document.activeElement.outerHTML.slice(0, 300)"))


def test_monitors_from_the_keyboard(page: Page, pro: Pro) -> None:
    section = sign_in(page, pro)
    form = add_form(section)

    form.get_by_label("Website address").focus()
    page.keyboard.type("https://keys.example.com")
    page.keyboard.press("Tab")  # the checked radio of the interval (Daily)
    assert 'value="daily"' in _focused(page)
    page.keyboard.press("ArrowRight")  # Weekly: Radix moves the focus in a timeout, so the test waits for it
    expect(form.get_by_role("radio", name="Weekly")).to_be_focused()
    # Radix checks the radio that an arrow key focuses only while the key is still down (it moves focus in a
    # timeout); a key pressed and released in a millisecond on a busy machine only moves focus. Space checks
    # the focused radio either way, as for any radio group.
    page.keyboard.press("Space")
    expect(form.get_by_role("radio", name="Weekly")).to_be_checked()
    expect(form.locator('input[name="interval"][value="weekly"]')).to_be_checked()
    page.keyboard.press("Tab")
    expect(form.get_by_role("button", name="Add monitor")).to_be_focused()
    page.keyboard.press("Enter")
    expect(section.get_by_test_id("monitor")).to_have_count(1)
    assert pro.monitors() == [("https://keys.example.com/", "weekly")]

    remove = section.get_by_role("button", name="Remove the monitor of https://keys.example.com/")
    remove.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()  # the safe choice first
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(remove).to_be_focused()  # back where it was
    assert len(pro.monitors()) == 1

    page.keyboard.press("Enter")
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Stop monitoring")).to_be_focused()
    page.keyboard.press("Enter")
    expect(section.get_by_test_id("monitor")).to_have_count(0)
    assert pro.monitors() == []


@pytest.mark.parametrize("width", [1280, 375])
def test_the_monitors_pass_axe_and_are_photographed(page: Page, pro: Pro, width: int) -> None:
    _with_a_finished_run(pro, "https://a-rather-long-subdomain-name.watched-site.example.com/")
    pro.add_in_store("https://second.example.com/")
    page.set_viewport_size({"width": width, "height": 900})
    section = sign_in(page, pro)
    form = add_form(section)
    form.get_by_label("Website address").fill("not a url")
    form.get_by_role("button", name="Add monitor").click()
    expect(form.get_by_test_id("field-monitor-url-error")).not_to_be_empty()
    expect(section.get_by_test_id("monitor")).to_have_count(2)

    assert axe_violations(page) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(SCREENSHOTS / f"pro-monitors-{width}.png"))
    page.screenshot(path=str(SCREENSHOTS / f"pro-monitors-page-{width}.png"), full_page=True)
