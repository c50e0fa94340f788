"""serve-api benchmark (issue 14): free-scan reports per second through `python -m websec_app serve-api`.

    python -m bench.serve_bench [--total 300] [--concurrency 50] [--against-commit e1f537f] [--rounds 2]
                                [--workers N] [--against-workers N] [--site both|best|worst]
    python bench/serve_bench.py             (the same, from the checkout)

The fixture sites (an A+ and an F site) and their DNS server run in a child process (bench/scan_bench.py's
`fixture_world_apart`), each websec version as its own `serve-api` on 127.0.0.1 with a fresh SQLite
database, private targets allowed and a free quota too big to refuse. A burst of `--total` free scans
(`POST /api/scan`, no `full`), `--concurrency` in flight over keep-alive connections, alternating the two
sites, is sent to each server in turn (A B B A ... over `--rounds`). Per version it prints the reports
per second (200s only), their p50/p95, the statuses, and the server's CPU per report: user + system time
of the serve-api process and all its descendants (granian's workers, the job engine's) from /proc, over
the burst. It also prints what the rest of the machine spent per report, the fixture sites' process and
this client (the load generator), and the most reports per second the cores allow at that total. With
`--against-commit REV` that version runs from a `git worktree` under .bench/ (scan_bench.worktree_at) with
this checkout's virtualenv, and the ratio of the medians is printed, with what issue 14's 2.5x of that
version's reports per second would leave of a report's CPU for the server.

`--server-only` starts the servers and the sites, prints their pids and waits for Enter: for profiling
(`py-spy record --pid PID --subprocesses`) under a burst sent with `--send-only --port P`. Only loopback
traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/serve_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(ROOT))

from bench.scan_bench import SITES, fixture_world_apart, percentile, worktree_at  # noqa: E402

BIG_QUOTA = 10_000_000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


@dataclass
class Burst:
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the server's
    sites_cpu_seconds: float = 0.0
    client_cpu_seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # seconds, 200s only
    statuses: Counter[int] = field(default_factory=Counter)
    transport_errors: int = 0
    bytes_received: int = 0

    @property
    def reports(self) -> int:
        return self.statuses[200]

    def figures(self) -> dict[str, float]:
        reports = max(1, self.reports)
        machine = self.cpu_seconds + self.sites_cpu_seconds + self.client_cpu_seconds
        return {
            "reports_per_s": self.reports / self.seconds,
            "cpu_ms_per_report": self.cpu_seconds * 1000 / reports,
            "sites_cpu_ms_per_report": self.sites_cpu_seconds * 1000 / reports,
            "client_cpu_ms_per_report": self.client_cpu_seconds * 1000 / reports,
            "machine_cpu_ms_per_report": machine * 1000 / reports,
            "ceiling_reports_per_s": CORES * reports / machine if machine else float("nan"),
            "p50_ms": percentile(self.latencies, 0.5) * 1000 if self.latencies else float("nan"),
            "p95_ms": percentile(self.latencies, 0.95) * 1000 if self.latencies else float("nan"),
            "kb_per_report": self.bytes_received / reports / 1024,
        }


def _children() -> dict[int, list[int]]:
    """Every live process's children, from one reading of /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def _process_tree(root_pid: int, children: dict[int, list[int]]) -> list[int]:
    """`root_pid` and every live descendant."""
    found, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def trees_cpu_seconds(*root_pids: int) -> tuple[float, ...]:
    """User + system CPU of each root's live process tree, plus what its reaped children used (cutime,
    cstime); /proc is walked once for all of them."""
    children = _children()
    totals = []
    for root_pid in root_pids:
        ticks = 0
        for pid in _process_tree(root_pid, children):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        totals.append(ticks / CLOCK_TICKS)
    return tuple(totals)


@contextlib.contextmanager
def serve_api(root: Path, world: dict[str, Any], workers: int | None) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`python -m websec_app serve-api` from `root` (this checkout or a worktree), on a free loopback port."""
    from tests.fixtures.ports import free_port

    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
        dns_ip, dns_port = world["dns"]
        env.update(
            {
                "PYTHONPATH": str(root),
                "WEBSEC_DATA_DIR": tmp,
                "WEBSEC_DATABASE_URL": f"sqlite:///{tmp}/websec.db",
                "WEBSEC_ALLOW_PRIVATE_TARGETS": "1",
                "WEBSEC_DNS_SERVERS": f"{dns_ip}:{dns_port}",
                "WEBSEC_NAMESERVER_PORT": str(dns_port),
                "WEBSEC_CA_BUNDLE": world["ca_bundle"],
                "WEBSEC_FREE_SCANS_PER_DAY": str(BIG_QUOTA),
                "WEBSEC_PRO_SCANS_PER_MONTH": str(BIG_QUOTA),
            }
        )
        port = free_port()
        command = [sys.executable, "-m", "websec_app", "serve-api", "--port", str(port), "--no-access-log"]
        command += ["--log-level", "warning"] + (["--workers", str(workers)] if workers else [])
        process = subprocess.Popen(command, cwd=root, env=env)
        try:
            _wait_until_up(port, process)
            yield port, process
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_until_up(port: int, process: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve-api exited with {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("serve-api did not start within 60 s")


async def _burst(port: int, urls: list[str], total: int, in_flight: int) -> Burst:
    import httpx

    burst = Burst()
    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    semaphore = asyncio.Semaphore(in_flight)

    async def one(client: httpx.AsyncClient, n: int) -> None:
        async with semaphore:
            started = time.perf_counter()
            try:
                response = await client.post("/api/scan", json={"url": urls[n % len(urls)]})
            except httpx.HTTPError:
                burst.transport_errors += 1
                return
            burst.statuses[response.status_code] += 1
            if response.status_code == 200:
                burst.latencies.append(time.perf_counter() - started)
                burst.bytes_received += len(response.content)

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=300, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(one(client, n) for n in range(total)))
        burst.seconds = time.perf_counter() - started
    return burst


def measure(pid: int, sites_pid: int, port: int, urls: list[str], total: int, in_flight: int) -> Burst:
    """One burst, with the CPU that the server's and the sites' process trees and this process spent on it."""
    before, client_before = trees_cpu_seconds(pid, sites_pid), time.process_time()
    burst = asyncio.run(_burst(port, urls, total, in_flight))
    burst.client_cpu_seconds = time.process_time() - client_before  # before /proc is read again, in this process
    after = trees_cpu_seconds(pid, sites_pid)
    burst.cpu_seconds, burst.sites_cpu_seconds = (b - a for a, b in zip(before, after, strict=True))
    return burst


def _print(label: str, bursts: list[Burst]) -> dict[str, float]:
    figures = {key: statistics.median(b.figures()[key] for b in bursts) for key in bursts[0].figures()}
    statuses: Counter[int] = Counter()
    for burst in bursts:
        statuses.update(burst.statuses)
    errors = sum(b.transport_errors for b in bursts)
    print(f"  {label}: median of {len(bursts)} bursts")
    print(
        f"    {figures['reports_per_s']:6.1f} reports/s   server CPU {figures['cpu_ms_per_report']:5.1f} ms/report"
        f"   p50 {figures['p50_ms']:6.0f} ms   p95 {figures['p95_ms']:6.0f} ms"
        f"   {figures['kb_per_report']:.1f} KiB/report"
    )
    print(
        f"    machine CPU {figures['machine_cpu_ms_per_report']:5.1f} ms/report (server"
        f" {figures['cpu_ms_per_report']:.1f} + sites {figures['sites_cpu_ms_per_report']:.1f}"
        f" + this client {figures['client_cpu_ms_per_report']:.1f}): at most"
        f" {figures['ceiling_reports_per_s']:.0f} reports/s on {CORES} cores"
    )
    each = ", ".join(f"{b.figures()['reports_per_s']:.1f}/s {b.figures()['cpu_ms_per_report']:.1f} ms" for b in bursts)
    print(f"    bursts: {each}; statuses {dict(sorted(statuses.items()))}; transport errors {errors}")
    return figures


#: Issue 14's serve-api goal: this many times the reports per second of the commit it measured.
TARGET_RATIO = 2.5


def _print_target(ours_label: str, ours: dict[str, float], other: str, theirs: dict[str, float], ratio: float) -> None:
    """What `ratio` times `other`'s reports per second would cost: the machine CPU a report it leaves, and
    how much of it the server could have, with the sites and this client at what they cost `ours`."""
    wanted = ratio * theirs["reports_per_s"]
    budget = CORES * 1000 / wanted
    left = budget - ours["sites_cpu_ms_per_report"] - ours["client_cpu_ms_per_report"]
    print(
        f"  {ratio:g}x {other}'s reports/s is {wanted:.0f}/s: at most {budget:.1f} ms of machine CPU a report, so"
        f" at most {left:.1f} ms of server CPU with the sites and this client as for {ours_label}"
        f" (now {ours['cpu_ms_per_report']:.1f} ms)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=300, help="free scans per burst")
    parser.add_argument("--concurrency", type=int, default=50, help="scans in flight")
    parser.add_argument("--warmup", type=int, default=20, help="scans sent to each server before measuring")
    parser.add_argument("--against-commit", metavar="REV", help="also measure serve-api at this commit")
    parser.add_argument("--rounds", type=int, default=2, help="bursts per version, alternated A B B A")
    parser.add_argument("--workers", type=int, help="serve-api --workers (default: the command's own)")
    parser.add_argument("--against-workers", type=int, metavar="N", help="also measure this checkout with N workers")
    parser.add_argument("--site", choices=("both", "best", "worst"), default="both")
    parser.add_argument("--server-only", action="store_true", help="start the servers, print pids, wait for Enter")
    parser.add_argument("--send-only", type=int, metavar="PORT", help="only send one burst to this port")
    parser.add_argument("--url", action="append", help="with --send-only: the sites' URLs")
    args = parser.parse_args()
    if args.send_only and not args.url:
        parser.error("--send-only needs the sites' URLs: --url URL, once per site (--server-only prints them)")
    # SIGTERM unwinds like Ctrl-C, so the servers started here are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if args.send_only:
        burst = asyncio.run(_burst(args.send_only, args.url, args.total, args.concurrency))
        print(burst.figures(), dict(burst.statuses))
        return 0

    versions: dict[str, tuple[Path, int | None]] = {"this checkout": (ROOT, args.workers)}
    if args.against_commit:
        commit, path = worktree_at(args.against_commit)
        versions[f"{args.against_commit} ({commit})"] = (path, args.workers)
    if args.against_workers:
        versions[f"this checkout, --workers {args.against_workers}"] = (ROOT, args.against_workers)
    with fixture_world_apart() as (world, _counters), contextlib.ExitStack() as stack:
        chosen = {"both": list(SITES), "best": [SITES[0]], "worst": [SITES[1]]}[args.site]
        urls = [world["sites"][name] for name in chosen]
        servers = {label: stack.enter_context(serve_api(root, world, n)) for label, (root, n) in versions.items()}
        for label, (port, process) in servers.items():
            warm = asyncio.run(_burst(port, urls, args.warmup, min(args.warmup, args.concurrency)))
            if warm.reports == 0:
                raise SystemExit(f"{label}: warm-up gave no report: {dict(warm.statuses)}")
            print(f"  {label}: serve-api pid {process.pid}, port {port}", flush=True)
        if args.server_only:
            print(f"  sites: {' '.join(urls)}", flush=True)
            input("  Enter stops the servers\n")
            return 0
        print(
            f"serve-api benchmark: {args.total} free scans per burst, {args.concurrency} in flight, "
            f"sites {', '.join(chosen)}; {os.cpu_count()} cores shared by the servers, the sites and this client"
        )
        bursts: dict[str, list[Burst]] = {label: [] for label in versions}
        order = list(versions)
        for _ in range(args.rounds):
            for label in order:
                port, process = servers[label]
                bursts[label].append(measure(process.pid, world["pid"], port, urls, args.total, args.concurrency))
            order.reverse()  # A B B A: neither version always runs on a warmer machine
    results = {label: _print(label, b) for label, b in bursts.items()}
    labels = list(results)
    for other in labels[1:]:
        ours, theirs = results[labels[0]], results[other]
        print(
            f"  ratio {labels[0]} / {other}: reports/s "
            f"{ours['reports_per_s'] / theirs['reports_per_s']:.2f}x, server CPU per report "
            f"{ours['cpu_ms_per_report'] / theirs['cpu_ms_per_report']:.2f}x"
        )
        _print_target(labels[0], ours, other, theirs, TARGET_RATIO)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
