"""Scan benchmark: real scans of loopback fixture sites (the same servers the tests use).

    python -m bench.scan_bench [--scans 40] [--concurrency 50]

Prints the median and p95 wall time of one scan run alone, then scans per second with
`--concurrency` scans in flight, and how much the fetch parts overlapped. Only loopback
traffic: the sites and the DNS server are started here, on 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.pki import Pki
from tests.fixtures.sites import SiteFactory, SiteServer
from websec_app.scanner import scan
from websec_app.settings import DnsServer, Settings


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def sequential(url: str, settings: Settings, count: int) -> tuple[list[float], list[float]]:
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


async def concurrent(url: str, settings: Settings, total: int, in_flight: int) -> tuple[float, int]:
    semaphore = asyncio.Semaphore(in_flight)
    errors = 0

    async def one() -> None:
        nonlocal errors
        async with semaphore:
            try:
                await scan(url, settings)
            except Exception:  # noqa: BLE001 - counted and printed, never hidden
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    return total / (time.perf_counter() - started), errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scans", type=int, default=40, help="sequential scans per site")
    parser.add_argument("--concurrency", type=int, default=50, help="scans in flight for the throughput run")
    parser.add_argument("--total", type=int, default=200, help="scans in the throughput run")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, AuthDnsServer() as dns, SiteServer(Pki(Path(tmp))) as server:
        factory = SiteFactory(server, dns)
        sites = {
            "best (A+)": factory(catalog.best_practices("bench-best.test")),
            "worst (F)": factory(catalog.no_practices("bench-worst.test")),
        }
        settings = Settings(
            allow_private_targets=True,
            dns_servers=(DnsServer(dns.ip, dns.port),),
            ca_bundle=Path(server.pki.ca_bundle_path),
        )
        print(
            f"scan benchmark: {args.scans} sequential scans per site, "
            f"then {args.total} with {args.concurrency} in flight"
        )
        for name, site in sites.items():
            asyncio.run(scan(site.url, settings))  # warm-up: imports, rule table, TLS contexts
            durations, overlaps = asyncio.run(sequential(site.url, settings, args.scans))
            print(
                f"  {name:10} median {statistics.median(durations):6.1f} ms   p95 {percentile(durations, 0.95):6.1f} ms"
                f"   parts overlapping the page load: median {statistics.median(overlaps):5.1f} ms"
            )
        rate, errors = asyncio.run(concurrent(sites["best (A+)"].url, settings, args.total, args.concurrency))
        print(f"  throughput {rate:6.1f} scans/s with {args.concurrency} in flight ({errors} errors)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
