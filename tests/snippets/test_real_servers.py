"""The snippets of a real scan of https://worst.test/, loaded by the real servers from Debian (issue 15).

nginx and Apache: every header, cookie and fingerprint snippet goes into one unprivileged configuration (pid,
logs and port in tmp_path, loopback only) in front of the worst fixture site (proxied over plain HTTP), the
configuration test passes (`nginx -t`, `apache2 -t`), and a request shows every header sent with the fix's
value, the version gone from Server, X-Powered-By gone and the cookies carrying the attributes. Caddy: the
same, with `caddy validate` and a request. The fixed TLS and redirect texts are checked with each server's
configuration test. Express and the Cloudflare Worker: `node --check`.
"""

from __future__ import annotations

import http.client
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fixtures.ports import free_port
from tests.snippets.conftest import Fix, cookie_attributes, expected_headers
from websec_app.scanner.fixes.remedies import remedy_table

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
APACHE = shutil.which("apache2") or ("/usr/sbin/apache2" if Path("/usr/sbin/apache2").exists() else None)
CADDY = shutil.which("caddy")
NODE = shutil.which("node")
APACHE_MODULES = Path("/usr/lib/apache2/modules")
#: Fixed texts (remedies.toml templates) that are configuration for these servers, not a sentence.
CONFIG_TEMPLATES = ("https_redirect", "tls_protocols", "tls_ciphers", "tls_stapling", "cors_allowlist")


def _response(port: int, host: str, path: str = "/") -> http.client.HTTPResponse:
    """GET path from the server on loopback, retrying while it starts (at most 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            connection.request("GET", path, headers={"Host": host})
            response = connection.getresponse()
            response.read()
            return response
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
        finally:
            connection.close()


@contextmanager
def _running(command: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _check(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"


def _assert_fixed(response: http.client.HTTPResponse, fixes: list[Fix], server: str) -> None:
    headers = response.headers
    for name, value in expected_headers(fixes):
        assert value in headers.get_all(name, []), f"{server} did not send {name}: {value}"
    assert len(headers.get_all("Content-Security-Policy-Report-Only", [])) == 1
    assert headers.get("X-Powered-By") is None, f"{server} still sends X-Powered-By"
    assert not any(ch.isdigit() for ch in headers.get("Server", "")), f"{server} Server: {headers.get('Server')}"
    cookies = {c.split("=", 1)[0]: c for c in headers.get_all("Set-Cookie", [])}
    for cookie, attributes in cookie_attributes(fixes).items():
        sent = {part.strip().lower() for part in cookies[cookie].split(";")[1:]}
        assert attributes <= sent, f"{server} Set-Cookie {cookies[cookie]!r} lacks {attributes - sent}"


def _template_texts(server: str) -> dict[str, str]:
    templates = remedy_table().templates
    return {kind: templates[kind][server] for kind in CONFIG_TEMPLATES}


# -- nginx --------------------------------------------------------------------------------------------------------


def nginx_head(tmp: Path) -> str:
    """An unprivileged nginx configuration's start, up to inside its `http {` block: pid, logs and temporary files in
    `tmp`, one worker. The caller adds the servers and closes the block."""
    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / name).mkdir(exist_ok=True)
    return textwrap.dedent(f"""\
        worker_processes 1;
        pid {tmp}/nginx.pid;
        error_log {tmp}/error.log;
        events {{ worker_connections 64; }}
        http {{
            access_log off;
            client_body_temp_path {tmp}/client_body;
            proxy_temp_path {tmp}/proxy;
            fastcgi_temp_path {tmp}/fastcgi;
            uwsgi_temp_path {tmp}/uwsgi;
            scgi_temp_path {tmp}/scgi;
        """)


def _nginx_conf(tmp: Path, port: int, upstream: str, server_lines: str, http_lines: str = "") -> Path:
    conf = tmp / "nginx.conf"
    conf.write_text(
        nginx_head(tmp)
        + textwrap.indent(http_lines, "    ")
        + f"\n    server {{\n        listen 127.0.0.1:{port};\n"
        + f"        location / {{\n            proxy_pass http://{upstream};\n"
        + "            proxy_set_header Host $host;\n        }\n"
        + textwrap.indent(server_lines, "        ")
        + "\n    }\n}\n"
    )
    return conf


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
def test_nginx_loads_the_snippets_and_sends_every_fix(worst_site, worst_fixes, tmp_path) -> None:
    assert NGINX
    port = free_port()
    # pasted as the report gives them: nginx applies the first proxy_cookie_flags line matching a cookie, so
    # each finding's line for a cookie must carry every flag the cookie lacks
    snippets = "\n".join(fix.snippets["nginx"] for fix in worst_fixes)
    conf = _nginx_conf(tmp_path, port, f"{worst_site.ip}:{worst_site.http_port}", snippets)
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])
    with _running([NGINX, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], tmp_path / "out.log"):
        response = _response(port, worst_site.host)
    assert response.status == 200, (tmp_path / "error.log").read_text()
    _assert_fixed(response, worst_fixes, "nginx")
    assert response.headers["Server"] == "nginx"


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
def test_nginx_accepts_the_tls_redirect_and_cors_texts(tmp_path) -> None:
    assert NGINX
    texts = _template_texts("nginx")
    redirect, cors = texts.pop("https_redirect"), texts.pop("cors_allowlist")
    cors_http, cors_server = cors.split("\n# in the server {} block", 1)
    cors_server = cors_server.split("\n", 1)[1]
    # the redirect is a server {} block of its own: it sits beside the test's server in http {}
    http_lines = redirect.replace("listen 80;", f"listen 127.0.0.1:{free_port()};").replace("listen [::]:80;", "")
    conf = _nginx_conf(
        tmp_path, free_port(), "127.0.0.1:9", "\n".join([*texts.values(), cors_server]), f"{cors_http}\n{http_lines}\n"
    )
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])


# -- Apache httpd ---------------------------------------------------------------------------------------------------

_APACHE_BASE = """\
ServerRoot {tmp}
PidFile {tmp}/httpd.pid
ErrorLog {tmp}/error.log
DefaultRuntimeDir {tmp}
Mutex file:{tmp} default
ServerName localhost
Listen 127.0.0.1:{port}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule headers_module {modules}/mod_headers.so
LoadModule setenvif_module {modules}/mod_setenvif.so
LoadModule rewrite_module {modules}/mod_rewrite.so
LoadModule proxy_module {modules}/mod_proxy.so
LoadModule proxy_http_module {modules}/mod_proxy_http.so
LoadModule socache_shmcb_module {modules}/mod_socache_shmcb.so
LoadModule ssl_module {modules}/mod_ssl.so
User www-data
Group www-data
"""


def _apache_conf(tmp: Path, port: int, body: str) -> Path:
    conf = tmp / "httpd.conf"
    conf.write_text(_APACHE_BASE.format(tmp=tmp, port=port, modules=APACHE_MODULES) + body + "\n")
    return conf


@pytest.mark.skipif(APACHE is None, reason="apache2 is not installed (make test installs Debian's apache2)")
def test_apache_loads_the_snippets_and_sends_every_fix(worst_site, worst_fixes, tmp_path) -> None:
    assert APACHE
    port = free_port()
    proxy = f"ProxyPreserveHost On\nProxyPass / http://{worst_site.ip}:{worst_site.http_port}/\n"
    conf = _apache_conf(tmp_path, port, proxy + "\n".join(fix.snippets["apache"] for fix in worst_fixes))
    _check([APACHE, "-t", "-f", str(conf)])
    with _running([APACHE, "-f", str(conf), "-DFOREGROUND"], tmp_path / "out.log"):
        response = _response(port, worst_site.host)
    assert response.status == 200, (tmp_path / "error.log").read_text()
    _assert_fixed(response, worst_fixes, "Apache")


@pytest.mark.skipif(APACHE is None, reason="apache2 is not installed (make test installs Debian's apache2)")
def test_apache_accepts_the_tls_redirect_and_cors_texts(tmp_path) -> None:
    assert APACHE
    texts = _template_texts("apache")
    texts["tls_stapling"] = texts["tls_stapling"].replace("/var/run/apache2", str(tmp_path))
    conf = _apache_conf(tmp_path, free_port(), "\n".join(texts.values()))
    _check([APACHE, "-t", "-f", str(conf)])


# -- Caddy ----------------------------------------------------------------------------------------------------------


def _caddy_env(tmp: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "PATH": "/usr/bin:/bin",
    }


@pytest.mark.skipif(CADDY is None, reason="caddy is not installed (make test installs Debian's caddy)")
def test_caddy_validates_the_snippets_and_sends_every_fix(worst_site, worst_fixes, tmp_path) -> None:
    assert CADDY
    port = free_port()
    inner = "\n".join(fix.snippets["caddy"] for fix in worst_fixes)
    caddyfile = tmp_path / "Caddyfile"
    caddyfile.write_text(
        "{\n    admin off\n    auto_https off\n}\n"
        f"http://:{port} {{\n    reverse_proxy {worst_site.ip}:{worst_site.http_port}\n"
        + textwrap.indent(inner, "    ")
        + "\n}\n"
    )
    env = _caddy_env(tmp_path)
    done = subprocess.run(
        [CADDY, "validate", "--config", str(caddyfile), "--adapter", "caddyfile"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    with _running_env([CADDY, "run", "--config", str(caddyfile), "--adapter", "caddyfile"], tmp_path / "out.log", env):
        response = _response(port, worst_site.host)
    assert response.status == 200, (tmp_path / "out.log").read_text()
    _assert_fixed(response, worst_fixes, "Caddy")


@contextmanager
def _running_env(command: list[str], log: Path, env: dict[str, str]) -> Iterator[None]:
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.skipif(CADDY is None, reason="caddy is not installed (make test installs Debian's caddy)")
def test_caddy_validates_the_tls_redirect_and_cors_texts(tmp_path) -> None:
    assert CADDY
    texts = _template_texts("caddy")
    assert not texts.pop("tls_stapling").startswith("#")  # Caddy staples by itself: a sentence says so
    redirect = texts.pop("https_redirect").replace("http:// {", f"http://:{free_port()} {{")
    site = "\n".join(texts.values())
    caddyfile = tmp_path / "Caddyfile"
    caddyfile.write_text(f"{{\n    admin off\n}}\n{redirect}\nexample.com {{\n{textwrap.indent(site, '    ')}\n}}\n")
    done = subprocess.run(
        [CADDY, "validate", "--config", str(caddyfile), "--adapter", "caddyfile"],
        env=_caddy_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


# -- Express and the Cloudflare Worker: node --check ----------------------------------------------------------------


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_express_and_worker_snippets_are_valid_javascript(worst_fixes, tmp_path) -> None:
    assert NODE
    scripts = [(f"express-{i}.js", fix.snippets["express"]) for i, fix in enumerate(worst_fixes)]
    scripts += [
        (f"worker-{i}.mjs", fix.snippets["cloudflare"])
        for i, fix in enumerate(worst_fixes)
        if "export default" in fix.snippets["cloudflare"]
    ]
    table = remedy_table()
    scripts += [
        (f"template-{kind}.js", texts["express"])
        for kind, texts in table.templates.items()
        if texts["express"].startswith("//")
    ]
    assert any(name.startswith("worker-") for name, _ in scripts)
    for name, script in scripts:
        path = tmp_path / name
        path.write_text(script + "\n")
        done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{name}:\n{script}\n{done.stderr}"


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs Debian's nginx)")
def test_nginx_sends_a_value_with_dollar_and_quote_literally(tmp_path) -> None:
    """nginx expands $name in any string: the snippet's ${dollar} (a geo in http {}) keeps a "$" literal."""
    assert NGINX
    from websec_app.scanner.fixes import render_snippets

    value = "default-src 'self' https://a.example/$uri \"q\""
    snippets = render_snippets("csp.missing", value, subject="Content-Security-Policy")
    assert snippets is not None
    lines = snippets["nginx"].splitlines()
    http_lines = "\n".join(line for line in lines if line.startswith("geo "))
    server_lines = "\n".join(line for line in lines if not line.startswith("geo "))
    port = free_port()
    conf = _nginx_conf(tmp_path, port, "127.0.0.1:9", server_lines + "\nlocation = /x { return 200 ok; }", http_lines)
    _check([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)])
    with _running([NGINX, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], tmp_path / "out.log"):
        response = _response(port, "localhost", "/x")
    assert response.status == 200
    assert response.headers["Content-Security-Policy-Report-Only"] == value
