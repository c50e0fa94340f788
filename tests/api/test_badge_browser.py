"""The README badge shows on other sites' pages: Chromium draws `<img src=".../api/badge?url=...">` from `serve-api`.

Given `python -m websec_app serve-api` on 127.0.0.1 and a page on another site (http://localhost:<port>/, another
host, so another origin and another site), when headless Chromium (Debian's, through Playwright) loads that
page, then the badge is drawn (naturalWidth > 0): an `<img>` is a no-cors request, which Fetch's "cross-origin
resource policy check" blocks under `Cross-Origin-Resource-Policy: same-origin`. The badge opened on its own
(a document) draws without a single CSP violation under the service's policy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.ports import free_port
from tests.fixtures.processes import serve_api
from tests.scanner.browser import CHROMIUM, CHROMIUM_ARGS

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
    env.update({"WEBSEC_DATA_DIR": str(tmp_path), "PYTHONPATH": str(REPO)})
    with serve_api(env, free_port(), seconds=30) as (base, _):
        yield base


@contextmanager
def readme_page(html: str) -> Iterator[str]:
    """A page served at http://localhost:<port>/ (a loopback server of its own): the embedding site."""
    body = html.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_a_page_of_another_site_shows_the_badge(service: str) -> None:
    badge = f"{service}/api/badge?url=example.com"
    with readme_page(f'<!doctype html><title>My project</title><img id="badge" src="{badge}" alt="websec">') as page:
        with chromium() as browser:
            tab = browser.new_page()
            failed: list[str] = []
            tab.on("requestfailed", lambda request: failed.append(f"{request.url} {request.failure}"))
            # When a README-like page on another site loads (its load event waits for the image)
            tab.goto(page, wait_until="load")
            width = tab.evaluate("document.getElementById('badge').naturalWidth")

            # And when the badge is opened on its own, as a document under its own CSP
            violations: list[str] = []
            tab.on("console", lambda message: violations.append(message.text))
            opened = tab.goto(badge, wait_until="load")
            drawn = tab.evaluate("document.documentElement.getBBox().width")

    # Then the image is drawn on the other site's page, nothing was refused...
    assert failed == [] and width > 0, failed
    # ...and the document draws too, nothing of it refused by its policy
    assert opened is not None and opened.status == 200
    assert drawn > 0 and [v for v in violations if "Content Security Policy" in v] == []
