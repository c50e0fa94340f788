"""Cookie fixes in the real servers (issue 15): each snippet edits the cookies its finding names, and no other.

A backend on loopback sends cookies with odd names and with attributes already set; nginx, Apache and Caddy
load a cookie finding's snippet in front of it and the test reads the Set-Cookie headers they send.
"""

from __future__ import annotations

import http.server
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.ports import free_port
from tests.snippets.test_real_servers import (
    APACHE,
    APACHE_MODULES,
    CADDY,
    NGINX,
    _apache_conf,
    _caddy_env,
    _check,
    _nginx_conf,
    _response,
    _running,
    _running_env,
)
from websec_app.scanner.fixes import render_snippets

#: The fix text of a cookie finding (what the snippet is rendered from).
FIX = "Set-Cookie: sid=<value>; Secure; HttpOnly; SameSite=Lax"
#: The attributes the fix adds.
FIX_ATTRIBUTES = ("Secure", "HttpOnly", "SameSite=Lax")
#: What the backend sends: cookies whose names configuration reads specially, and others no fix names.
BACKEND_COOKIES = (
    "#a=1; Path=/",
    "'b=2; Path=/",
    "~x=3; Path=/",
    "ok=4; Path=/",
    "XSRF-TOKEN=5; Path=/",
    "xx=6; Path=/",
    "sid=7; Path=/; HttpOnly; SameSite=Strict",
    "pref=8; Path=/; SameSite=None; Secure",
    "lax=9; Path=/; secure",
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
    assert (
        "samesite=" not in snippet.split("\nproxy_cookie_flags", 1)[1]
    )  # a finding on HttpOnly leaves SameSite as the cookie has it

    cookies = _nginx_cookies(tmp_path, backend, snippet)

    for name in ("#a", "'b", "ok"):
        assert cookies[name] == "Path=/; Secure; HttpOnly", name
    # "~x" is left out of nginx's snippet; the cookies no finding named are left as they were
    assert cookies["~x"] == cookies["XSRF-TOKEN"] == cookies["xx"] == "Path=/"


@pytest.mark.parametrize("server", ["caddy", "apache"])
def test_apache_and_caddy_edit_exactly_a_findings_cookies_with_one_pattern_for_all(server, backend, tmp_path) -> None:
    # One edit per attribute names the finding's cookies as alternatives of one pattern (a cookie each made 2 KB
    # of configuration): "#a", "'b" and "~x" are escaped in it, "x" must not match "xx" nor "XSRF-TOKEN"
    binary, load = {"caddy": (CADDY, _caddy_cookies), "apache": (APACHE, _apache_cookies)}[server]
    if binary is None:
        pytest.skip(f"{server} is not installed (make test installs Debian's)")
    snippet = _snippets("cookie.no_httponly", "#a", "'b", "~x", "ok", "x")[server]
    assert snippet.count("|ok|") == len(FIX_ATTRIBUTES) * 2

    cookies = load(tmp_path, backend, snippet)

    for name in ("#a", "'b", "~x", "ok"):
        assert cookies[name] == "Path=/; Secure; HttpOnly; SameSite=Lax", name
    assert cookies["XSRF-TOKEN"] == cookies["xx"] == "Path=/"
    assert cookies["sid"] == "Path=/; HttpOnly; SameSite=Strict"


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


# -- SameSite: added where missing, never replacing the cookie's own ----------------------------------------------

#: (finding, cookie): a session cookie with SameSite=Strict lacking Secure, a SameSite=None cookie lacking
#: HttpOnly, a cookie lacking SameSite.
SAMESITE_FINDINGS = (("cookie.session_no_secure", "sid"), ("cookie.no_httponly", "pref"), ("cookie.no_samesite", "ok"))
#: What each of them must become.
SAMESITE_EXPECTED = {
    "sid": "Path=/; HttpOnly; SameSite=Strict; Secure",
    "pref": "Path=/; SameSite=None; Secure; HttpOnly",
    "ok": "Path=/; Secure; SameSite=Lax",
}


def _caddy_cookies(tmp_path: Path, upstream: str, snippet: str) -> dict[str, str]:
    assert CADDY
    port = free_port()
    inner = "\n".join(f"    {line}" for line in snippet.splitlines())
    caddyfile = tmp_path / "Caddyfile"
    caddyfile.write_text(
        f"{{\n    admin off\n    auto_https off\n}}\nhttp://:{port} {{\n    reverse_proxy {upstream}\n{inner}\n}}\n"
    )
    env = _caddy_env(tmp_path)
    _check_env([CADDY, "validate", "--config", str(caddyfile), "--adapter", "caddyfile"], env)
    with _running_env([CADDY, "run", "--config", str(caddyfile), "--adapter", "caddyfile"], tmp_path / "out.log", env):
        response = _response(port, "localhost")
    assert response.status == 200, (tmp_path / "out.log").read_text()
    return _cookies(response)


def _apache_cookies(tmp_path: Path, upstream: str, snippet: str) -> dict[str, str]:
    assert APACHE
    port = free_port()
    conf = _apache_conf(tmp_path, port, f"ProxyPass / http://{upstream}/\n{snippet}")
    _check([APACHE, "-t", "-f", str(conf)])
    with _running([APACHE, "-f", str(conf), "-DFOREGROUND"], tmp_path / "out.log"):
        response = _response(port, "localhost")
    assert response.status == 200, (tmp_path / "error.log").read_text()
    return _cookies(response)


def _check_env(command: list[str], env: dict[str, str]) -> None:
    import subprocess

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("server", ["nginx", "caddy", "apache"])
def test_samesite_is_added_where_missing_and_strict_or_none_are_kept(server, backend, tmp_path) -> None:
    binary, load = {
        "nginx": (NGINX, _nginx_cookies),
        "caddy": (CADDY, _caddy_cookies),
        "apache": (APACHE, _apache_cookies),
    }[server]
    if binary is None:
        pytest.skip(f"{server} is not installed (make test installs Debian's)")
    # Given the snippet of each finding, one per cookie (nginx applies the first line matching a cookie)
    snippet = "\n".join(_snippets(outcome, cookie)[server] for outcome, cookie in SAMESITE_FINDINGS)

    # When the server sends the backend's cookies through it
    cookies = load(tmp_path, backend, snippet)

    # Then each gets what it lacked and keeps its own SameSite
    assert {name: cookies[name] for name in SAMESITE_EXPECTED} == SAMESITE_EXPECTED
    assert cookies["XSRF-TOKEN"] == "Path=/"


# -- Apache: cookies a CGI or PHP-FPM application sets --------------------------------------------------------------

_CGI_SCRIPT = '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\nSet-Cookie: sid=1; Path=/\\r\\n\\r\\nok\\n"\n'


@pytest.mark.skipif(
    APACHE is None or not (APACHE_MODULES / "mod_cgid.so").exists(), reason="apache2 with mod_cgid is not installed"
)
def test_apache_edits_the_cookies_a_cgi_application_sets(tmp_path) -> None:
    # mod_cgi(d) and mod_proxy_fcgi put a script's Set-Cookie in err_headers_out: only `Header always` edits it
    assert APACHE
    snippet = _snippets("cookie.session_no_secure", "sid")["apache"]
    # the script runs as Apache's User (www-data): in a directory it can read, not the test's own (0700)
    scripts = Path(tempfile.mkdtemp(prefix="websec-cgi-"))
    try:
        scripts.chmod(0o755)
        (scripts / "app.cgi").write_text(_CGI_SCRIPT)
        (scripts / "app.cgi").chmod(0o755)
        port = free_port()
        body = (
            f"LoadModule cgid_module {APACHE_MODULES}/mod_cgid.so\nScriptSock {scripts}/cgid.sock\n"
            f"DocumentRoot {scripts}\n<Directory {scripts}>\n    Require all granted\n    Options +ExecCGI\n"
            f"    SetHandler cgi-script\n</Directory>\n{snippet}"
        )
        conf = _apache_conf(tmp_path, port, body)
        _check([APACHE, "-t", "-f", str(conf)])
        with _running([APACHE, "-f", str(conf), "-DFOREGROUND"], tmp_path / "out.log"):
            response = _response(port, "localhost", "/app.cgi")
    finally:
        shutil.rmtree(scripts, ignore_errors=True)
    assert response.status == 200, (tmp_path / "error.log").read_text()
    assert response.headers.get_all("Set-Cookie") == ["sid=1; Path=/; Secure; HttpOnly; SameSite=Lax"]
