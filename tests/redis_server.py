"""A throwaway Redis server for tests, from Debian's `redis-server` package (like tests/pg_server.py).

Started once per test session on first use, on 127.0.0.1 and an ephemeral port, in a temporary
directory, with persistence off; stopped at exit. If the binary is missing the tests that need it fail
with a message saying what to install (`make test` installs it); nothing is skipped silently.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from tests.clock import real_clock_env
from tests.fixtures.ports import free_port

_INSTALL_HINT = (
    "redis-server was not found. Install Debian's `redis-server` package "
    "(`apt-get install redis-server`; `make test` does this) or put it on PATH."
)


class RedisUnavailable(RuntimeError):
    pass


@dataclass
class RedisServer:
    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        # Debian installs it in /usr/bin; PATH may not have it under a minimal environment.
        binary = shutil.which("redis-server", path=f"{os.environ.get('PATH', '')}:/usr/bin")
        if binary is None:
            raise RedisUnavailable(_INSTALL_HINT)
        log = (self.root / "log").open("wb")
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.root)]
            + ["--save", "", "--appendonly", "no", "--protected-mode", "yes", "--daemonize", "no"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=real_clock_env(),
        )
        log.close()
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 10
        try:
            while True:
                if self.process.poll() is not None:
                    raise RedisUnavailable(f"redis-server exited: {(self.root / 'log').read_text(errors='replace')}")
                try:
                    if client.ping():
                        return
                except redis.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    raise RedisUnavailable("redis-server did not answer PING within 10 s")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


_server: RedisServer | None = None
_lock = threading.Lock()


def get_redis_server() -> RedisServer:
    """The session's server, started on first use."""
    global _server
    with _lock:
        if _server is None:
            server = RedisServer(Path(tempfile.mkdtemp(prefix="websec-redis-")), free_port())
            try:
                server.start()
            except BaseException:
                server.stop()
                raise
            atexit.register(server.stop)
            _server = server
        return _server
