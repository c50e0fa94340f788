"""A site that admits only clients presenting a certificate (mutual TLS). A visitor without one gets no page, and
neither does the scanner, which presents none; the scan used to say only "Could not reach https://...: the server
closed the connection without answering the request" (TLS 1.3, where the refusal comes after the handshake) or "TLS
handshake failed: ... alert handshake failure" (TLS 1.2), which reads as a broken server. It now says what the server
requires, from the grading handshake, which watches for the server's CertificateRequest, or from TLS 1.3's
certificate_required alert. nginx's `ssl_verify_client on` completes the handshake and answers 400 instead: that
error page is graded as the site's answer, and its note says why it came.

Real nginx and Apache from Debian, and Python's TLS servers, on loopback with the test PKI."""

from __future__ import annotations

import socket
import ssl
import struct
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.pki import Pki
from tests.fixtures.ports import free_port, wait_until_listening
from tests.fixtures.sites import Response, Site, TlsConfig, server_context
from tests.snippets.test_real_servers import APACHE, NGINX, _apache_conf, _check, _running, nginx_head
from websec_app.scanner import TargetUnreachable, scan
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.settings import Settings

REQUIRED = "the server requires a client certificate (mutual TLS)"
PAGE = b"<!doctype html><title>Partners only</title>"


def _requiring(
    pki: Pki, host: str, version: ssl.TLSVersion, mode: ssl.VerifyMode = ssl.CERT_REQUIRED
) -> ssl.SSLContext:
    context = server_context(pki, TlsConfig(maximum_version=version, minimum_version=version), (host,))
    context.verify_mode = mode
    context.load_verify_locations(pki.ca_bundle_path)
    return context


@contextmanager
def _refusing_server(context: ssl.SSLContext, *, resetting: bool = False) -> Iterator[int]:
    """A TLS server (one connection at a time) that refuses a client without a certificate as OpenSSL does: its
    alert is sent and what the client still sends is read before the close, as Apache's lingering close does. With
    `resetting`, it resets the connection instead, its alert unsent (a server that closes with the client's request
    unread resets it, and the alert may be lost with it)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            raw.settimeout(2)
            try:
                _exchange(context, raw, resetting)
            except OSError:
                pass
            finally:
                raw.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stopping.set()
        thread.join(timeout=5)
        listener.close()


_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


def _exchange(context: ssl.SSLContext, raw: socket.socket, resetting: bool) -> None:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    connection = context.wrap_bio(incoming, outgoing, server_side=True)
    try:
        while True:
            try:
                connection.do_handshake()
                break
            except ssl.SSLWantReadError:
                raw.sendall(outgoing.read())
                data = raw.recv(65536)
                if not data:
                    return
                incoming.write(data)
        raw.sendall(outgoing.read())
        connection.write(_ANSWER)
    except ssl.SSLError:
        if resetting:  # SO_LINGER 0: the close sends RST
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
    raw.sendall(outgoing.read())  # the alert, when refused
    while raw.recv(65536):  # lingering: the client's request is read, never reset
        pass


async def _unreachable(url: str, settings: Settings) -> str:
    with pytest.raises(TargetUnreachable) as raised:
        await scan(url, settings)
    return str(raised.value)


@pytest.mark.parametrize(
    ("version", "said"),
    [
        (ssl.TLSVersion.TLSv1_3, f"{REQUIRED}: it answered the request with the TLS alert certificate_required"),
        (ssl.TLSVersion.TLSv1_2, f"{REQUIRED}: it asked for one during the TLS handshake, and without one: TLS "),
    ],
    ids=["tls1.3", "tls1.2"],
)
async def test_a_server_requiring_a_client_certificate_is_said_to(
    version: ssl.TLSVersion, said: str, pki: Pki, dns_server, scan_settings: Settings
) -> None:
    host = f"mtls{version.value}.test"
    dns_server.set(host, "A", "127.0.0.1", ttl=60)
    with _refusing_server(_requiring(pki, host, version)) as port:
        message = await _unreachable(f"https://{host}:{port}/", scan_settings)
        tls = await fetch_tls(host, port, "127.0.0.1", scan_settings, probes=False)
    assert message.startswith(f"Could not reach https://{host}:{port}/: {said}")
    assert tls.client_certificate_requested is True
    if version is ssl.TLSVersion.TLSv1_2:  # refused in the handshake itself: the TLS section says so too
        assert tls.failure is not None and tls.failure.message.startswith(
            f"TLS handshake failed: {REQUIRED}: it asked for one and ended the handshake without it ("
        )
    else:  # TLS 1.3: the client's side of the handshake completes before the server refuses
        assert tls.failure is None and tls.protocol == "TLSv1.3"


async def test_a_reset_after_the_handshake_is_explained_by_the_grading_handshake(
    pki: Pki, dns_server, scan_settings: Settings
) -> None:
    """A server that closes with the request unread resets the connection, its alert lost (Go's TLS server can):
    the grading handshake's CertificateRequest says why."""
    host = "mtls-reset.test"
    dns_server.set(host, "A", "127.0.0.1", ttl=60)
    with _refusing_server(_requiring(pki, host, ssl.TLSVersion.TLSv1_3), resetting=True) as port:
        message = await _unreachable(f"https://{host}:{port}/", scan_settings)
    assert message == (
        f"Could not reach https://{host}:{port}/: {REQUIRED}: it asked for one during the TLS handshake, and without "
        "one: the server reset the connection"
    )


async def test_a_close_after_the_handshake_is_explained_by_the_grading_handshake(
    pki: Pki, own_sites, scan_settings: Settings
) -> None:
    """asyncio's TLS server closes without sending its alert: the page fetch sees only the close, and the grading
    handshake's CertificateRequest says why."""
    context = _requiring(pki, "mtls-quiet.test", ssl.TLSVersion.TLSv1_3)
    site = own_sites(Site(names=("mtls-quiet.test",), default=Response(200, body=PAGE), tls=TlsConfig(context=context)))
    message = await _unreachable(site.url, scan_settings)
    said = f"Could not reach {site.url}: {REQUIRED}: it asked for one during the TLS handshake, and without one: the "
    # a server that closes with the request unread sends a FIN or, when the request is in before it closes, a reset
    # (RFC 1122 4.2.2.13): which one depends on the machine's timing, and both are explained
    assert message in (
        said + "server closed the connection without answering the request",
        said + "server reset the connection",
    )


async def test_an_ordinary_server_is_not_said_to_ask_for_a_certificate(pki: Pki, own_sites, scan_settings) -> None:
    site = own_sites(Site(names=("no-mtls.test",), default=Response(200, body=PAGE)))
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["tls"]["client_certificate_requested"] is False


async def test_an_optional_certificate_request_is_shown_and_the_page_graded(
    pki: Pki, own_sites, scan_settings: Settings
) -> None:
    context = _requiring(pki, "mtls-optional.test", ssl.TLSVersion.TLSv1_3, ssl.CERT_OPTIONAL)
    site = own_sites(
        Site(names=("mtls-optional.test",), default=Response(200, body=PAGE), tls=TlsConfig(context=context))
    )
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["status_code"] == 200
    assert body["tls"]["client_certificate_requested"] is True
    assert "scan.error_status" not in _outcomes(body)


def _outcomes(body: dict[str, Any]) -> dict[str, str]:
    return {
        finding["check"]: finding.get("note") or ""
        for section in body.values()
        if isinstance(section, dict)
        for finding in section.get("findings", [])
    }


# -- real servers ---------------------------------------------------------------------------------------------------


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
async def test_nginx_ssl_verify_client_on_answers_400_and_the_note_says_why(
    pki: Pki, dns_server, scan_settings: Settings, tmp_path: Path
) -> None:
    assert NGINX
    host, port = "mtls-nginx.test", free_port()
    dns_server.set(host, "A", "127.0.0.1", ttl=60)
    issued = pki.issue("valid", (host,))
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        nginx_head(tmp_path)
        + textwrap.indent(
            textwrap.dedent(f"""\
            server {{
                listen 127.0.0.1:{port} ssl;
                server_name {host};
                ssl_certificate {issued.chain_path};
                ssl_certificate_key {issued.key_path};
                ssl_client_certificate {pki.ca_bundle_path};
                ssl_verify_client on;
                location / {{ return 200 "partners only"; }}
            }}
            """),
            "    ",
        )
        + "}\n"
    )
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])
    with _running([NGINX, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], tmp_path / "out.log"):
        wait_until_listening(port)
        body = (await scan(f"https://{host}:{port}/", scan_settings)).to_dict()
    assert body["status_code"] == 400
    assert body["tls"]["client_certificate_requested"] is True
    note = _outcomes(body)["scan.error_status"]
    assert note.startswith(
        f"https://{host}:{port}/ answered 400 Bad Request: the server asked for a client certificate during the TLS "
        "handshake (mutual TLS), and the scanner, like a visitor without one, sent none: this is likely its refusal "
        "(nginx answers 400 when ssl_verify_client on finds no certificate)."
    )


@pytest.mark.skipif(APACHE is None, reason="apache2 is not installed (make test installs Debian's apache2)")
@pytest.mark.parametrize("protocol", ["TLSv1.3", "TLSv1.2"])
async def test_apache_ssl_verify_client_require_is_said_to_require_a_certificate(
    protocol: str, pki: Pki, dns_server, scan_settings: Settings, tmp_path: Path
) -> None:
    host, port = f"mtls-apache{protocol[-1]}.test", free_port()
    dns_server.set(host, "A", "127.0.0.1", ttl=60)
    issued = pki.issue("valid", (host,))
    conf = _apache_conf(
        tmp_path,
        port,
        textwrap.dedent(f"""\
        <VirtualHost 127.0.0.1:{port}>
            ServerName {host}
            SSLEngine on
            SSLProtocol -all +{protocol}
            SSLCertificateFile {issued.chain_path}
            SSLCertificateKeyFile {issued.key_path}
            SSLCACertificateFile {pki.ca_bundle_path}
            SSLVerifyClient require
        </VirtualHost>
        """),
    )
    assert APACHE
    _check([APACHE, "-t", "-f", str(conf)])
    with _running([APACHE, "-f", str(conf), "-DFOREGROUND"], tmp_path / "out.log"):
        wait_until_listening(port)
        message = await _unreachable(f"https://{host}:{port}/", scan_settings)
    assert message.startswith(f"Could not reach https://{host}:{port}/: {REQUIRED}: "), (
        tmp_path / "error.log"
    ).read_text()
