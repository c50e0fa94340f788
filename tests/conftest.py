"""Session-wide test servers: PKI, DNS, sites. See tests/fixtures/README.md.

The scanner reaches them like real sites: names resolve through the fixture DNS server
(`scan_settings.dns_servers`), certificates chain to the test root (`scan_settings.ca_bundle`),
and private targets are allowed because every site lives on 127.0.0.0/8.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clock import TEST_NOW
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.pki import Pki
from tests.fixtures.sites import RunningSite, SiteFactory, SiteServer
from websec_app.settings import DnsServer, Settings


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
    """Settings that make the scanner resolve through the fixture DNS and trust the test root."""
    return Settings(
        allow_private_targets=True,
        dns_servers=(DnsServer(dns_server.ip, dns_server.port),),
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
        "WEBSEC_CA_BUNDLE": str(scan_settings.ca_bundle),
        "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
    }
