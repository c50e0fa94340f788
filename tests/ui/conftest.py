"""Browser tests: the app started the way `make run` starts it, driven by Debian's Chromium through Playwright.

One server for the whole session (the prod build takes a few seconds), scanning the fixture sites
of `tests/conftest.py` (loopback addresses allowed, the fixture DNS server and test CA trusted), with
its own database, which the tests also open to make keys and tokens through the store.

Playwright drives the system Chromium (`/usr/bin/chromium`); `playwright install` is never needed.
Screenshots of the main pages go to `var/screenshots/` (desktop 1280x800, phone 390x844).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from websec_app.store import Database

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("WEBSEC_TEST_CHROMIUM", "/usr/bin/chromium"))
#: A cold start installs the JS packages (bun, from the npm registry) before the prod build.
START_TIMEOUT_S = 300.0
SCREENSHOTS = ROOT / "var" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: Generous, so the many scans of the suite never meet it (the quota test fills it up on purpose).
FREE_SCANS_PER_DAY = 40

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class App:
    url: str
    database: Database
    free_scans_per_day: int

    def path(self, path: str) -> str:
        return f"{self.url}{path}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 60) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _stop(server: subprocess.Popen[bytes]) -> None:
    """`make`, reflex and the granian worker share one process group: stop them all."""
    if server.poll() is None:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
    try:
        os.killpg(server.pid, 9)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def app(tmp_path_factory: pytest.TempPathFactory, scan_env: dict[str, str], best_site, worst_site) -> Iterator[App]:
    """`make run` on a free port with the fixture sites scannable and a database of its own."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    work = tmp_path_factory.mktemp("ui-app")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data = work / "var"
    env = {
        **os.environ,
        **scan_env,
        # Our own frontend build directory: every prod start rebuilds it (see tests/test_app_smoke.py).
        "REFLEX_WEB_WORKDIR": str(work / "web"),
        "REFLEX_STATES_WORKDIR": str(work / "states"),
        "WEBSEC_DATA_DIR": str(data),
        "WEBSEC_DATABASE_URL": f"sqlite:///{data / 'websec.db'}",
        # Links the server builds (sandbox checkout pages, provider return URLs) point at this server.
        "WEBSEC_BASE_URL": url,
        "WEBSEC_FREE_SCANS_PER_DAY": str(FREE_SCANS_PER_DAY),
        "WEBSEC_ENV": "development",
    }
    log = work / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            ["make", "--no-print-directory", "run", f"PORT={port}", "HOST=127.0.0.1"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    database = Database(env["WEBSEC_DATABASE_URL"])
    try:
        started = time.monotonic()
        while True:
            if server.poll() is not None:
                pytest.fail(f"`make run` exited with {server.returncode}:\n{_tail(log)}")
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() - started > START_TIMEOUT_S:
                pytest.fail(f"`make run` did not serve {url} within {START_TIMEOUT_S:.0f}s:\n{_tail(log)}")
            time.sleep(0.25)
        print(f"`make run` served {url} after {time.monotonic() - started:.1f}s")
        yield App(url, database, FREE_SCANS_PER_DAY)
    finally:
        database.dispose()
        _stop(server)
        shutil.rmtree(work / "web", ignore_errors=True)  # ~150 MB of node_modules


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory: pytest.TempPathFactory, app: App) -> Iterator[playwright_api.BrowserContext]:
    """Debian's Chromium, headless, with a fresh profile (Playwright's own browsers are never downloaded).

    It depends on `app` so that it closes first: Playwright's event loop must be gone before the fixture
    servers stop theirs (they share this thread's notion of the running loop).
    """
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with playwright_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=DESKTOP,
            accept_downloads=True,
        )
        context.set_default_timeout(15_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser_context: playwright_api.BrowserContext) -> Iterator[playwright_api.Page]:
    """A new tab (its own sessionStorage, so its own Reflex session and API key) at desktop size."""
    tab = browser_context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield tab
    finally:
        tab.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def screenshot(page: playwright_api.Page, name: str) -> None:
    """`var/screenshots/<name>-desktop.png` and `-phone.png` of the page as it is now (full length)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or DESKTOP
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{name}-desktop.png"), full_page=True)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(150)  # let the responsive layout settle
        page.screenshot(path=str(SCREENSHOTS / f"{name}-phone.png"), full_page=True)
    finally:
        page.set_viewport_size(size)


def open_page(page: playwright_api.Page, url: str) -> None:
    """Go to `url` and wait until the page is connected to its state (`<main data-ready="true">`)."""
    page.goto(url)
    page.wait_for_selector('main[data-ready="true"]')
