"""API benchmark: requests per second and latency of `GET /api/verify-key` and `GET /api/usage`.

    python -m bench.api_bench [--clients 50] [--seconds 5] [--workers 1] [--database-url URL]

Starts `python -m websec_app serve-api` on 127.0.0.1 with a fresh SQLite database in a
temporary directory (or `--database-url`), creates a Pro key with the store, then runs
`--clients` concurrent keep-alive HTTP/1.1 clients against each endpoint for `--seconds`
(after a one-second warm-up) and prints requests/s, p50, p99 and max latency. The load
generator is a minimal asyncio client so that it takes as little of the CPU as possible
from the server it measures (both share the machine). Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python bench/api_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(REPO))

from tests.fixtures.ports import free_port  # noqa: E402


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)  # seconds
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return status


async def client(port: int, request: bytes, stop_at: float, record_from: float, result: Result) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while True:
            started = time.perf_counter()
            if started >= stop_at:
                return
            writer.write(request)
            try:
                status = await _read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                result.errors += 1
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                continue
            finished = time.perf_counter()
            if started >= record_from:
                result.latencies.append(finished - started)
                result.statuses[status] = result.statuses.get(status, 0) + 1
    finally:
        writer.close()


async def load(port: int, path: str, headers: dict[str, str], clients: int, seconds: float) -> tuple[Result, float]:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    result = Result()
    now = time.perf_counter()
    record_from = now + 1.0  # warm-up: connections, caches, the thread pool
    stop_at = record_from + seconds
    await asyncio.gather(*(client(port, request, stop_at, record_from, result) for _ in range(clients)))
    return result, seconds


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop for the load generator too (installed with the server): the client must not be the bottleneck."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _create_key(database_url: str) -> str:
    from websec_app.store import Database, create_subscription, issue_api_key

    database = Database(database_url)
    now = datetime.now(UTC)
    with database.session() as session:
        subscription = create_subscription(session, email="bench@example.com", now=now)
        if subscription.id is None:
            raise RuntimeError("subscription was not saved")
        key = issue_api_key(session, subscription.id, now).key
    database.dispose()
    return key


def _wait_until_up(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve-api exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("serve-api did not start within 30 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--database-url", default="", help="default: SQLite in a temporary directory")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="websec-api-bench-") as tmp:
        database_url = args.database_url or f"sqlite:///{tmp}/websec.db"
        key = _create_key(database_url)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
        env.update({"WEBSEC_DATABASE_URL": database_url, "WEBSEC_DATA_DIR": tmp, "PYTHONPATH": str(REPO)})
        command = [
            sys.executable,
            "-m",
            "websec_app",
            "serve-api",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(args.workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        process = subprocess.Popen(command, cwd=REPO, env=env)
        try:
            _wait_until_up(port, process)
            print(
                f"API benchmark: {args.clients} concurrent keep-alive clients, {args.seconds:g} s per endpoint, "
                f"{args.workers} worker(s), {database_url.split(':')[0]}, {os.cpu_count()} CPUs (shared with the "
                "load generator)"
            )
            print(
                f"{'endpoint':<18} {'requests/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>7}  statuses"
            )
            targets = [
                ("GET /api/verify-key", "/api/verify-key", {"X-API-Key": key}),
                ("GET /api/usage", f"/api/usage?key={key}", {}),
                ("GET /api/health", "/api/health", {}),
            ]
            for label, path, headers in targets:
                with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                    result, seconds = runner.run(load(port, path, headers, args.clients, args.seconds))
                count = len(result.latencies)
                if not count:
                    print(f"{label:<18} no responses (errors: {result.errors})")
                    continue
                print(
                    f"{label:<18} {count / seconds:>10.0f} {percentile(result.latencies, 0.50) * 1000:>8.1f} "
                    f"{percentile(result.latencies, 0.99) * 1000:>8.1f} {max(result.latencies) * 1000:>8.1f} "
                    f"{result.errors:>7}  {dict(sorted(result.statuses.items()))}"
                )
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
