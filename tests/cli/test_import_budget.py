"""The scan command's start-up stays light (issue 14): it imports no part of the web service, the store or the
payments, and no library the scan does not use. Timing is the bench's job (bench/cli_bench.py); this test
looks only at which modules a fresh process has loaded when it exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.sites import RunningSite

#: Top-level packages a `scan` must never load: the UI, the store, the API framework, the PDFs, the payment
#: providers, the server, and `requests` (tldextract's updater pulled it in; the scanner speaks httpx).
HEAVY = (
    "reflex",
    "sqlmodel",
    "sqlalchemy",
    "alembic",
    "fastapi",
    "starlette",
    "reportlab",
    "requests",
    "stripe",
    "razorpay",
    "granian",
    "bs4",
    "tldextract",
)
#: Loaded only on the paths that need them, never for `--help`.
LAZY_FOR_HELP = ("websec_app.scanner", "httpx", "dns", "lxml", "cryptography", "OpenSSL", "tlslite", "asyncio")
#: Not loaded by a real scan either: python-dotenv is imported only when there is a `.env` to read (settings.py);
#: tlslite-ng is a test dependency only (the legacy probes' hellos: fetch/_hello_codec.py); anyio's event-loop
#: backend is replaced by asyncio's primitives in httpcore (fetch/_httpcore_asyncio.py); PKCS#7 (and the email
#: package's policies with it) only reads a downloaded issuer bundle; dnspython's resolver answers only uncommon
#: replies (fetch/resolve.py: the common ones go through fetch/_dns_udp.py); importlib.metadata (with zipfile) is
#: what dnspython reads its optional features from, answered from the parse cache (scanner/dnspython_features.py),
#: and certifi's bundle is found without importlib's resource readers (fetch/_tls_client.py); decimal only parses
#: a structured header's decimal (records/structured_fields.py).
#: (tomllib is not on this list: the data files come from the parse cache, scanner/parsed_cache.py, but the first
#: process after a change, or one that may not write byte-code, parses them.)
NOT_FOR_A_SCAN = (
    "dotenv",
    "tlslite",
    "anyio._backends",
    "cryptography.hazmat.primitives.serialization.pkcs7",
    "dns.resolver",
    "dns.asyncresolver",
    "importlib.metadata",
    "zipfile",
    "decimal",
)
#: What only grading needs: the page parser (lxml, the page's records), the checks, grading with its rule table
#: and fixes, DNSSEC validation. `scan` imports the scanner package, and with it the whole fetch layer, before
#: its fetch starts, and waits for every module of it; these the warm-up thread imports during the fetch's
#: network waits (scanner/warmup.py), or grading does. So what the fetch itself needs of them lives in modules
#: of its own that import none of them (records/html_sniff.py and records/urls.py, which records/html.py
#: re-exports), and records/security_txt.py is imported when the first security.txt answer is in.
NOT_BEFORE_THE_FETCH = (
    "lxml",
    "websec_app.scanner.records.html",
    "websec_app.scanner.records.html_encoding",
    "websec_app.scanner.records.html_tokens",
    "websec_app.scanner.records.inert_content",
    "websec_app.scanner.records.security_txt",
    "websec_app.scanner.checks",
    "websec_app.scanner.grading",
    "websec_app.scanner.rules",
    "websec_app.scanner.fixes",
    "dns.dnssec",
)
#: How many modules a process may hold when it exits (Python's own start-up is ~40): a bound, not a target,
#: so that a new dependency pulling in a hundred modules is noticed here. Today: ~120 for `--help`, ~540 for
#: a real scan (asyncio, httpx, dnspython, pyOpenSSL, cryptography, lxml and the scanner).
MAX_MODULES_FOR_HELP = 160
MAX_MODULES_FOR_A_SCAN = 620

_WRAPPER = """
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps(sorted(k for k, v in sys.modules.items() if v is not None)), file=sys.stderr))
sys.argv = ["websec_app", *sys.argv[1:]]
runpy.run_module("websec_app", run_name="__main__", alter_sys=True)
"""


def _modules_after(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args],
        env={key: value for key, value in env.items() if key != "PYTHONPATH"},
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, set(json.loads(done.stderr.strip().splitlines()[-1]))


def _loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(p for p in packages if any(m == p or m.startswith(p + ".") for m in modules))


def test_scan_help_loads_neither_the_scanner_nor_the_service() -> None:
    # When `python -m websec_app scan --help` runs in a fresh process
    done, modules = _modules_after(["scan", "--help"], dict(os.environ))

    # Then it prints its help, having loaded no heavy package and not even the scanner
    assert done.returncode == 0
    assert "usage:" in done.stdout
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, LAZY_FOR_HELP) == []
    assert len(modules) < MAX_MODULES_FOR_HELP, sorted(modules)


def test_the_fetch_starts_without_what_only_grading_needs() -> None:
    # When a fresh process imports the scanner package, as `scan` does before its fetch starts
    imports = "import json, sys\nimport websec_app.scanner\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", imports],
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = set(json.loads(done.stdout))

    # Then the fetch layer is loaded, and nothing only grading needs
    assert {"websec_app.scanner.fetch", "websec_app.scanner.records.location", "httpx"} <= modules
    assert _loaded(modules, NOT_BEFORE_THE_FETCH) == []


def test_a_real_scan_loads_only_what_the_scan_uses(
    best_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    # Given byte-code (and so the parse cache) written, as an installed package has it
    env = {k: v for k, v in {**os.environ, **scan_env}.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    _modules_after(["scan", best_site.url], env)

    # When a fixture site is scanned from the command line in a fresh process
    done, modules = _modules_after(["scan", best_site.url], env)

    # Then the report is printed
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["grade"] == "A+"
    # and none of the service's packages was loaded, nor httpx's own command line (click, rich)
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, ("rich", "click", "pygments", "httpx._main")) == []
    assert "websec_app.scanner" in modules
    # and nothing the scan can do without
    dotenv_file = any((d / ".env").exists() for d in Path(__file__).resolve().parents)
    assert _loaded(modules, NOT_FOR_A_SCAN) == (["dotenv"] if dotenv_file and "dotenv" in modules else [])
    assert len(modules) < MAX_MODULES_FOR_A_SCAN, len(modules)
