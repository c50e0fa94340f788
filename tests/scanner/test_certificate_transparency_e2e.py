"""Certificate Transparency (RFC 6962): the SCTs that come with a site's certificate, embedded in it, sent in the TLS
handshake, or in a stapled OCSP response. Chrome and Safari refuse a certificate from a public CA without SCTs from
enough logs (ERR_CERTIFICATE_TRANSPARENCY_REQUIRED); the scan said nothing of it, and could not see the SCTs a server
sends in the handshake at all. The grading handshake now asks for them, as browsers' does, and reads them at TLS 1.2
(the ServerHello) and TLS 1.3 (the encrypted Certificate message).

Real nginx from Debian sends SCTs the way operators configure it (`ssl_conf_command ServerInfoFile`, OpenSSL's
serverinfo). A root counts as public when the system's default bundle holds it: here the test root, through
SSL_CERT_FILE, as a public CA's root is on a visitor's machine."""

from __future__ import annotations

import base64
import struct
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.clock import TEST_NOW
from tests.fixtures.pki import Pki, ct_log_id, sct_list
from tests.fixtures.ports import free_port, wait_until_listening
from tests.fixtures.sites import Response, Site, SiteFactory, TlsConfig
from tests.snippets.test_real_servers import NGINX, _check, _running, nginx_head
from websec_app.scanner import scan
from websec_app.settings import Settings

PAGE = Response(200, [("Content-Type", "text/html")], b"<!doctype html><title>Shop</title>")

#: OpenSSL's extension contexts (ssl.h): where a serverinfo extension is sent. TLS 1.2's ServerHello and TLS 1.3's
#: Certificate, for a ClientHello that asked.
_CLIENT_HELLO, _TLS1_2_SERVER_HELLO, _TLS1_3_CERTIFICATE = 0x80, 0x100, 0x1000


@pytest.fixture
def public_test_root(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test root in the system's default bundle, where a public CA's root is: the scan then counts it public."""
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca_bundle_path))


def _python_site(own_sites: SiteFactory, pki: Pki, prefix: str, logged_in: int) -> tuple[str, str]:
    host = own_sites.unique_host(prefix)
    issued = pki.issue("valid", (host,), logged_in=logged_in)
    context = issued.server_context()
    site = own_sites(Site(names=(host,), default=PAGE, tls=TlsConfig(context=context)))
    return host, site.url


def _transparency(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str | None]]:
    tls = body["tls"]
    return tls["certificate_transparency"], {f["check"]: f.get("note") for f in tls["findings"]}


async def test_a_public_certificate_without_scts_is_refused_as_browsers_refuse_it(
    pki: Pki, own_sites: SiteFactory, scan_settings: Settings, public_test_root: None
) -> None:
    _, url = _python_site(own_sites, pki, "unlogged", logged_in=0)
    body = (await scan(url, scan_settings)).to_dict()
    details, notes = _transparency(body)
    assert details == {"embedded_scts": 0, "handshake_scts": 0, "ocsp_scts": 0, "logs": [], "sct_present": False}
    assert notes["tls.cert_not_logged"] == (
        "it comes with no SCT (signed certificate timestamp): none embedded in the certificate, none in the TLS "
        "handshake, none in a stapled OCSP response; Chrome and Safari require SCTs from at least 2 different logs"
    )
    assert body["grade"] == "F"
    assert "tls.cert_valid" not in notes  # browsers refuse it: not a "valid, trusted certificate"


async def test_one_log_is_too_few_and_two_are_enough(
    pki: Pki, own_sites: SiteFactory, scan_settings: Settings, public_test_root: None
) -> None:
    _, one = _python_site(own_sites, pki, "onelog", logged_in=1)
    _, two = _python_site(own_sites, pki, "twologs", logged_in=2)
    notes = _transparency((await scan(one, scan_settings)).to_dict())[1]
    assert notes["tls.cert_not_logged"].startswith("it comes with SCTs from 1 log only (1 embedded);")
    assert "tls.cert_not_logged" not in _transparency((await scan(two, scan_settings)).to_dict())[1]


async def test_a_certificate_of_a_locally_installed_root_needs_no_scts(
    pki: Pki, own_sites: SiteFactory, scan_settings: Settings
) -> None:
    """Chrome exempts a root the machine's owner installed (the test root, in WEBSEC_CA_BUNDLE only), as it does
    from the lifetime limit."""
    _, url = _python_site(own_sites, pki, "private", logged_in=0)
    body = (await scan(url, scan_settings)).to_dict()
    assert body["tls"]["trusted"] is True
    assert "tls.cert_not_logged" not in _transparency(body)[1]


def _serverinfo(path: Path, host: str, logs: tuple[int, ...]) -> None:
    """An OpenSSL serverinfo file (SSL_CTX_use_serverinfo_file, version 2) holding a signed_certificate_timestamp
    extension with one SCT of each of `logs`, sent at TLS 1.2 and 1.3."""
    listed = sct_list(logs, TEST_NOW)
    extension = struct.pack("!IHH", _CLIENT_HELLO | _TLS1_2_SERVER_HELLO | _TLS1_3_CERTIFICATE, 18, len(listed))
    encoded = base64.encodebytes(extension + listed).decode()
    path.write_text(f"-----BEGIN SERVERINFOV2 FOR {host}-----\n{encoded}-----END SERVERINFOV2 FOR {host}-----\n")


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
@pytest.mark.parametrize("protocol", ["TLSv1.3", "TLSv1.2"])
async def test_scts_sent_by_nginx_in_the_handshake_are_read_and_counted(
    protocol: str, pki: Pki, dns_server, scan_settings: Settings, tmp_path: Path, public_test_root: None
) -> None:
    """Two servers on one certificate that embeds nothing: one sends SCTs from two logs (enough), the other from the
    one log only (too few)."""
    assert NGINX
    host = f"ct-{protocol.lower().replace('.', '')}.test"
    dns_server.set(host, "A", "127.0.0.1", ttl=60)
    issued = pki.issue("valid", (host,), logged_in=0)
    ports = {(1, 2): free_port(), (3,): free_port()}
    servers = ""
    for logs, port in ports.items():
        info = tmp_path / f"scts-{port}.pem"
        _serverinfo(info, host, logs)
        servers += textwrap.dedent(f"""\
            server {{
                listen 127.0.0.1:{port} ssl;
                server_name {host};
                ssl_protocols {protocol};
                ssl_certificate {issued.chain_path};
                ssl_certificate_key {issued.key_path};
                ssl_conf_command ServerInfoFile {info};
                location / {{ default_type text/html; return 200 "<!doctype html><title>Shop</title>"; }}
            }}
            """)
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_head(tmp_path) + textwrap.indent(servers, "    ") + "}\n")
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])
    with _running([NGINX, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], tmp_path / "out.log"):
        for port in ports.values():
            wait_until_listening(port)
        enough = (await scan(f"https://{host}:{ports[(1, 2)]}/", scan_settings)).to_dict()
        too_few = (await scan(f"https://{host}:{ports[(3,)]}/", scan_settings)).to_dict()
    assert enough["tls"]["protocol"] == protocol
    details, notes = _transparency(enough)
    logs = sorted(base64.b64encode(ct_log_id(n)).decode() for n in (1, 2))
    assert details == {"embedded_scts": 0, "handshake_scts": 2, "ocsp_scts": 0, "logs": logs, "sct_present": True}
    assert "tls.cert_not_logged" not in notes
    details, notes = _transparency(too_few)
    assert details["handshake_scts"] == 1
    assert notes["tls.cert_not_logged"].startswith("it comes with SCTs from 1 log only (1 in the TLS handshake);")
