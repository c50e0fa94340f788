"""Scan benchmark (issue 14): real in-process scans of loopback fixture sites (the servers the tests use).

    python -m bench.scan_bench [--scans 30] [--concurrency 50] [--total 200] [--against-commit REV]
                               [--servers-apart] [--keep-alive] [--loop asyncio|uvloop]
    python bench/scan_bench.py             (the same, from the checkout)

For a good (A+) and a bad (F) site it prints the median and p95 wall time of one scan run alone, how
long the fetch parts overlapped the page load, and what one scan costs on the wire, counted by the
fixture servers themselves (tests/fixtures/sites.py): TCP connections accepted (HTTPS and HTTP ports),
TLS handshakes started (every connection to the HTTPS port: full, resumed, or a ClientHello the server
refuses), completed, and resumed. Then scans per second with `--concurrency` scans in flight on the
good site, with the p50/p95 of those scans.

`--against-commit REV` measures websec at REV too, from a `git worktree` under .bench/ (made once per
commit), in the same run: each version runs in its own process (the current checkout's fixtures and
this bench, that version's `websec_app`), alternated `--rounds` times (A B B A ...), and the median of
each figure over the rounds is printed. Only loopback traffic: the sites and the DNS server are
started here, on 127.0.0.0/8. By default the fixture servers run in threads of the same process, so
their side of every handshake and DNS answer competes for the same GIL as the scanner (a third of the
CPU of a scan); `--servers-apart` runs them in a child process, as real sites are, and the CPU per
scan printed is then the scanner's alone. `--loop uvloop` runs the scans on uvloop, the loop the
product's own in-process scans run on (serve-api on granian, the Reflex app); the default is
asyncio's, as `python -m websec_app scan` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / ".bench"

SITES = ("best (A+)", "worst (F)")
COUNTERS = ("tcp_https", "tcp_http", "tls_started", "tls_completed", "tls_resumed")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _counters(site: Any) -> dict[str, int]:
    return {
        "tcp_https": site.accepted["https"],
        "tcp_http": site.accepted["http"],
        "tls_started": site.accepted["https"],
        "tls_completed": site.tls_completed,
        "tls_resumed": site.tls_resumed,
    }


@contextlib.contextmanager
def fixture_world(keep_alive: bool = False) -> Iterator[tuple[dict[str, Any], Callable[[str], dict[str, int]]]]:
    """The DNS server and the two sites, in this process: ({"sites": {name: url}, "dns": (ip, port),
    "ca_bundle": path}, counters(site name)). `keep_alive`: the sites keep connections open."""
    from tests.fixtures import catalog
    from tests.fixtures.dns_server import AuthDnsServer
    from tests.fixtures.pki import Pki
    from tests.fixtures.sites import SiteFactory, SiteServer

    with tempfile.TemporaryDirectory() as tmp, AuthDnsServer() as dns, SiteServer(Pki(Path(tmp))) as server:
        factory = SiteFactory(server, dns)
        sites = {
            SITES[0]: factory(replace(catalog.best_practices("bench-best.test"), keep_alive=keep_alive)),
            SITES[1]: factory(replace(catalog.no_practices("bench-worst.test"), keep_alive=keep_alive)),
        }
        world = {
            "sites": {name: site.url for name, site in sites.items()},
            "dns": (dns.ip, dns.port),
            "ca_bundle": str(server.pki.ca_bundle_path),
        }
        yield world, lambda name: _counters(sites[name])


def serve_fixtures(keep_alive: bool) -> int:
    """`--serve-fixtures`: the fixture world in its own process; prints it as one JSON line, then
    answers each line read from stdin with the sites' counters, until stdin closes."""
    with fixture_world(keep_alive) as (world, counters):
        print(json.dumps(world), flush=True)
        for _ in sys.stdin:
            print(json.dumps({name: counters(name) for name in SITES}), flush=True)
    return 0


@contextlib.contextmanager
def fixture_world_apart(keep_alive: bool = False) -> Iterator[tuple[dict[str, Any], Callable[[str], dict[str, int]]]]:
    """fixture_world() in a child process: the sites' side of every handshake then runs on its own
    interpreter (and GIL), as a real site would, and this process's CPU is the scanner's alone."""
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve-fixtures", *(["--keep-alive"] if keep_alive else [])],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None

    def counters(name: str) -> dict[str, int]:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("counters\n")
        child.stdin.flush()
        found: dict[str, dict[str, int]] = json.loads(child.stdout.readline())
        return found[name]

    try:
        world = json.loads(child.stdout.readline())
        world["pid"] = child.pid  # whose CPU is the sites' (serve_bench accounts for the whole machine)
        yield world, counters
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def _per_scan(after: dict[str, int], before: dict[str, int], scans: int) -> dict[str, float]:
    return {key: (after[key] - before[key]) / scans for key in COUNTERS}


async def sequential(url: str, settings: Any, count: int) -> tuple[list[float], list[float]]:
    from websec_app.scanner import scan

    durations, overlaps = [], []
    for _ in range(count):
        started = time.perf_counter()
        report = await scan(url, settings)
        durations.append((time.perf_counter() - started) * 1000)
        parts = {t["part"]: t for t in report.timings}
        # How long the TLS/DNS/HTTP-upgrade parts ran while the main page was loading.
        main = parts["main"]
        overlap = sum(
            max(0.0, min(main["end_ms"], parts[p]["end_ms"]) - max(main["start_ms"], parts[p]["start_ms"]))
            for p in ("tls", "dns", "http_upgrade")
            if p in parts
        )
        overlaps.append(overlap)
    return durations, overlaps


async def concurrent(url: str, settings: Any, total: int, in_flight: int) -> tuple[float, list[float], int]:
    from websec_app.scanner import scan

    semaphore = asyncio.Semaphore(in_flight)
    errors = 0
    durations: list[float] = []

    async def one() -> None:
        nonlocal errors
        async with semaphore:
            started = time.perf_counter()
            try:
                await scan(url, settings)
            except Exception:  # noqa: BLE001 - counted and printed, never hidden
                errors += 1
            durations.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    return total / (time.perf_counter() - started), durations, errors


def _runner(loop: str) -> Callable[[Any], Any]:
    """asyncio.run, or uvloop's equivalent."""
    if loop == "uvloop":
        import uvloop

        return uvloop.run
    return asyncio.run


def measure(
    scans: int,
    total: int,
    in_flight: int,
    *,
    servers_apart: bool = False,
    keep_alive: bool = False,
    loop: str = "asyncio",
) -> dict[str, Any]:
    """Every figure of one version, in this process (its `websec_app` is whatever sys.path finds)."""
    run = _runner(loop)
    from websec_app.scanner import scan
    from websec_app.settings import DnsServer, Settings

    figures: dict[str, Any] = {}
    with (fixture_world_apart if servers_apart else fixture_world)(keep_alive) as (world, counters):
        settings = Settings(
            allow_private_targets=True,
            dns_servers=(DnsServer(*world["dns"]),),
            ca_bundle=Path(world["ca_bundle"]),
        )
        if "nameserver_port" in {f.name for f in dataclasses.fields(Settings)}:  # an earlier version has none
            settings = dataclasses.replace(settings, nameserver_port=world["dns"][1])
        urls: dict[str, str] = world["sites"]
        for name, url in urls.items():
            report = run(scan(url, settings))  # warm-up: imports, rule table, TLS contexts
            time.sleep(0.2)  # let the servers finish closing the warm-up's connections before counting
            before = counters(name)
            durations, overlaps = run(sequential(url, settings, scans))
            time.sleep(0.2)
            figures[name] = {
                "grade": report.grade,
                "median_ms": statistics.median(durations),
                "p95_ms": percentile(durations, 0.95),
                "overlap_ms": statistics.median(overlaps),
                **_per_scan(counters(name), before, scans),
            }
        before = counters(SITES[0])
        cpu_before = time.process_time()
        rate, durations, errors = run(concurrent(urls[SITES[0]], settings, total, in_flight))
        cpu_ms = (time.process_time() - cpu_before) * 1000 / total
        time.sleep(0.2)
        figures["throughput"] = {
            "scans_per_s": rate,
            "p50_ms": statistics.median(durations),
            "p95_ms": percentile(durations, 0.95),
            "errors": errors,
            "cpu_ms": cpu_ms,
            **_per_scan(counters(SITES[0]), before, total),
        }
    return figures


def _print(label: str, figures: dict[str, Any], in_flight: int) -> None:
    print(f"  {label}")
    for name in SITES:
        f = figures[name]
        print(
            f"    {name:10} median {f['median_ms']:6.1f} ms   p95 {f['p95_ms']:6.1f} ms"
            f"   overlapping the page load {f['overlap_ms']:5.1f} ms   grade {f['grade']}"
        )
        print(
            f"    {'':10} per scan: TCP {f['tcp_https'] + f['tcp_http']:4.1f} (HTTPS {f['tcp_https']:4.1f},"
            f" HTTP {f['tcp_http']:4.1f})   TLS handshakes started {f['tls_started']:4.1f},"
            f" completed {f['tls_completed']:4.1f}, resumed {f['tls_resumed']:4.1f}"
        )
    t = figures["throughput"]
    print(
        f"    throughput {t['scans_per_s']:6.1f} scans/s with {in_flight} in flight"
        f"   p50 {t['p50_ms']:6.1f} ms   p95 {t['p95_ms']:6.1f} ms   ({t['errors']:.0f} errors)"
    )
    print(f"    {'':10} CPU of this process per scan {t['cpu_ms']:5.1f} ms (all its threads)")
    print(
        f"    {'':10} per scan: TCP {t['tcp_https'] + t['tcp_http']:4.1f}   TLS handshakes started"
        f" {t['tls_started']:4.1f}, completed {t['tls_completed']:4.1f}, resumed {t['tls_resumed']:4.1f}"
    )


def worktree_at(rev: str) -> tuple[str, Path]:
    """A `git worktree` of websec at `rev` under .bench/ (made once per commit), and its short hash."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    path = BENCH_DIR / f"websec-{commit}"
    if not path.exists():
        BENCH_DIR.mkdir(exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(path), commit], cwd=ROOT, check=True)
    return commit, path


def _child(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--json", "--scanner-root", str(root)]
    argv += ["--scans", str(args.scans), "--total", str(args.total), "--concurrency", str(args.concurrency)]
    argv += ["--servers-apart"] if args.servers_apart else []
    argv += ["--keep-alive"] if args.keep_alive else []
    argv += ["--loop", args.loop]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench child for {root} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _median_figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in (*SITES, "throughput"):
        merged[part] = {}
        for key, value in runs[0][part].items():
            values = [run[part][key] for run in runs]
            merged[part][key] = statistics.median(values) if isinstance(value, int | float) else value
    return merged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scans", type=int, default=30, help="sequential scans per site")
    parser.add_argument("--concurrency", type=int, default=50, help="scans in flight for the throughput run")
    parser.add_argument("--total", type=int, default=200, help="scans in the throughput run")
    parser.add_argument("--against-commit", metavar="REV", help="also measure websec at this commit (git worktree)")
    parser.add_argument("--rounds", type=int, default=2, help="alternated runs per version with --against-commit")
    parser.add_argument(
        "--servers-apart",
        action="store_true",
        help="run the fixture sites and DNS server in a child process (the scanner's CPU alone)",
    )
    parser.add_argument(
        "--keep-alive", action="store_true", help="the fixture sites keep connections open (Site.keep_alive)"
    )
    parser.add_argument(
        "--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the event loop the scans run on"
    )
    parser.add_argument("--serve-fixtures", action="store_true", help=argparse.SUPPRESS)  # that child
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child mode: one JSON line
    parser.add_argument("--scanner-root", type=Path, help=argparse.SUPPRESS)  # child mode: websec_app from here
    args = parser.parse_args()

    # The fixtures always come from this checkout, `websec_app` from --scanner-root when given.
    if args.scanner_root is not None:
        sys.path.insert(0, str(args.scanner_root))
        import websec_app  # noqa: F401 - bound to that version before the checkout joins sys.path

        sys.path.remove(str(args.scanner_root))
    if str(ROOT) not in sys.path:  # `python bench/scan_bench.py` puts bench/ first, not the checkout
        sys.path.append(str(ROOT))

    if args.serve_fixtures:
        return serve_fixtures(args.keep_alive)
    if args.json:
        print(
            json.dumps(
                measure(
                    args.scans,
                    args.total,
                    args.concurrency,
                    servers_apart=args.servers_apart,
                    keep_alive=args.keep_alive,
                    loop=args.loop,
                )
            )
        )
        return 0

    where = "in a child process" if args.servers_apart else "in this process"
    print(
        f"scan benchmark: {args.scans} sequential scans per site, then {args.total} with {args.concurrency}"
        f" in flight ({os.cpu_count()} cores; fixture sites and DNS {where}; {args.loop} event loop)"
    )
    if args.against_commit is None:
        figures = measure(
            args.scans,
            args.total,
            args.concurrency,
            servers_apart=args.servers_apart,
            keep_alive=args.keep_alive,
            loop=args.loop,
        )
        _print("websec (this checkout)", figures, args.concurrency)
        return 0
    commit, previous = worktree_at(args.against_commit)
    versions = {"websec (this checkout)": ROOT, f"websec {args.against_commit} ({commit})": previous}
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in versions}
    order = list(versions)
    for _ in range(args.rounds):
        for label in order:
            runs[label].append(_child(versions[label], args))
        order.reverse()  # A B B A: neither version always runs on a warmer machine
    for label, results in runs.items():
        _print(f"{label}: median of {len(results)} runs", _median_figures(results), args.concurrency)
    ours, theirs = (_median_figures(r)["throughput"]["scans_per_s"] for r in runs.values())
    print(f"  throughput ratio this checkout / {args.against_commit}: {ours / theirs:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
