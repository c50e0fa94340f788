"""Two app processes serve one browser tab, its state kept in Redis (docs/deploy.md, "Several processes").

Given the `deployment` of conftest.py (two `make run` processes in production mode with one REDIS_URL and one
SQLite database, behind one TLS terminator at https://<host>/, as a load balancer would put them),
when a tab's event is handled by process 1, then the terminator sends every connection to process 2 (open
ones are cut) and the tab reloads,
then process 2 serves the page and the event websocket for the same session token, and the page shows the
state process 1 made; a change made through process 2 is likewise what process 1 serves afterwards.

The state used is a free scan's refusal ("Unsupported URL scheme '<marker>'"): it exists only in the tab's
server-side state (`ScanState`), not in the page, the URL, the browser's storage or the database, so a process
without the shared state would show a page without it. No scan runs: the URL is refused before anything
is fetched or counted.

How the page reaches the backend (Reflex 0.10.1, reflex_base/.templates/web/utils/state.js `getBackendURL`):
the compiled event URL is ws://localhost:<port>/_event; "localhost" is replaced by the page's host name and,
on an https page, the scheme becomes wss and the port is dropped, so the socket goes to wss://<host>/_event,
through the terminator, whichever process built the page. The session token lives in the tab's
sessionStorage (`token`), which a reload keeps; on (re)connect the frontend sends `hydrate_and_load` with it.
Chromium resolves the host to the terminator's address (--host-resolver-rules) and accepts the test CA's
certificate (ignore_https_errors: the TLS itself is graded in test_self_grade.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence

import pytest
import redis
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.fixtures.tls_terminator import Exchange

from .conftest import CHROMIUM, CHROMIUM_ARGS, App, Deployment, open_page, upstream_of


@pytest.fixture(scope="module")
def second(deployment: Deployment, start_server: Callable[[str, dict[str, str]], App]) -> App:
    """Process 2: the same build and environment as process 1 (same REDIS_URL, database, base URL)."""
    return start_server("deployment-app-2", deployment.env)


@pytest.fixture(scope="module")
def browser(deployment: Deployment) -> Iterator[Browser]:
    """Chromium that finds the deployment's name at the terminator (set up after `deployment`, closed first)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    rules = f"--host-resolver-rules=MAP {deployment.edge.host} {deployment.edge.ip}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, rules])
        try:
            yield browser
        finally:
            browser.close()


def _refusal(page: Page) -> str:
    """Ask for a free scan of a URL with a scheme made up now; the refusal naming it is shown. The marker."""
    marker = f"tab-{secrets.token_hex(4)}"
    page.get_by_test_id("free-submit").locator("xpath=ancestor::form").get_by_label("Website address").fill(
        f"{marker}://example.com/"
    )
    page.get_by_test_id("free-submit").click()
    expect(page.get_by_role("alert").filter(has_text=f"Unsupported URL scheme '{marker}'")).to_be_visible()
    return marker


def _reload(page: Page) -> None:
    page.reload()
    page.wait_for_selector('main[data-ready="true"]')


def _sockets(exchanges: Sequence[Exchange], token: str) -> set[tuple[str, int]]:
    """The processes that accepted this tab's event websocket (101 on /_event with its token)."""
    return {
        e.upstream
        for e in exchanges
        if e.target.startswith("/_event") and f"token={token}" in e.target and e.status == 101
    }


def test_a_tab_keeps_its_state_when_its_events_move_to_the_other_process(
    deployment: Deployment, second: App, browser: Browser
) -> None:
    edge, terminator = deployment.edge, deployment.edge.terminator
    one, two = upstream_of(deployment.first), upstream_of(second)
    terminator.switch(one)
    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()

        # Given: a refusal in the tab's state, made by process 1, and kept in Redis under the tab's token.
        seen = len(terminator.exchanges)
        open_page(page, edge.url("/"))
        first = _refusal(page)
        token = page.evaluate("window.sessionStorage.getItem('token')")
        assert token, "Reflex keeps the session token in sessionStorage"
        assert _sockets(terminator.exchanges[seen:], token) == {one}
        assert {e.upstream for e in terminator.exchanges[seen:]} == {one}
        with redis.Redis.from_url(deployment.env["REDIS_URL"]) as client:
            assert list(client.scan_iter(match=f"{token}_*")), "the tab's state is in Redis"

        # When: every connection goes to process 2, and the tab reloads (same tab: same token).
        seen = len(terminator.exchanges)
        terminator.switch(two)
        _reload(page)

        # Then: process 2 served the page and the socket, and shows process 1's refusal.
        expect(page.get_by_role("alert").filter(has_text=f"Unsupported URL scheme '{first}'")).to_be_visible()
        assert _sockets(terminator.exchanges[seen:], token) == {two}
        assert {e.upstream for e in terminator.exchanges[seen:]} == {two}

        # And back: a refusal made by process 2 is what process 1 shows next (no stale copy in process 1).
        then = _refusal(page)
        seen = len(terminator.exchanges)
        terminator.switch(one)
        _reload(page)
        expect(page.get_by_role("alert").filter(has_text=f"Unsupported URL scheme '{then}'")).to_be_visible()
        expect(page.get_by_text(first)).to_have_count(0)
        assert _sockets(terminator.exchanges[seen:], token) == {one}

        # A new tab is a new session: the refusal belongs to the first tab's state, not to the page.
        other = context.new_page()
        open_page(other, edge.url("/"))
        expect(other.get_by_text("Unsupported URL scheme")).to_have_count(0)
    finally:
        context.close()
        terminator.switch(one)
