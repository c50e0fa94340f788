"""CLI benchmark (issue 14): the whole `python -m websec_app scan URL` process against Mozilla httpobs 0.9.3.

    python -m bench.cli_bench [--pairs 9] [--against-commit REV] [--no-bytecode-cache]
    python bench/cli_bench.py              (the same, from the checkout)

Starts the loopback fixture world (the DNS server, a good and a bad site: catalog.best_practices and
catalog.no_practices), then times whole processes, start-up included, paired and alternated
(A B A B ...), and prints the median of each and the median of the per-pair ratios:

- websec: `python -m websec_app scan URL` with the test settings (`scan_env`: the fixture DNS server,
  the test root, private targets allowed);
- httpobs: Mozilla's `httpobs-local-scan HOST` (httpobs 0.9.3, 2022, the scanner behind the old Mozilla
  Observatory), which needs no database or broker. It runs in its own virtualenv, `.bench/httpobs-venv`,
  created here on first use with the versions its package pins for what the local scan imports
  (requests 2.27.1, beautifulsoup4 4.6.3, publicsuffixlist 0.7.12), on the same Python 3.11 as websec.
  The rest of its pins (psycopg2 < 2.8, uWSGI, Flask, redis) are for its API and workers and do not
  build on Python 3.11, so the package is installed with `--no-deps`; its pinned celery 4.2.1 (imported
  by the retriever for two exception classes) does not import on Python >= 3.10, so celery 5.3.6 it is.
  It resolves names with the system resolver, so the wrapper maps the fixture names to the sites' loopback addresses in
  `socket.getaddrinfo` (websec asks the fixture DNS server instead); `REQUESTS_CA_BUNDLE` makes it
  trust the test root.
- with `--against-commit REV`, a third contestant: websec at REV, from a `git worktree` in `.bench/`,
  with the same virtualenv (the previous version in the same run, as the house rules ask).

Both sides get byte-compiled modules (a `PYTHONPYCACHEPREFIX` under `.bench/`), as an installed
package has; `--no-bytecode-cache` keeps the caller's PYTHONDONTWRITEBYTECODE and measures websec
compiling its own sources in every process, as this development container does by default.

It also prints the import profile of the scan command (`-X importtime`): the cumulative time of
everything imported after the interpreter's own start-up, for `scan --help` and for a real scan.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/cli_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(ROOT))

from tests.clock import TEST_NOW  # noqa: E402
from tests.fixtures import catalog  # noqa: E402
from tests.fixtures.dns_server import AuthDnsServer  # noqa: E402
from tests.fixtures.pki import Pki  # noqa: E402
from tests.fixtures.sites import RunningSite, SiteFactory, SiteServer  # noqa: E402

BENCH_DIR = ROOT / ".bench"
HTTPOBS_VENV = BENCH_DIR / "httpobs-venv"
#: httpobs 0.9.3 and the versions it pins for what `httpobs.scanner.local` imports (see the docstring).
HTTPOBS_PINS = (
    "httpobs==0.9.3",
    "requests==2.27.1",
    "urllib3==1.26.8",
    "idna==3.3",
    "charset-normalizer==2.0.12",
    "certifi==2021.10.8",
    "beautifulsoup4==4.6.3",
    "publicsuffixlist==0.7.12",
    "pytz==2018.7",
)
#: httpobs pins celery 4.2.1, which does not import on Python 3.10+ (`inspect.formatargspec`,
#: `collections.Callable`); the retriever imports it for two exception classes only. 5.3 is the first
#: celery for Python 3.11; pip resolves its dependencies.
HTTPOBS_CELERY = "celery==5.3.6"
#: Runs httpobs' own command-line script with the fixture names mapped to the sites' addresses.
_HTTPOBS_WRAPPER = """
import json, runpy, socket, sys
names = json.loads(sys.argv[1])
_getaddrinfo = socket.getaddrinfo
socket.getaddrinfo = lambda host, *a, **k: _getaddrinfo(names.get(host, host), *a, **k)
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


def httpobs_python() -> Path:
    """The httpobs virtualenv's interpreter, created and filled on first use (pip from PyPI)."""
    python = HTTPOBS_VENV / "bin" / "python"
    stamp = HTTPOBS_VENV / ".installed"
    wanted = "\n".join((*HTTPOBS_PINS, HTTPOBS_CELERY))
    if stamp.exists() and stamp.read_text() == wanted:
        return python
    print("  creating .bench/httpobs-venv (httpobs 0.9.3 and its pinned scanner dependencies)...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(HTTPOBS_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run([*pip, *HTTPOBS_PINS], check=True)
    subprocess.run([*pip[:-1], HTTPOBS_CELERY], check=True)
    stamp.write_text(wanted)
    return python


def worktree_at(rev: str) -> Path:
    """A `git worktree` of websec at `rev` under .bench/ (made once per commit)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    path = BENCH_DIR / f"websec-{commit}"
    if not path.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), commit], cwd=ROOT, check=True)
    return path


class Contestant:
    """One command line timed as a whole process; `check` says whether its output is a finished scan."""

    def __init__(self, name: str, argv: Sequence[str], env: dict[str, str], cwd: Path, kind: str) -> None:
        self.name, self.argv, self.env, self.cwd, self.kind = name, list(argv), env, cwd, kind

    def run(self) -> float:
        started = time.perf_counter()
        done = subprocess.run(self.argv, env=self.env, cwd=self.cwd, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - started
        self._check(done)
        return elapsed

    def _check(self, done: subprocess.CompletedProcess[str]) -> None:
        try:
            body = json.loads(done.stdout)
        except json.JSONDecodeError:
            body = None
        ok = done.returncode == 0 and isinstance(body, dict) and "error" not in body
        if ok and self.kind == "websec":
            ok = "grade" in body
        if not ok:
            raise RuntimeError(f"{self.name} failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-1500:]}")

    def grade(self) -> str:
        done = subprocess.run(self.argv, env=self.env, cwd=self.cwd, capture_output=True, text=True, timeout=120)
        self._check(done)
        body = json.loads(done.stdout)
        return str(body["grade"] if self.kind == "websec" else body["scan"]["grade"])


def _base_env(bytecode_cache: bool) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("WEBSEC_", "PYTHONPATH"))}
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BENCH_DIR / "pycache")
    return env


def websec_env(base: dict[str, str], dns: AuthDnsServer, pki: Pki) -> dict[str, str]:
    """`tests/conftest.py:scan_env`: resolve through the fixture DNS server, trust the test root."""
    return {
        **base,
        "WEBSEC_ALLOW_PRIVATE_TARGETS": "1",
        "WEBSEC_DNS_SERVERS": f"{dns.ip}:{dns.port}",
        "WEBSEC_NAMESERVER_PORT": str(dns.port),
        "WEBSEC_CA_BUNDLE": str(pki.ca_bundle_path),
        "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
    }


#: `python -m websec_app scan URL` with the scanner's warm-up imports (scanner/warmup.py) done first, in the main
#: thread: in the real process they run in a thread beside the fetch, and -X importtime would count the time that
#: thread waits for the interpreter as import time. Here each module is imported once, in one thread, with the
#: collector paused and dataclasses' and regular expressions' code cached as the command has them
#: (websec_app/startup_gc.py, startup_code.py, startup_regex.py): the same modules, counted once.
_ONE_THREAD_IMPORTS = """
import runpy, sys
sys.modules.setdefault("httpx._main", None)  # as `scan` does before httpx loads (cli/scan_cmd.py)
from websec_app import startup_regex
startup_regex.install()  # as websec_app/__main__.py does first
from websec_app import startup_code, startup_gc
startup_gc.pause()
startup_code.install()
from websec_app.scanner import warmup
warmup._import_all()
startup_gc.pause()
sys.argv = ["websec_app", *sys.argv[1:]]
runpy.run_module("websec_app", run_name="__main__", alter_sys=True)
"""


def import_profile(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, list[tuple[float, str]]]:
    """Seconds of imports after the interpreter's start-up (`-X importtime`, top-level cumulative times from
    the first `websec_app` import on), and the biggest top-level imports."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )
    top: list[tuple[float, str]] = []
    started = False
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        started = started or name.strip() == "websec_app"
        if started and not name.startswith("  "):  # a top-level import (no indent after the bar's space)
            top.append((int(cumulative) / 1e6, name.strip()))
    return sum(seconds for seconds, _ in top), sorted(top, reverse=True)


def paired(a: Contestant, b: Contestant, pairs: int) -> tuple[list[float], list[float]]:
    a.run(), b.run()  # warm-up: page cache, byte-compiled modules
    times_a, times_b = [], []
    for _ in range(pairs):
        times_a.append(a.run())
        times_b.append(b.run())
    return times_a, times_b


def _line(name: str, times: list[float]) -> str:
    low, high = min(times) * 1000, max(times) * 1000
    return f"{name:>16} median {statistics.median(times) * 1000:6.0f} ms  (min {low:4.0f}, max {high:4.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=9, help="timed pairs per site and opponent")
    parser.add_argument("--against-commit", metavar="REV", help="also time websec at this commit (git worktree)")
    parser.add_argument("--no-httpobs", action="store_true", help="skip httpobs (no PyPI at hand)")
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="let websec compile its sources in every process"
    )
    args = parser.parse_args()
    BENCH_DIR.mkdir(exist_ok=True)
    base = _base_env(bytecode_cache=not args.no_bytecode_cache)
    observatory = None if args.no_httpobs else httpobs_python()
    previous = worktree_at(args.against_commit) if args.against_commit else None

    with tempfile.TemporaryDirectory() as tmp, AuthDnsServer() as dns, SiteServer(Pki(Path(tmp))) as server:
        factory = SiteFactory(server, dns)
        sites: dict[str, RunningSite] = {
            "good (A+)": factory(catalog.best_practices("cli-good.test")),
            "bad (F)": factory(catalog.no_practices("cli-bad.test")),
        }
        env = websec_env(base, dns, server.pki)
        print(f"CLI benchmark: whole processes, {args.pairs} pairs per site, loopback fixture sites")

        help_argv = [sys.executable, "-m", "websec_app", "scan", "--help"]
        subprocess.run(help_argv, env=env, cwd=ROOT, capture_output=True, check=True)  # byte-compile once
        scan_argv = [sys.executable, "-c", _ONE_THREAD_IMPORTS, "scan", sites["good (A+)"].url]
        subprocess.run(scan_argv, env=env, cwd=ROOT, capture_output=True, check=True)  # and the parse cache
        for label, argv in (("scan --help", help_argv), ("scan URL", scan_argv)):
            total, top = import_profile(argv, env, ROOT)
            biggest = ", ".join(f"{name} {seconds * 1000:.0f}" for seconds, name in top[:6])
            print(f"  imports of `{label}`: {total * 1000:.0f} ms (-X importtime; biggest, ms: {biggest})")

        names = {name: site.ip for site in sites.values() for name in site.names}
        observatory_env = {**base, "REQUESTS_CA_BUNDLE": str(server.pki.ca_bundle_path)}
        for label, site in sites.items():
            websec = Contestant("websec", [sys.executable, "-m", "websec_app", "scan", site.url], env, ROOT, "websec")
            opponents = []
            if observatory is not None:
                script = str(observatory.parent / "httpobs-local-scan")
                wrapper = [str(observatory), "-c", _HTTPOBS_WRAPPER, json.dumps(names), script, site.host]
                opponents.append(Contestant("httpobs 0.9.3", wrapper, observatory_env, ROOT, "httpobs"))
            if previous is not None:
                argv = [sys.executable, "-m", "websec_app", "scan", site.url]
                opponents.append(Contestant(f"websec {args.against_commit}", argv, env, previous, "websec"))
            grades = ", ".join(f"{c.name} {c.grade()}" for c in (websec, *opponents))
            print(f"\n  {label} site {site.url} (grades: {grades})")
            for opponent in opponents:
                mine, theirs = paired(websec, opponent, args.pairs)
                ratios = [m / t for m, t in zip(mine, theirs, strict=True)]
                print(_line("websec", mine))
                print(_line(opponent.name, theirs))
                print(f"{'':>16} websec / {opponent.name}: median of pair ratios {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
