"""The grading handshake's trust store (fetch/_tls_client.py `load_trust_store`): the system's roots and
certifi's, looked up by subject hash instead of parsed whole in every process (issue 14), trusting exactly
what the bundles trust."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import certifi
import pytest

from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory
from websec_app.scanner.fetch import _tls_client
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.scanner.snapshot import TlsHandshake
from websec_app.settings import Settings


@pytest.fixture
def fresh_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A byte-code cache of this test's own, and the TLS contexts made again for it and after it."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pycache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    _tls_client.hashed_certifi_dir.cache_clear()
    _tls_client.grading_context.cache_clear()
    yield tmp_path
    _tls_client.hashed_certifi_dir.cache_clear()
    _tls_client.grading_context.cache_clear()


async def _verify_a_site(site_factory: SiteFactory, scan_settings: Settings, label: str) -> TlsHandshake:
    """The grading handshake with a new site of the test PKI, no operator bundle (`ca_bundle`) given."""
    running = site_factory(Site(names=(site_factory.unique_host(label),), routes={"/": Response(200)}))
    return await fetch_tls(running.host, 443, running.ip, replace(scan_settings, ca_bundle=None))


def _bundle_of_the_test_root(path: Path, pki: Pki) -> Path:
    path.write_bytes(Path(pki.ca_bundle_path).read_bytes())
    return path


def _certifi_holds_nothing(fresh_trust: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = fresh_trust / "empty.pem"
    empty.write_bytes(b"")
    monkeypatch.setattr(_tls_client, "certifi_bundle", lambda: empty)


def test_certifi_s_roots_are_filed_under_the_names_openssl_rehash_gives_them(fresh_trust: Path) -> None:
    directory = _tls_client.hashed_certifi_dir()

    assert directory is not None
    files = sorted(directory.iterdir())
    assert _tls_client.certifi_bundle() == Path(certifi.where())  # the file certifi's own API names
    bundle = _tls_client._pem_certificates(Path(certifi.where()).read_bytes())
    assert len(bundle) > 100
    assert sorted(f.read_bytes() for f in files) == sorted(bundle)
    for file in files[:: max(1, len(files) // 8)]:  # the openssl command's own subject hash, for a sample
        printed = subprocess.run(
            ["openssl", "x509", "-hash", "-noout", "-in", str(file)], capture_output=True, text=True, check=True
        )
        assert file.name.split(".")[0] == printed.stdout.strip()


@pytest.mark.parametrize("by_hash", [True, False], ids=["looked up by hash", "bundle loaded whole"])
async def test_a_chain_to_a_root_only_certifi_holds_is_trusted(
    by_hash: bool,
    fresh_trust: Path,
    monkeypatch: pytest.MonkeyPatch,
    pki: Pki,
    site_factory: SiteFactory,
    scan_settings: Settings,
) -> None:
    # Given certifi's bundle holding the test root, and no operator bundle
    bundle = _bundle_of_the_test_root(fresh_trust / "cacert.pem", pki)
    monkeypatch.setattr(_tls_client, "certifi_bundle", lambda: bundle)
    monkeypatch.setattr(sys, "dont_write_bytecode", not by_hash)  # no byte-code: no directory, the bundle whole

    # When the grading handshake verifies the site's chain
    tls = await _verify_a_site(site_factory, scan_settings, "trust")

    # Then it is trusted, through the directory or the bundle
    assert (_tls_client.hashed_certifi_dir() is not None) is by_hash
    assert tls.failure is None and tls.trusted


async def test_without_the_root_in_any_store_the_chain_is_not_trusted(
    fresh_trust: Path,
    monkeypatch: pytest.MonkeyPatch,
    site_factory: SiteFactory,
    scan_settings: Settings,
) -> None:
    _certifi_holds_nothing(fresh_trust, monkeypatch)

    tls = await _verify_a_site(site_factory, scan_settings, "untrusted")

    assert tls.failure is None and not tls.trusted


@pytest.mark.skipif(not _tls_client._DEBIAN_BUNDLE.is_file(), reason="not Debian's layout of the system store")
def test_every_root_of_debian_s_bundle_is_in_its_hashed_directory() -> None:
    from OpenSSL import crypto

    for pem in _tls_client._pem_certificates(_tls_client._DEBIAN_BUNDLE.read_bytes()):
        with pytest.warns(DeprecationWarning):  # X509.get_subject, as the directory's maker uses it
            subject_hash = crypto.load_certificate(crypto.FILETYPE_PEM, pem).get_subject().hash()
        candidates = sorted(_tls_client._DEBIAN_HASHED_DIR.glob(f"{subject_hash:08x}.*"))
        der = crypto.dump_certificate(crypto.FILETYPE_ASN1, crypto.load_certificate(crypto.FILETYPE_PEM, pem))
        assert any(
            crypto.dump_certificate(crypto.FILETYPE_ASN1, crypto.load_certificate(crypto.FILETYPE_PEM, c.read_bytes()))
            == der
            for c in candidates
        ), subject_hash


async def test_a_bundle_named_by_ssl_cert_file_is_trusted(
    fresh_trust: Path,
    monkeypatch: pytest.MonkeyPatch,
    pki: Pki,
    site_factory: SiteFactory,
    scan_settings: Settings,
) -> None:
    # Given OpenSSL's SSL_CERT_FILE naming a bundle that holds the test root, and certifi holding nothing
    _certifi_holds_nothing(fresh_trust, monkeypatch)
    monkeypatch.setenv("SSL_CERT_FILE", str(_bundle_of_the_test_root(fresh_trust / "operator.pem", pki)))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    # When the grading handshake verifies the site's chain
    tls = await _verify_a_site(site_factory, scan_settings, "certfile")

    # Then that bundle was loaded: the system store is not swapped for Debian's directory
    assert not _tls_client.system_store_by_hash()
    assert tls.failure is None and tls.trusted


@pytest.mark.skipif(not _tls_client._DEBIAN_BUNDLE.is_file(), reason="not Debian's layout of the system store")
def test_ssl_cert_file_naming_debian_s_own_bundle_keeps_the_lookup_by_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert _tls_client.system_store_by_hash()

    # Named directly or through a link (as CI images set it), Debian's bundle and directory are the store itself
    link = tmp_path / "bundle.pem"
    link.symlink_to(_tls_client._DEBIAN_BUNDLE)
    monkeypatch.setenv("SSL_CERT_FILE", str(link))
    monkeypatch.setenv("SSL_CERT_DIR", str(_tls_client._DEBIAN_HASHED_DIR) + "/")
    assert _tls_client.system_store_by_hash()

    # Any other file or directory is the operator's choice, loaded as OpenSSL would
    copy = tmp_path / "copy.pem"
    copy.write_bytes(_tls_client._DEBIAN_BUNDLE.read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(copy))
    assert not _tls_client.system_store_by_hash()
    monkeypatch.setenv("SSL_CERT_FILE", str(_tls_client._DEBIAN_BUNDLE))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert not _tls_client.system_store_by_hash()
