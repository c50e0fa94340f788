"""A scan cluster of real processes on one PostgreSQL database: `serve-api` processes that only queue scans
(WEBSEC_SCAN_WORKERS=0) and `python -m websec_app worker` processes that run them. Used by the tests here and
by bench/load_bench.py --workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.fixtures.ports import free_port
from tests.fixtures.processes import stop, wait_until_healthy

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Cluster:
    database_url: str
    directory: Path
    env: Mapping[str, str]
    apis: list[tuple[subprocess.Popen[bytes], str]] = field(default_factory=list)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def _env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "RAZORPAY_", "STRIPE_", "REDIS_"))}
        base.update(self.env)
        base.update(
            {
                "PYTHONPATH": str(REPO),
                "WEBSEC_DATA_DIR": str(self.directory),
                "WEBSEC_DATABASE_URL": self.database_url,
                "WEBSEC_BASE_URL": "https://websec.test",
            }
        )
        return base

    def _log(self, name: str) -> Path:
        return self.directory / f"{name}.log"

    def start_api(self, *, scan_workers: int = 0) -> str:
        port = free_port()
        name = f"api-{len(self.apis)}"
        env = {**self._env(), "WEBSEC_SCAN_WORKERS": str(scan_workers)}
        with self._log(name).open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "websec_app", "serve-api", "--port", str(port), "--no-access-log"],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        base = f"http://127.0.0.1:{port}"
        self.apis.append((process, base))
        wait_until_healthy(base, process, what=name, seconds=60, output=lambda: self.tail(name))
        return base

    def start_worker(self, concurrency: int = 4) -> subprocess.Popen[bytes]:
        name = f"worker-{len(self.workers)}"
        with self._log(name).open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "websec_app", "worker", "--concurrency", str(concurrency)],
                cwd=REPO,
                env=self._env(),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.workers.append(process)
        return process

    def kill_worker(self, index: int) -> None:
        """SIGKILL: no goodbye, no graceful end of its running jobs."""
        self.workers[index].send_signal(signal.SIGKILL)
        self.workers[index].wait()

    def tail(self, name: str) -> str:
        path = self._log(name)
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def log(self, name: str) -> str:
        path = self._log(name)
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.terminate()
        for process, _ in self.apis:
            process.terminate()
        for process in [*self.workers, *(p for p, _ in self.apis)]:
            stop(process)
