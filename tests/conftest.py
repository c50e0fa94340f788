"""Session-wide test servers: PKI, DNS, sites. See tests/fixtures/README.md.

The scanner reaches them like real sites: names resolve through the fixture DNS server
(`scan_settings.dns_servers`), certificates chain to the test root (`scan_settings.ca_bundle`),
and private targets are allowed because every site lives on 127.0.0.0/8.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clock import TEST_NOW
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.pki import Pki
from tests.fixtures.sites import RunningSite, Site, SiteFactory, SiteServer
from websec_app.jobs.engine import JobEngine
from websec_app.settings import DnsServer, Settings

#: Every job engine a test builds (the runtimes of `create_api` and `build_runtime`), to stop those still
#: open when the test ends (`pytest_runtest_call`).
_ENGINES: weakref.WeakSet[JobEngine] = weakref.WeakSet()
_engine_init = JobEngine.__init__


def _tracked_init(self: JobEngine, *args: Any, **kwargs: Any) -> None:
    _engine_init(self, *args, **kwargs)
    _ENGINES.add(self)


JobEngine.__init__ = _tracked_init  # type: ignore[method-assign]

#: How long a test's engines may take to stop before the test fails (a stop waits for running jobs).
ENGINE_STOP_SECONDS = 30.0


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Stop the job engines the test left open on its event loop, as serve-api's shutdown does, before any
    fixture is torn down. Left to the loop's close instead, every task of a PostgreSQL worker is cancelled
    at once (procrastinate's loop, its jobs, the pool's own tasks) and the worker unregisters in the middle
    of that teardown; once, in CI, the loop's close waited 13 minutes there on a task that never ended."""
    try:
        yield
    finally:
        stuck = _stop_engines()
    if stuck:
        raise AssertionError(f"{stuck} job engine(s) did not stop within {ENGINE_STOP_SECONDS:g} s")


def _stop_engines() -> int:
    stuck = 0
    for engine in list(_ENGINES):
        parts = engine._parts  # noqa: SLF001 - only the loop it runs on tells whether it can be stopped here
        if parts is None or parts.loop.is_closed() or parts.loop.is_running():
            continue  # not open, or on a loop that is gone (asyncio.run) or that another thread runs
        try:
            parts.loop.run_until_complete(asyncio.wait_for(engine.stop(), ENGINE_STOP_SECONDS))
        except TimeoutError:
            stuck += 1
    return stuck


#: The tests that start the app as `make run` does (Reflex): `make test` runs the suite in two pytest-xdist
#: workers, and these all go to one of them. Reflex rewrites `reflex.lock/` in the checkout while it starts,
#: so two starts at once can read each other's half-written files; in one worker they start one after the
#: other (tests/ui/conftest.py), and the UI's two servers are built once, not once a worker.
REFLEX_STARTS = ("tests/ui/", "tests/test_app_smoke.py", "tests/jobs/test_embedded.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Tests go to whichever worker is free, as with `--dist load`, but those of REFLEX_STARTS all go to one.

    Decided on the test's path, here, rather than by xdist_group marks: pytest-xdist 3.8 groups tests by a
    "@group" it appends to `item._nodeid`, which pytest 9.2 no longer reads (the node id is `item._id`), so the
    marks grouped nothing and the Reflex tests ran in both workers."""
    from xdist.scheduler import LoadScopeScheduling

    class ReflexStartsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "reflex" if nodeid.startswith(REFLEX_STARTS) else nodeid

    return ReflexStartsTogether(config, log)


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """Root -> intermediate -> leaf certificates; `pki.ca_bundle_path` holds the root only."""
    return Pki(tmp_path_factory.mktemp("pki"), now=TEST_NOW)


@pytest.fixture(scope="session")
def dns_server() -> Iterator[AuthDnsServer]:
    """Authoritative DNS for `.test` on 127.0.53.1 (ephemeral port), with the SSRF names of catalog."""
    with AuthDnsServer() as server:
        catalog.add_ssrf_names(server)
        yield server


@pytest.fixture(scope="session")
def site_server(pki: Pki) -> Iterator[SiteServer]:
    with SiteServer(pki) as server:
        yield server


@pytest.fixture(scope="session")
def site_factory(site_server: SiteServer, dns_server: AuthDnsServer) -> SiteFactory:
    """`site_factory(Site(...))` starts a site on its own loopback address and publishes its names."""
    return SiteFactory(site_server, dns_server)


class _StoppingFactory:
    """The session's SiteFactory, keeping the sites it starts to stop them (`own_sites`)."""

    def __init__(self, factory: SiteFactory) -> None:
        self._factory = factory
        self.started: list[RunningSite] = []

    def __call__(self, site: Site) -> RunningSite:
        running = self._factory(site)
        self.started.append(running)
        return running

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


@pytest.fixture
def own_sites(site_factory: SiteFactory) -> Iterator[_StoppingFactory]:
    """`site_factory` for sites the test alone uses: each is stopped when the test ends, its sockets closed (the
    session's sites stay open, and a process that holds too many descriptors hands out numbers select() refuses)."""
    stopping = _StoppingFactory(site_factory)
    yield stopping
    for site in stopping.started:
        site.stop()


@pytest.fixture(scope="session")
def best_site(site_factory: SiteFactory) -> RunningSite:
    """https://best.test/: every control right (catalog.best_practices)."""
    return site_factory(catalog.best_practices("best.test"))


@pytest.fixture(scope="session")
def worst_site(site_factory: SiteFactory) -> RunningSite:
    """https://worst.test/: everything wrong but a valid certificate (catalog.no_practices)."""
    return site_factory(catalog.no_practices("worst.test"))


@pytest.fixture(scope="session")
def scan_settings(pki: Pki, dns_server: AuthDnsServer) -> Settings:
    """Settings that make the scanner resolve through the fixture DNS and trust the test root. The MX hosts are asked
    nothing (smtp_port 0): their addresses are loopback ones where any local mail server would answer; the tests of
    the STARTTLS check (tests/scanner/test_mail_servers_e2e.py) serve their own on a port of theirs."""
    return Settings(
        allow_private_targets=True,
        dns_servers=(DnsServer(dns_server.ip, dns_server.port),),
        smtp_port=0,
        nameserver_port=dns_server.port,  # the zones' name servers are the fixture server's addresses
        ca_bundle=Path(pki.ca_bundle_path),
        clock_start=TEST_NOW,
    )


@pytest.fixture(scope="session")
def scan_env(scan_settings: Settings) -> dict[str, str]:
    """The same as environment variables, for CLI subprocess tests: `env={**os.environ, **scan_env}`."""
    server = scan_settings.dns_servers[0]
    return {
        "WEBSEC_ALLOW_PRIVATE_TARGETS": "1",
        "WEBSEC_DNS_SERVERS": f"{server.host}:{server.port}",
        "WEBSEC_SMTP_PORT": "0",
        "WEBSEC_NAMESERVER_PORT": str(scan_settings.nameserver_port),
        "WEBSEC_CA_BUNDLE": str(scan_settings.ca_bundle),
        "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
    }
