"""Load benchmark: 500 concurrent free and Pro scans, then 1000 concurrent verify-key calls, against serve-api.

    python -m bench.load_bench [--scans 500] [--verifies 1000] [--max-concurrent-scans N] [--scan-queue N]
                               [--database-url URL]

Starts the fixture sites (best.test, worst.test) and their DNS server in this process, exactly like
bench/scan_bench.py, then `python -m websec_app serve-api` on 127.0.0.1 with a fresh SQLite database in a
temporary directory (or `--database-url`), private targets allowed, the fixture DNS and CA, and quotas
big enough that only the scan admission limits can refuse. All requests are sent at once; each phase
prints throughput, p50/p99 latency and the responses by status. 503 with Retry-After is shed load (the
admission queue was full) and counted apart from errors; any other 5xx is an error. It then compares the
quota counters in the database with the 200s (a lost or double-counted unit shows as a difference) and
prints the server's peak resident memory (VmHWM). Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python bench/load_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(REPO))

from bench.api_bench import _read_response  # noqa: E402
from tests.fixtures import catalog  # noqa: E402
from tests.fixtures.dns_server import AuthDnsServer  # noqa: E402
from tests.fixtures.pki import Pki  # noqa: E402
from tests.fixtures.ports import free_port  # noqa: E402
from tests.fixtures.sites import SiteFactory, SiteServer  # noqa: E402

BIG_QUOTA = 10_000_000


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)  # seconds, every answered request
    statuses: Counter[int] = field(default_factory=Counter)
    shed: int = 0  # 503 with Retry-After
    transport_errors: int = 0
    seconds: float = 0.0
    ok_by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def errors_5xx(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500) - self.shed

    def report(self) -> str:
        answered = len(self.latencies)
        statuses = ", ".join(f"{status}: {n}" for status, n in sorted(self.statuses.items()))
        p50, p99 = (percentile(self.latencies, q) * 1000 for q in (0.5, 0.99))
        return (
            f"  {self.name}: {answered} answered in {self.seconds:.1f} s ({answered / self.seconds:.1f}/s), "
            f"p50 {p50:.0f} ms, p99 {p99:.0f} ms\n"
            f"    by status {{{statuses}}}; shed (503 + Retry-After) {self.shed}; "
            f"5xx errors {self.errors_5xx}; transport errors {self.transport_errors}"
        )


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def _peak_rss_mib(pid: int) -> float:
    """VmHWM: the most resident memory the process ever had (proc(5))."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _send(client: httpx.AsyncClient, phase: Phase, kind: str, method: str, url: str, **options: object) -> None:
    started = time.perf_counter()
    try:
        response = await client.request(method, url, **options)  # type: ignore[arg-type]
    except httpx.HTTPError:
        phase.transport_errors += 1
        return
    phase.latencies.append(time.perf_counter() - started)
    phase.statuses[response.status_code] += 1
    if response.status_code == 503 and "retry-after" in response.headers:
        phase.shed += 1
    if response.status_code == 200:
        phase.ok_by_kind[kind] += 1


async def _run(phase: Phase, requests: list[tuple[str, str, str, dict[str, object]]]) -> None:
    limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=len(requests))
    async with httpx.AsyncClient(timeout=180, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(_send(client, phase, kind, m, url, **opts) for kind, m, url, opts in requests))
        phase.seconds = time.perf_counter() - started


async def _raw_get(port: int, phase: Phase, request: bytes) -> None:
    """One GET on its own connection with a bare asyncio client (bench/api_bench.py's): httpx's pool costs
    more CPU per request than the endpoint does, and the client shares the 2 cores with the server."""
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(request)
            status = await _read_response(reader)
        finally:
            writer.close()
    except OSError:
        phase.transport_errors += 1
        return
    phase.latencies.append(time.perf_counter() - started)
    phase.statuses[status] += 1
    if status == 200:
        phase.ok_by_kind["verify"] += 1


async def _run_raw(phase: Phase, port: int, request: bytes, count: int) -> None:
    started = time.perf_counter()
    await asyncio.gather(*(_raw_get(port, phase, request) for _ in range(count)))
    phase.seconds = time.perf_counter() - started


def _counters(database_url: str, subscription_id: int) -> tuple[int, int]:
    from websec_app.store import Database, free_scans_used, monthly_scans_used

    database = Database(database_url)
    now = datetime.now(UTC)
    with database.session() as session:
        used = monthly_scans_used(session, subscription_id, now), free_scans_used(session, "127.0.0.1", now)
    database.dispose()
    return used


def _create_key(database_url: str) -> tuple[str, int]:
    from websec_app.store import Database, create_subscription, issue_api_key

    database = Database(database_url)
    database.ensure_schema()
    now = datetime.now(UTC)
    with database.session() as session:
        subscription = create_subscription(session, email="load@example.com", now=now)
        if subscription.id is None:
            raise RuntimeError("subscription was not saved")
        key = issue_api_key(session, subscription.id, now).key
    database.dispose()
    return key, subscription.id


def _wait_until_up(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve-api exited with {process.returncode}")
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit("serve-api did not start within 30 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=500, help="concurrent scans, half free and half Pro")
    parser.add_argument("--verifies", type=int, default=1000, help="concurrent verify-key calls")
    parser.add_argument("--max-concurrent-scans", type=int, help="WEBSEC_MAX_CONCURRENT_SCANS for the server")
    parser.add_argument("--scan-queue", type=int, help="WEBSEC_SCAN_QUEUE for the server")
    parser.add_argument("--database-url", help="default: SQLite in a temporary directory")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, AuthDnsServer() as dns, SiteServer(Pki(Path(tmp))) as sites:
        factory = SiteFactory(sites, dns)
        targets = [factory(catalog.best_practices("load-best.test")), factory(catalog.no_practices("load-worst.test"))]
        database_url = args.database_url or f"sqlite:///{tmp}/websec.db"
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
        env.update(
            {
                "PYTHONPATH": str(REPO),
                "WEBSEC_DATA_DIR": tmp,
                "WEBSEC_DATABASE_URL": database_url,
                "WEBSEC_ALLOW_PRIVATE_TARGETS": "1",
                "WEBSEC_DNS_SERVERS": f"{dns.ip}:{dns.port}",
                "WEBSEC_NAMESERVER_PORT": str(dns.port),
                "WEBSEC_CA_BUNDLE": str(sites.pki.ca_bundle_path),
                "WEBSEC_FREE_SCANS_PER_DAY": str(BIG_QUOTA),
                "WEBSEC_PRO_SCANS_PER_MONTH": str(BIG_QUOTA),
            }
        )
        if args.max_concurrent_scans is not None:
            env["WEBSEC_MAX_CONCURRENT_SCANS"] = str(args.max_concurrent_scans)
        if args.scan_queue is not None:
            env["WEBSEC_SCAN_QUEUE"] = str(args.scan_queue)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "websec_app", "serve-api", "--port", str(port), "--no-access-log"]
        command += ["--log-level", "warning"]
        key, subscription_id = _create_key(database_url)
        process = subprocess.Popen(command, cwd=REPO, env=env)
        try:
            _wait_until_up(base, process)
            httpx.post(f"{base}/api/scan", json={"url": targets[0].url}, timeout=60)  # warm-up
            pro_before, free_before = _counters(database_url, subscription_id)
            scans = Phase("scans")
            requests: list[tuple[str, str, str, dict[str, object]]] = []
            for n in range(args.scans):
                url = targets[n % 2].url
                if n % 4 < 2:
                    requests.append(("free", "POST", f"{base}/api/scan", {"json": {"url": url}}))
                else:
                    pro: dict[str, object] = {"json": {"url": url}, "headers": {"X-API-Key": key}}
                    requests.append(("pro", "POST", f"{base}/api/scan/pro", pro))
            asyncio.run(_run(scans, requests))
            pro_after, free_after = _counters(database_url, subscription_id)
            verifies = Phase("verify-key")
            verify = f"GET /api/verify-key HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n\r\n".encode()
            asyncio.run(_run_raw(verifies, port, verify, args.verifies))
            peak = _peak_rss_mib(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)

    print(
        f"load benchmark: {args.scans} concurrent scans (half free, half Pro, of an A+ and an F site), "
        f"then {args.verifies} concurrent verify-key calls; serve-api, 1 process, "
        f"{'PostgreSQL' if args.database_url else 'SQLite'}"
    )
    print(scans.report())
    print(verifies.report())
    pro_diff = (pro_after - pro_before) - scans.ok_by_kind["pro"]
    free_diff = (free_after - free_before) - scans.ok_by_kind["free"]
    print(
        f"  quota: Pro counter +{pro_after - pro_before} for {scans.ok_by_kind['pro']} Pro 200s, "
        f"free counter +{free_after - free_before} for {scans.ok_by_kind['free']} free 200s "
        f"-> lost or double-counted units: {pro_diff + free_diff}"
    )
    print(f"  server peak RSS: {peak:.0f} MiB")
    failed = scans.errors_5xx + verifies.errors_5xx + scans.transport_errors + verifies.transport_errors
    return 1 if failed or pro_diff or free_diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
