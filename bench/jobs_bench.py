"""Scan jobs under load (issue 16): a burst of concurrent free scans against 2 `serve-api` processes that only
queue (WEBSEC_SCAN_WORKERS=0) and `python -m websec_app worker` processes, on one PostgreSQL database.

    python -m bench.jobs_bench [--scans 500] [--workers 2] [--concurrency 8] [--kill-worker-after SECONDS]

The fixture sites (an A+ and an F site) and their DNS run in this process, as in bench/load_bench.py; the
PostgreSQL server is the tests' throwaway one (tests/pg_server.py). Every request is sent at once, alternating
between the two web processes. Printed: the share served with a report, p50/p99 latency, responses by status
(503 + Retry-After is shed load, counted apart; any other 5xx is an error), and the quota check: the free
counter against the 200s, and the jobs left unended (a lost unit shows in either). `--kill-worker-after`
SIGKILLs the first worker that many seconds into the burst. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/jobs_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(ROOT))

from bench.load_bench import BIG_QUOTA, Phase, _run  # noqa: E402
from tests.fixtures import catalog  # noqa: E402
from tests.fixtures.dns_server import AuthDnsServer  # noqa: E402
from tests.fixtures.pki import Pki  # noqa: E402
from tests.fixtures.sites import SiteFactory, SiteServer  # noqa: E402
from tests.jobs.cluster import Cluster  # noqa: E402
from tests.pg_server import get_server  # noqa: E402


def _state(database_url: str) -> tuple[int, dict[str, int], int]:
    """The free counter of 127.0.0.1 today, the jobs by status, and the jobs retried (attempts > 1)."""
    from sqlalchemy import func
    from sqlmodel import col, select

    from websec_app.store import Database, free_scans_used
    from websec_app.store.models import ScanJob

    database = Database(database_url)
    with database.session() as session:
        used = free_scans_used(session, "127.0.0.1", datetime.now(UTC))
        rows = session.exec(select(ScanJob.status, func.count()).group_by(col(ScanJob.status))).all()
        retried = session.exec(select(func.count()).select_from(ScanJob).where(col(ScanJob.attempts) > 1)).one()
        spans = session.exec(select(ScanJob.created_at, ScanJob.started_at, ScanJob.finished_at)).all()
    database.dispose()
    runs = [(end - start).total_seconds() for _, start, end in spans if start and end]
    if runs:
        print(f"  job run time (claimed to ended): mean {sum(runs) / len(runs):.2f} s, max {max(runs):.2f} s")
    return used, {status: int(n) for status, n in rows}, int(retried)


async def _burst(phase: Phase, bases: list[str], urls: list[str], count: int) -> None:
    requests: list[tuple[str, str, str, dict[str, object]]] = [
        ("free", "POST", f"{bases[n % 2]}/api/scan", {"json": {"url": urls[n % 2]}}) for n in range(count)
    ]
    await _run(phase, requests)


async def _kill_later(cluster: Cluster, seconds: float) -> None:
    await asyncio.sleep(seconds)
    cluster.kill_worker(0)
    print(f"  (worker 0 SIGKILLed {seconds:.1f} s into the burst)")


async def _measure(phase: Phase, cluster: Cluster, bases: list[str], urls: list[str], args: argparse.Namespace) -> None:
    tasks = [asyncio.create_task(_burst(phase, bases, urls, args.scans))]
    if args.kill_worker_after is not None:
        tasks.append(asyncio.create_task(_kill_later(cluster, args.kill_worker_after)))
    await asyncio.gather(*tasks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=500, help="concurrent free scans")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--concurrency", type=int, default=8, help="scans at once per worker")
    parser.add_argument("--kill-worker-after", type=float, help="SIGKILL worker 0 this many seconds into the burst")
    parser.add_argument("--keep-logs", help="copy the processes' logs into this directory")
    args = parser.parse_args()

    server = get_server()
    database_url = server.migrated_database()
    with tempfile.TemporaryDirectory() as tmp, AuthDnsServer() as dns, SiteServer(Pki(Path(tmp))) as sites:
        factory = SiteFactory(sites, dns)
        urls = [
            factory(catalog.best_practices("jobs-best.test")).url,
            factory(catalog.no_practices("jobs-worst.test")).url,
        ]
        env = {
            "WEBSEC_ALLOW_PRIVATE_TARGETS": "1",
            "WEBSEC_DNS_SERVERS": f"{dns.ip}:{dns.port}",
            "WEBSEC_NAMESERVER_PORT": str(dns.port),
            "WEBSEC_CA_BUNDLE": str(sites.pki.ca_bundle_path),
            "WEBSEC_FREE_SCANS_PER_DAY": str(BIG_QUOTA),
            "WEBSEC_PRO_SCANS_PER_MONTH": str(BIG_QUOTA),
        }
        cluster = Cluster(database_url=database_url, directory=Path(tmp), env=env)
        try:
            bases = [cluster.start_api(scan_workers=0), cluster.start_api(scan_workers=0)]
            for _ in range(args.workers):
                cluster.start_worker(args.concurrency)
            import httpx

            for base in bases:  # warm-up: one scan through each web process
                httpx.post(f"{base}/api/scan", json={"url": urls[0]}, timeout=120)
            used_before, _, _ = _state(database_url)
            phase = Phase("free scans")
            asyncio.run(_measure(phase, cluster, bases, urls, args))
            time.sleep(1.0)  # a job ended after its waiter gave up would show here
            used_after, jobs, retried = _state(database_url)
        finally:
            cluster.close()
            if args.keep_logs:
                import shutil

                for log in Path(tmp).glob("*.log"):
                    shutil.copy(log, Path(args.keep_logs) / log.name)

    served = phase.ok_by_kind["free"]
    killed = f", worker 0 SIGKILLed at {args.kill_worker_after:.0f} s" if args.kill_worker_after is not None else ""
    print(
        f"jobs benchmark: {args.scans} concurrent free scans (an A+ and an F site), 2 serve-api (queue only), "
        f"{args.workers} workers x {args.concurrency}, PostgreSQL{killed}"
    )
    print(phase.report())
    print(f"  served with a report: {served}/{args.scans} ({100 * served / args.scans:.1f} %)")
    unended = jobs.get("queued", 0) + jobs.get("running", 0)
    counted = used_after - used_before
    print(
        f"  quota: free counter +{counted} for {served} 200s -> lost or double-counted units: {counted - served}; "
        f"jobs {jobs} (retried after a dead worker: {retried}); unended jobs: {unended}"
    )
    failed = phase.errors_5xx + phase.transport_errors + abs(counted - served) + unended
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
