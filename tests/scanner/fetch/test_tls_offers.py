"""What the local OpenSSL can offer is decided once per OpenSSL build and kept in the parse cache
(fetch/tls_probes.py `_offer_table`): the table must hold every question a scan's probes ask, and answer
exactly as deciding it live does."""

from __future__ import annotations

import marshal
import ssl

import pytest

from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from websec_app.scanner.fetch import _tls_client, tls_probes
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.settings import Settings


def test_the_table_answers_as_openssl_does_live_and_survives_the_cache_format() -> None:
    offers, suites = tls_probes._build_offer_table()

    assert offers, "the probes ask something"
    for (minimum, maximum, ciphers), problem in offers.items():
        assert problem == _tls_client.offer_problem(minimum, maximum, ciphers)
    for ciphers, names in suites.items():
        assert names == tls_probes._local_suite_names(ciphers)
    assert marshal.loads(marshal.dumps((offers, suites))) == (offers, suites)  # what parsed_cache writes


@pytest.mark.parametrize("weak", [False, True], ids=["modern site", "legacy site"])
async def test_a_scan_s_probes_ask_nothing_outside_the_table(
    weak: bool, site_factory: SiteFactory, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the table built, and OpenSSL no longer asked directly
    tls_probes._offer_table.cache_clear()
    tls_probes._offer_table()
    tls_probes._suite_names.cache_clear()
    asked: list[tuple[int, int, str]] = []

    def live(minimum: int, maximum: int, ciphers: str) -> str | None:
        asked.append((minimum, maximum, ciphers))
        return None

    monkeypatch.setattr(_tls_client, "offer_problem", live)
    tls = TlsConfig(minimum_version=ssl.TLSVersion.TLSv1, ciphers="ALL:@SECLEVEL=0") if weak else TlsConfig()
    running = site_factory(Site(names=(site_factory.unique_host("offers"),), routes={"/": Response(200)}, tls=tls))

    # When its TLS part runs every probe
    snapshot = await fetch_tls(running.host, 443, running.ip, scan_settings)

    # Then every question was answered by the table
    assert snapshot.protocols and snapshot.cipher_probes
    assert asked == []
    if weak:  # the legacy site accepted families, so each got its own probe, from the table too
        assert any(probe.result == "accepted" for probe in snapshot.cipher_probes)
