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
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import pytest

from tests.clock import TEST_NOW
from tests.fixtures.catalog import HTTPS_REDIRECT, best_dns_records
from tests.fixtures.pki import Pki
from tests.fixtures.ports import free_port
from tests.fixtures.processes import (
    MAKE_RUN_START_SECONDS,
    frontend_workdirs,
    log_tail,
    make_run_argv,
    stop_group,
    wait_until_healthy,
)
from tests.fixtures.providers import RazorpayStandIn, StripeStandIn
from tests.fixtures.providers import razorpay as razorpay_standin
from tests.fixtures.providers import stripe as stripe_standin
from tests.fixtures.sites import RunningSite, Site, SiteFactory
from tests.fixtures.tls_terminator import TlsTerminator, terminator_context
from tests.payment_fixtures import razorpay_api, stripe_api
from tests.redis_server import get_redis_server
from websec_app.store import Database

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("WEBSEC_TEST_CHROMIUM", "/usr/bin/chromium"))
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
__all__ = ["razorpay_api", "stripe_api"]  # session fixtures of tests/payment_fixtures.py, used here


@dataclass(frozen=True)
class App:
    url: str
    database: Database
    data_dir: Path
    free_scans_per_day: int

    def path(self, path: str) -> str:
        return f"{self.url}{path}"

    def outbox(self) -> list[str]:
        """The emails the app wrote (no SMTP server configured: .eml files in <data dir>/outbox)."""
        folder = self.data_dir / "outbox"
        return [p.read_text(errors="replace") for p in sorted(folder.glob("*.eml"))] if folder.is_dir() else []


#: Every `_Server` of the session, so that one more never starts while another is still starting.
_EVERY_SERVER: list[_Server] = []


class _Server:
    """One `make run` process (its own port, build directory and database): `start()`, later `app()`."""

    def __init__(self, work: Path, extra_env: dict[str, str]) -> None:
        self.work = work
        self.url = f"http://127.0.0.1:{free_port()}"
        # Several processes of one deployment share a data directory and database: extra_env may name them.
        self.data = Path(extra_env["WEBSEC_DATA_DIR"]) if "WEBSEC_DATA_DIR" in extra_env else work / "var"
        self.database_url = extra_env.get("WEBSEC_DATABASE_URL", f"sqlite:///{self.data / 'websec.db'}")
        env = {
            **os.environ,
            **frontend_workdirs(work),  # our own frontend build directory: every prod start rebuilds it
            "WEBSEC_DATA_DIR": str(self.data),
            "WEBSEC_DATABASE_URL": self.database_url,
            # Links the server builds (sandbox pages, provider return URLs, emails) point at this server.
            "WEBSEC_BASE_URL": self.url,
            "WEBSEC_FREE_SCANS_PER_DAY": str(FREE_SCANS_PER_DAY),
            "WEBSEC_ENV": "development",
            "WEBSEC_SMTP_URL": "",
            **extra_env,
        }
        self.env = env
        self.log = work / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self._app: App | None = None
        _EVERY_SERVER.append(self)

    def start(self) -> None:
        if self.process is not None:
            return
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                make_run_argv(int(self.url.rsplit(":", 1)[1])),
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started = time.monotonic()

    def app(self) -> App:
        """Start it if needed, wait until it serves (once), then the App handle."""
        if self._app is not None:
            return self._app
        self.start()
        assert self.process is not None
        seconds = wait_until_healthy(
            self.url,
            self.process,
            what="`make run`",
            seconds=MAKE_RUN_START_SECONDS,
            output=lambda: log_tail(self.log),
            started=self.started,
            interval=0.25,
            request_timeout=2,
        )
        print(f"`make run` served {self.url} after {seconds:.1f}s")
        self._app = App(self.url, Database(self.database_url), self.data, FREE_SCANS_PER_DAY)
        return self._app

    def stop(self) -> None:
        """`make`, reflex and the granian worker share one process group: stop them all."""
        if self._app is not None:
            self._app.database.dispose()
        if self.process is None:
            return
        stop_group(self.process)
        shutil.rmtree(self.work / "web", ignore_errors=True)  # ~150 MB of node_modules


@pytest.fixture(scope="session")
def _servers(
    tmp_path_factory: pytest.TempPathFactory,
    scan_env: dict[str, str],
    best_site: RunningSite,
    worst_site: RunningSite,
    razorpay_api: RazorpayStandIn,
    stripe_api: StripeStandIn,
) -> Iterator[dict[str, _Server]]:
    """Two servers: one paying through the provider stand-ins, one through the development sandbox (no
    provider keys). Both scan the fixture sites. The first starts now; the second once the first serves
    (it then builds while tests run): Reflex rewrites `reflex.lock/` while it starts, and two starts at the
    same moment can read each other's half-written package.json."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    providers = {
        "RAZORPAY_KEY_ID": razorpay_standin.KEY_ID,
        "RAZORPAY_KEY_SECRET": razorpay_standin.KEY_SECRET,
        "RAZORPAY_WEBHOOK_SECRET": razorpay_standin.WEBHOOK_SECRET,
        "RAZORPAY_BASE_URL": razorpay_api.base_url,
        "STRIPE_SECRET_KEY": stripe_standin.SECRET_KEY,
        "STRIPE_WEBHOOK_SECRET": stripe_standin.WEBHOOK_SECRET,
        "STRIPE_API_BASE": stripe_api.base_url,
        "WEBSEC_PAYMENTS_SANDBOX": "off",
    }
    servers = {
        "providers": _Server(tmp_path_factory.mktemp("ui-app"), {**scan_env, **providers}),
        "sandbox": _Server(tmp_path_factory.mktemp("ui-sandbox-app"), {**scan_env, "WEBSEC_PAYMENTS_SANDBOX": "on"}),
    }
    servers["providers"].start()
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def app(_servers: dict[str, _Server]) -> App:
    """`make run` with the fixture sites scannable, paying through the Razorpay and Stripe stand-ins."""
    app = _servers["providers"].app()
    _servers["sandbox"].start()  # builds in the background from now on
    return app


@pytest.fixture(scope="session")
def sandbox_app(app: App, _servers: dict[str, _Server]) -> App:
    """`make run` whose checkouts go to the development sandbox (after `app`: never two Reflex starts at once)."""
    return _servers["sandbox"].app()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory, app: App) -> Iterator[playwright_api.BrowserContext]:
    """Debian's Chromium, headless, with a fresh profile (Playwright's own browsers are never downloaded).

    Per test module (about a second to start): Playwright's sync API keeps an event loop running in this
    thread, so it must be gone before async tests run (pytest-asyncio) and before the session's fixture
    servers stop their loops. It depends on `app` so that it is set up after them and closed first.
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


T = TypeVar("T")

#: The widths what people see is looked at (house rule 8): phone and desktop.
WIDTHS = {"375": {"width": 375, "height": 812}, "1280": DESKTOP}


def at_each_width(page: playwright_api.Page, look: Callable[[str], T]) -> list[T]:
    """`look(width)` with the page's viewport set to each of WIDTHS in turn, once its layout has settled; the
    viewport is put back afterwards, whatever `look` raised."""
    before = page.viewport_size
    try:
        results = []
        for width, size in WIDTHS.items():
            page.set_viewport_size(size)
            page.wait_for_timeout(200)  # let the responsive layout settle
            results.append(look(width))
        return results
    finally:
        if before is not None:
            page.set_viewport_size(before)


def open_page(page: playwright_api.Page, url: str) -> None:
    """Go to `url` and wait until the page is connected to its state (`<main data-ready="true">`)."""
    page.goto(url)
    page.wait_for_selector('main[data-ready="true"]')


# -- as deployed: behind TLS, in production, several processes (test_self_grade.py, test_two_processes.py) --


@dataclass(frozen=True)
class Edge:
    """https://<host>/ on a loopback address: a TLS terminator on port 443 in front of an app (switchable),
    a 301 to https on port 80, and the name in the fixture DNS (a signed zone with best-practice records)."""

    host: str
    ip: str
    terminator: TlsTerminator

    def url(self, path: str = "/") -> str:
        return f"https://{self.host}{path}"


def upstream_of(app: App) -> tuple[str, int]:
    """The (address, port) the app's process listens on (plain HTTP, what the terminator forwards to)."""
    parts = urlsplit(app.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@contextmanager
def edge_for(
    site_factory: SiteFactory, pki: Pki, host: str, upstream: tuple[str, int], *, add_hsts: str | None = None
) -> Iterator[Edge]:
    """`host` in front of `upstream`: see `Edge` and tests/fixtures/tls_terminator.py (`add_hsts`)."""
    port80 = site_factory(
        Site(
            names=(host,),
            tls=None,  # port 443 is the terminator's: the site neither listens on it nor reserves it
            https_port=0,
            http=HTTPS_REDIRECT,
            dns=best_dns_records(host),
            dnssec=True,
        )
    )
    try:
        with TlsTerminator(
            terminator_context(pki, [host]), (port80.ip, 443), upstream, add_hsts=add_hsts
        ) as terminator:
            yield Edge(host, port80.ip, terminator)
    finally:
        port80.stop()


@pytest.fixture(scope="session")
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, dict[str, str]], App]]:
    """`start_server(name, extra_env)`: one more `make run`, serving when it returns, stopped with the session.
    It first waits for any server of the session that is still starting (never two Reflex starts at once)."""
    started: list[_Server] = []

    def start(name: str, extra_env: dict[str, str]) -> App:
        for other in list(_EVERY_SERVER):
            if other.process is not None and other.process.poll() is None:
                other.app()
        server = _Server(tmp_path_factory.mktemp(name), extra_env)
        started.append(server)
        return server.app()

    try:
        yield start
    finally:
        for server in started:
            server.stop()


@dataclass(frozen=True)
class Deployment:
    """docs/deploy.md's "several processes" in small: `WEBSEC_ENV=production`, one database and one Redis shared
    by every process (`env`), reached at https://<edge.host>/. One process (`first`) runs from the start."""

    edge: Edge
    env: dict[str, str]
    first: App


def clock_at_test_now() -> dict[str, str]:
    """The variables that start a process's clock at TEST_NOW through datefudge's preload: production refuses
    WEBSEC_CLOCK_START, yet what it serves follows its clock (security.txt's Expires), and the scanner grading it
    reads TEST_NOW. With the tests' own clock moved (`make test-clock`, itself datefudge: DATEFUDGE is the real
    time minus the shown one), the offset is taken from the real time, not from the moved one."""
    [library] = Path("/usr/lib").glob("*-*/datefudge/datefudge.so")
    real_now = time.time() + int(os.environ.get("DATEFUDGE", "0"))
    return {
        "LD_PRELOAD": ":".join(filter(None, (str(library), os.environ.get("LD_PRELOAD")))),
        "DATEFUDGE": str(round(real_now - TEST_NOW.timestamp())),
    }


@pytest.fixture(scope="session")
def deployment(
    start_server: Callable[[str, dict[str, str]], App],
    site_factory: SiteFactory,
    pki: Pki,
    scan_env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    host = site_factory.unique_host("websec-prod")
    shared = tmp_path_factory.mktemp("deployment-data")
    env = {
        "WEBSEC_ENV": "production",
        "WEBSEC_BASE_URL": f"https://{host}",
        "REDIS_URL": get_redis_server().url,
        "WEBSEC_DATA_DIR": str(shared),
        "WEBSEC_DATABASE_URL": f"sqlite:///{shared / 'websec.db'}",
        # Production refuses private targets; the fixture DNS and CA keep any scan it runs off the internet.
        "WEBSEC_ALLOW_PRIVATE_TARGETS": "0",
        "WEBSEC_DNS_SERVERS": scan_env["WEBSEC_DNS_SERVERS"],
        "WEBSEC_SMTP_PORT": scan_env["WEBSEC_SMTP_PORT"],
        "WEBSEC_NAMESERVER_PORT": scan_env["WEBSEC_NAMESERVER_PORT"],
        "WEBSEC_CA_BUNDLE": scan_env["WEBSEC_CA_BUNDLE"],
        **clock_at_test_now(),
    }
    first = start_server("deployment-app-1", env)
    # No add_hsts: in production the app sends Strict-Transport-Security itself.
    with edge_for(site_factory, pki, host, upstream_of(first)) as edge:
        yield Deployment(edge, env, first)
