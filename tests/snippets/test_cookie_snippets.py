"""Cookie fixes in the real servers (issue 15): each snippet edits the cookies its finding names, and no other.

A backend on loopback sends cookies with odd names and with attributes already set; nginx, Apache and Caddy
load a cookie finding's snippet in front of it and the test reads the Set-Cookie headers they send.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.ports import free_port
from tests.snippets.test_real_servers import NGINX, _check, _nginx_conf, _response, _running
from websec_app.scanner.fixes import render_snippets

#: The fix text of a cookie finding (what the snippet is rendered from).
FIX = "Set-Cookie: sid=<value>; Secure; HttpOnly; SameSite=Lax"
#: What the backend sends: cookies whose names configuration reads specially, and others no fix names.
BACKEND_COOKIES = (
    "#a=1; Path=/",
    "'b=2; Path=/",
    "~x=3; Path=/",
    "ok=4; Path=/",
    "XSRF-TOKEN=5; Path=/",
    "xx=6; Path=/",
)


class _Backend(http.server.BaseHTTPRequestHandler):
    cookies: tuple[str, ...] = BACKEND_COOKIES

    def do_GET(self) -> None:
        self.send_response(200)
        for cookie in self.cookies:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def backend() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Backend)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _snippets(outcome: str, *cookies: str) -> dict[str, str]:
    snippets = render_snippets(outcome, FIX, subjects=cookies)
    assert snippets is not None
    return snippets


def _cookies(response) -> dict[str, str]:
    """name -> the attributes after it, as sent."""
    sent = response.headers.get_all("Set-Cookie", [])
    return {cookie.split("=", 1)[0]: cookie.split(";", 1)[1].strip() if ";" in cookie else "" for cookie in sent}


def _nginx_cookies(tmp_path: Path, upstream: str, snippet: str) -> dict[str, str]:
    assert NGINX
    port = free_port()
    conf = _nginx_conf(tmp_path, port, upstream, snippet)
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])
    with _running([NGINX, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], tmp_path / "out.log"):
        response = _response(port, "localhost")
    assert response.status == 200, (tmp_path / "error.log").read_text()
    return _cookies(response)


# -- names nginx reads specially, and names none of which can be written ------------------------------------------


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
def test_nginx_edits_exactly_the_named_cookies_whatever_their_names(backend, tmp_path) -> None:
    # "#a" unquoted starts a comment, "'b" a string, "~x" a regular expression (quoted or not)
    snippet = _snippets("cookie.no_httponly", "#a", "'b", "~x", "ok")["nginx"]

    cookies = _nginx_cookies(tmp_path, backend, snippet)

    for name in ("#a", "'b", "ok"):
        assert cookies[name] == "Path=/; Secure; HttpOnly; SameSite=Lax", name
    # "~x" is left out of nginx's snippet; the cookies no finding named are left as they were
    assert cookies["~x"] == cookies["XSRF-TOKEN"] == cookies["xx"] == "Path=/"


def test_a_finding_whose_cookies_are_all_unwritable_gets_no_snippet_for_every_cookie() -> None:
    # "se{ss" cannot be written: an empty list would have meant every cookie (XSRF-TOKEN read by scripts,
    # cross-site SameSite=None cookies)
    snippets = _snippets("cookie.session_no_httponly", "se{ss")
    for server, text in snippets.items():
        assert text.startswith("Not written for "), (server, text)
        assert "proxy_cookie_flags" not in text and "COOKIES = []" not in text
    # nginx alone cannot write "~x" (a regular expression to it): a sentence, not "~" for every cookie
    nginx = _snippets("cookie.session_no_httponly", "~x")
    assert nginx["nginx"].startswith("Not written for nginx: ")
    assert "(\\~x=.*)" in nginx["apache"]
