"""A certificate not for web servers, served anyway: a client certificate (Extended Key Usage clientAuth) or an
e-mail one installed on the server. OpenSSL, like browsers (Chrome: ERR_CERT_INVALID), refuses it for a TLS server,
and the finding said so in OpenSSL's words only ("unsupported certificate purpose"); it now says what the
certificate is for and what browsers need (RFC 5280 4.2.1.12)."""

from __future__ import annotations

import pytest
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests.fixtures.pki import Pki
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from websec_app.scanner import scan
from websec_app.settings import Settings

PAGE = Response(200, [("Content-Type", "text/html")], b"<!doctype html><title>Shop</title>")


@pytest.mark.parametrize(
    ("purposes", "said"),
    [
        ((ExtendedKeyUsageOID.CLIENT_AUTH,), "clientAuth"),
        ((ExtendedKeyUsageOID.EMAIL_PROTECTION, ExtendedKeyUsageOID.CODE_SIGNING), "emailProtection, codeSigning"),
    ],
    ids=["client", "email-and-code"],
)
async def test_a_certificate_for_other_purposes_is_said_to_be_not_for_web_servers(
    purposes: tuple, said: str, pki: Pki, own_sites: SiteFactory, scan_settings: Settings
) -> None:
    host = own_sites.unique_host("purpose")
    issued = pki.issue("valid", (host,), purposes=purposes)
    context = issued.server_context()
    site = own_sites(Site(names=(host,), default=PAGE, tls=TlsConfig(context=context)))
    body = (await scan(site.url, scan_settings)).to_dict()
    notes = {f["check"]: f.get("note") for f in body["tls"]["findings"]}
    assert body["tls"]["trusted"] is False and body["tls"]["verify_error"] == "unsupported certificate purpose"
    assert notes["tls.cert_untrusted"] == (
        f"the certificate is not for web servers: its Extended Key Usage lists {said}, and browsers require serverAuth "
        "(TLS Web Server Authentication)"
    )
    assert body["grade"] == "F"


async def test_a_certificate_for_web_servers_and_clients_is_trusted(
    pki: Pki, own_sites: SiteFactory, scan_settings: Settings
) -> None:
    host = own_sites.unique_host("purpose")
    issued = pki.issue("valid", (host,), purposes=(ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH))
    context = issued.server_context()
    site = own_sites(Site(names=(host,), default=PAGE, tls=TlsConfig(context=context)))
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["tls"]["trusted"] is True
    assert "tls.cert_valid" in {f["check"] for f in body["tls"]["findings"]}
