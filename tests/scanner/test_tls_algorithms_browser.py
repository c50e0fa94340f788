"""The scanner's grading handshake fails exactly where Chromium cannot connect for want of a common group or
signature algorithm.

Given HTTPS servers whose leaf key is Ed25519, ECDSA P-521 or P-384, or whose ECDHE group is P-521 or P-384 alone,
when headless Chromium (Debian's, through Playwright) loads each, then it fails with
ERR_SSL_VERSION_OR_CIPHER_MISMATCH exactly where the scanner's TLS check reports tls.handshake_failed (Chrome offers
the groups X25519MLKEM768, X25519, P-256 and P-384, and no Ed25519 or P-521 signature). OpenSSL's defaults, which
the grading handshake offered before, reach all of them.

Each server is Python's ssl on a thread (socketserver), not tests/fixtures/sites.py's asyncio server, which closes a
failed handshake without sending its alert (Chromium then says ERR_CONNECTION_CLOSED, which could mean anything).
Chromium trusts each leaf through --ignore-certificate-errors-spki-list (tests/scanner/browser.py), which clears
certificate errors only. Sync Playwright must not run inside an event loop, so the test is synchronous and runs
the fetch with asyncio.run.
"""

from __future__ import annotations

import asyncio
import http.server
import socketserver
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.factories import make_snapshot
from tests.fixtures.pki import Pki
from tests.scanner.browser import chromium_for_site
from tests.scanner.fetch.test_tls_fetch import algorithm_context
from websec_app.scanner.checks.tls import check_tls
from websec_app.scanner.fetch.tls import fetch_tls
from websec_app.settings import Settings

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -r requirements-dev.txt")

pytestmark = pytest.mark.browser

#: (leaf key, the server's only ECDHE group or None) -> does Chromium 156 fail for want of a common algorithm?
CASES = {
    ("ed25519", None): True,
    ("p521", None): True,
    ("p384", None): False,
    ("p256", "secp521r1"): True,
    ("p256", "secp384r1"): False,
}


def _key(kind: str) -> ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey:
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    curve = {"p521": ec.SECP521R1(), "p384": ec.SECP384R1(), "p256": ec.SECP256R1()}[kind]
    return ec.generate_private_key(curve)


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _https_server(context: ssl.SSLContext) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 (any free port) that answers every GET with "ok"; its port."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Page)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(2)


def test_chromium_fails_exactly_where_the_grading_handshake_does(
    pki: Pki, scan_settings: Settings, tmp_path: Path
) -> None:
    refused, failed = {}, {}
    for number, case in enumerate(CASES):
        kind, curve = case
        # Given a server with this leaf key and these groups
        host = f"algorithms-{number}.test"
        context, leaf = algorithm_context(pki, tmp_path, host, _key(kind), curve)
        with _https_server(context) as port:
            # When Chromium loads it, and the scanner grades it
            with chromium_for_site(SimpleNamespace(names=(host,), ip="127.0.0.1"), pki, leaf=leaf) as browser:
                tab = browser.new_context().new_page()
                try:
                    tab.goto(f"https://{host}:{port}/")
                    refused[case] = False
                except playwright_api.Error as exc:
                    assert "ERR_SSL_VERSION_OR_CIPHER_MISMATCH" in str(exc), (case, str(exc))
                    refused[case] = True
            tls = asyncio.run(fetch_tls(host, port, "127.0.0.1", scan_settings, probes=False))
        findings = check_tls(make_snapshot(url=f"https://{host}/", tls=tls)).findings
        failed[case] = [f.outcome for f in findings] == ["tls.handshake_failed"]

    # Then the scanner's handshake failed exactly where Chromium's did
    assert refused == CASES
    assert failed == CASES
