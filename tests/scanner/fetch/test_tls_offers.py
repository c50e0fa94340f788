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


def test_the_grading_hello_offers_chromes_groups_and_signature_algorithms() -> None:
    """Chromium 156's ClientHello, GREASE left out: groups X25519MLKEM768, X25519, P-256, P-384 (key shares for the
    first two); ML-DSA, then ECDSA P-256/P-384 and RSA signatures with SHA-256 to SHA-512; no P-521, X448 or FFDHE,
    no Ed25519, Ed448, ECDSA P-521 or SHA-1. OpenSSL's defaults offered all of those, so a server that needs one
    was graded A+ where Chrome cannot connect."""
    import warnings

    from OpenSSL import SSL

    with warnings.catch_warnings():  # tlslite/__init__ imports asyncore, deprecated since Python 3.11
        warnings.simplefilter("ignore", DeprecationWarning)
        from tlslite.constants import ExtensionType
        from tlslite.messages import ClientHello
        from tlslite.utils.codec import Parser

    connection = SSL.Connection(_tls_client.grading_context(None), None)
    connection.set_connect_state()
    with pytest.raises(SSL.WantReadError):
        connection.do_handshake()
    record = connection.bio_read(65536)
    hello = ClientHello().parse(Parser(record[5 + 1 :]))  # past the record header and the handshake type

    groups = hello.getExtension(ExtensionType.supported_groups).groups
    key_shares = [share.group for share in hello.getExtension(ExtensionType.key_share).client_shares]
    signatures = [(high << 8) | low for high, low in hello.getExtension(ExtensionType.signature_algorithms).sigalgs]
    assert groups == [0x11EC, 0x001D, 0x0017, 0x0018]  # X25519MLKEM768, x25519, secp256r1, secp384r1
    assert key_shares == [0x11EC, 0x001D]
    chrome = [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601]
    assert signatures in ([0x0904, 0x0905, 0x0906, *chrome], chrome)  # with ML-DSA where OpenSSL has it
