"""An unknown address gets a real 404: the status on a direct request, and the site's own page around it.

Given the app as `make run` serves it,
when a browser or a client asks for a path no page has,
then the answer is status 404 with the styled "Page not found" page, its navigation and ways on.
"""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from .conftest import SCREENSHOTS, App

UNKNOWN = ("/no-such-page", "/pricing/extra/part", "/reports/abc")


@pytest.mark.parametrize("path", UNKNOWN)
def test_an_unknown_path_answers_404_with_the_sites_page(app: App, path: str) -> None:
    response = httpx.get(app.path(path), timeout=10)

    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "<html" in response.text.lower()


def test_known_pages_still_answer_200(app: App) -> None:
    for path in ("/", "/pricing", "/report/some-report-id", "/checkout/pro"):
        assert httpx.get(app.path(path), timeout=10, follow_redirects=True).status_code == 200, path


def test_the_404_page_has_the_site_layout_and_ways_on(page: Page, app: App) -> None:
    response = page.goto(app.path("/no-such-page"))

    assert response is not None and response.status == 404
    page.wait_for_selector('main[data-ready="true"]')
    expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
    expect(page).to_have_title("Page not found · websec")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Pricing")).to_be_visible()
    expect(page.get_by_role("contentinfo")).to_be_visible()  # the footer

    page.get_by_role("link", name="Scan a website").click()
    page.wait_for_url(app.path("/"))
    expect(page.get_by_label("Website address")).to_be_visible()


def test_screenshots_of_the_404_page(page: Page, app: App) -> None:
    """var/screenshots/not-found-{1280,375}.png, looked at by hand (issue 15)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(app.path("/no-such-page"))
        page.wait_for_selector('main[data-ready="true"]')
        expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
        page.screenshot(path=str(SCREENSHOTS / f"not-found-{width}.png"), full_page=True)
