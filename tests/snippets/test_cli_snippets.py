"""`scan --text` prints the top fixes written for the site's own server, or for the one --server names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "websec_app", "scan", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_text_report_writes_the_top_fixes_for_the_detected_server(worst_site, scan_env) -> None:
    done = _cli(worst_site.url, "--text", env=scan_env)
    assert done.returncode == 0, done.stderr
    # worst.test answers "Server: Apache/2.4.41 (Ubuntu)"
    assert "How to fix them in Apache httpd (detected from the response headers" in done.stdout
    snippets = done.stdout.split("How to fix them in", 1)[1]
    assert "Header always set " in snippets
    assert snippets.count("\n  ") >= 5  # five numbered fixes, each with its snippet


def test_server_option_picks_another_server_and_refuses_unknown_names(worst_site, scan_env) -> None:
    done = _cli(worst_site.url, "--text", "--server", "Caddy", env=scan_env)
    assert done.returncode == 0, done.stderr
    assert "How to fix them in Caddy (chosen with --server" in done.stdout
    assert "defer" in done.stdout.split("How to fix them in", 1)[1]
    refused = _cli(worst_site.url, "--text", "--server", "lighttpd", env=scan_env)
    assert refused.returncode == 2
    # a text report's error goes to stderr, one line (only --format json keeps {"error": ...} on stdout)
    assert refused.stdout == "" and "--server takes one of nginx, apache" in refused.stderr
