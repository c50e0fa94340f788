"""A real `serve-api` process under hostile clients (issue 12): it keeps answering and its memory stays bounded.

While the server receives a 300 MB body, a flood of junk-key requests, or many slow-loris connections, a
prober asks `GET /api/health` every 50 ms and a sampler reads the RSS of the server's processes from
`/proc/<pid>/status`. Each story asserts that every health probe answered within a second and that no
process of the server grew past `RSS_CEILING`, during the attack and after it. Everything is loopback,
bounded in count and time, and stops by itself.

The measurement that started the issue: a 300 MB JSON body to /api/scan from a client already over quota
was read and parsed in full (peak 1.35 GB, 968 MB still held afterwards) before the 429.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.clock import TEST_NOW
from tests.fixtures.ports import free_port
from tests.fixtures.processes import stop, wait_until_healthy

REPO = Path(__file__).resolve().parents[2]

#: Resident memory no process of the server may exceed, during an attack or after it. An idle serve-api
#: worker holds about 100 MB (Python, FastAPI, SQLAlchemy, the scanner's tables); 300 MB leaves room for
#: bounded work and none for a 300 MB body.
RSS_CEILING = 300 * 1024 * 1024
#: The issue's one latency bound: each health probe, measured alone.
HEALTH_WITHIN = 1.0
HUGE_BODY = 300 * 1024 * 1024


# --- the server and what watches it ----------------------------------------------------------------


@dataclass
class Server:
    base: str
    host: str
    port: int
    process: subprocess.Popen[bytes]

    def pids(self) -> list[int]:
        """The serve-api process and every process it started (granian runs its workers as children)."""
        found, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo.extend(int(child) for child in (task / "children").read_text().split())
            except OSError:
                continue
        return found


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes; (0, 0) once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0, 0
    values = {}
    for line in lines:
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) * 1024
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


@dataclass
class Watch:
    """Health probes and RSS samples taken from two threads while an attack runs."""

    server: Server
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    peak_rss: int = 0
    peak_hwm: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def _probe(self) -> None:
        with httpx.Client(base_url=self.server.base, timeout=5) as http:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    status = http.get("/api/health").status_code
                    if status != 200:
                        self.failures.append(f"health answered {status}")
                except httpx.HTTPError as exc:
                    self.failures.append(f"health failed: {exc!r}")
                self.latencies.append(time.monotonic() - started)
                self._stop.wait(0.05)

    def sample(self) -> None:
        for pid in self.server.pids():
            rss, hwm = _memory(pid)
            self.peak_rss, self.peak_hwm = max(self.peak_rss, rss), max(self.peak_hwm, hwm)

    def _sampler(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.02)

    def __enter__(self) -> Watch:
        self._threads = [threading.Thread(target=run, daemon=True) for run in (self._probe, self._sampler)]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.5)  # a few probes and samples after the attack
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        self.sample()

    def assert_healthy(self) -> None:
        mib = 1024 * 1024
        figures = (
            f"health probes: {len(self.latencies)}, slowest {max(self.latencies, default=0) * 1000:.0f} ms; "
            f"peak RSS {self.peak_rss / mib:.0f} MiB, VmHWM {self.peak_hwm / mib:.0f} MiB"
        )
        print(figures)
        assert not self.failures, f"{self.failures[:3]} ({figures})"
        assert len(self.latencies) >= 3, figures
        assert max(self.latencies) < HEALTH_WITHIN, figures
        assert self.peak_rss < RSS_CEILING and self.peak_hwm < RSS_CEILING, figures


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("hostile")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "RAZORPAY_", "STRIPE_"))}
    env.update(
        {
            "WEBSEC_DATA_DIR": str(data),
            "WEBSEC_BASE_URL": base,
            "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
            # Every free scan is over quota: the client, refused with 429 once its body is read.
            "WEBSEC_FREE_SCANS_PER_DAY": "0",
            "PYTHONPATH": str(REPO),
        }
    )
    log = (data / "serve-api.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "websec_app", "serve-api", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-access-log"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        output: Callable[[], str] = lambda: (data / "serve-api.log").read_text(errors="replace")  # noqa: E731
        wait_until_healthy(base, process, what="serve-api", seconds=30, output=output)
        yield Server(base, "127.0.0.1", port, process)
    finally:
        stop(process)
        log.close()


# --- the attacks -----------------------------------------------------------------------------------


def _read_response(sock: socket.socket, seconds: float) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one HTTP/1.1 response (Content-Length framed, or until the close)."""
    sock.settimeout(seconds)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "-1"))
    try:
        while length < 0 or len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return status, headers, body


def _huge_json() -> Iterator[bytes]:
    """HUGE_BODY bytes of JSON, 64 KiB at a time: a valid start, a long string, the end."""
    prefix, end = b'{"url": "example.com", "padding": "', b'"}'
    yield prefix
    left = HUGE_BODY - len(prefix) - len(end)
    block = b"a" * 65536
    while left > 0:
        yield block[: min(left, len(block))]
        left -= len(block)
    yield end


def send_huge_body(server: Server, *, chunked: bool) -> tuple[int, dict[str, str], bytes, int]:
    """POST /api/scan with a 300 MB JSON body (a valid start, then padding), sent 64 KiB at a time until the
    server answers or everything is sent. Returns the response and how many body bytes went out."""
    head = f"POST /api/scan HTTP/1.1\r\nHost: {server.host}:{server.port}\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {HUGE_BODY}\r\n\r\n"
    sent = 0
    pieces = _huge_json()
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(head.encode())
        # poll, not select: select() refuses a descriptor numbered 1,024 or more, which a test process holding the
        # session's fixture sites may well hand out
        answered = select.poll()
        answered.register(sock, select.POLLIN)
        try:
            while sent < HUGE_BODY:
                if answered.poll(0):
                    break  # the server answered: a real client stops sending here
                piece = next(pieces)
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            else:
                if chunked:
                    sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading and closed: its answer may still be in our buffer
        try:
            status, headers, body = _read_response(sock, 120)
        except (ConnectionResetError, TimeoutError):
            status, headers, body = 0, {}, b""
    return status, headers, body, sent


async def _flood(base: str, requests: int, connections: int) -> list[tuple[int, bytes]]:
    """`requests` junk-token and junk-key requests over `connections` keep-alive connections."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    answers: list[tuple[int, bytes]] = []
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as http:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for number in range(requests):
            queue.put_nowait(number)

        async def one(number: int) -> httpx.Response:
            junk = f"wsk_{number:08d}" + "x" * (number % 7) * 40
            kind = number % 3
            if kind == 0:
                token = f"wsc_{number}" if number % 2 else "t" * 4096
                body = {"token": token, "url": "example.com", "email": "a@example.com"}
                return await http.post("/api/compliance-report/generate", json=body)
            if kind == 1:
                return await http.get("/api/verify-key", headers={"X-API-Key": junk})
            return await http.get("/api/usage", params={"key": junk})

        async def worker() -> None:
            while not queue.empty():
                response = await one(queue.get_nowait())
                answers.append((response.status_code, response.content))

        await asyncio.gather(*(worker() for _ in range(connections)))
    return answers


async def _slow_loris(host: str, port: int, connections: int, seconds: float) -> int:
    """`connections` connections that each send a request head one byte every 50 ms and never finish it;
    returns how many the server had closed by the end."""
    streams = [await asyncio.open_connection(host, port) for _ in range(connections)]
    head = b"GET /api/health HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 10_000
    closed = 0
    try:
        deadline = time.monotonic() + seconds
        position = 0
        while time.monotonic() < deadline and position < len(head):
            for _, writer in streams:
                if not writer.is_closing():
                    writer.write(head[position : position + 1])
            position += 1
            await asyncio.sleep(0.05)
    finally:
        for reader, writer in streams:
            if reader.at_eof():
                closed += 1
            writer.close()
        for _, writer in streams:
            try:
                await writer.wait_closed()
            except OSError:
                pass
    return closed


# --- the stories -----------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_300_mb_body_is_refused_early_and_never_held(server: Server, chunked: bool) -> None:
    # Given a server that is answering, When a client over quota streams 300 MB of JSON to /api/scan
    with Watch(server) as watch:
        status, headers, body, sent = send_huge_body(server, chunked=chunked)

    # Then it is told 413 in the usual error shape, long before it has sent it all
    assert status == 413, (status, body[:200], sent)
    assert headers.get("content-type") == "application/json"
    assert "too large" in json.loads(body)["error"]
    assert sent < 16 * 1024 * 1024, sent
    # And the server answered its health probes and never held the body
    watch.assert_healthy()


def test_a_flood_of_junk_tokens_and_keys_gets_errors_and_health_still_answers(server: Server) -> None:
    # When 2,000 requests with junk tokens and keys arrive over 50 connections
    with Watch(server) as watch:
        answers = asyncio.run(_flood(server.base, requests=2000, connections=50))

    # Then each is refused with a JSON error (400 for an overlong token, 401/403 for keys, 403 for tokens)
    assert len(answers) == 2000
    statuses = {status for status, _ in answers}
    assert statuses <= {400, 403}, statuses
    assert all("error" in json.loads(content) for _, content in answers)
    # And the server answered its health probes throughout, within its memory ceiling
    watch.assert_healthy()


def test_slow_loris_connections_do_not_starve_the_server(server: Server) -> None:
    # When 300 connections dribble request headers a byte at a time for 6 seconds
    with Watch(server) as watch:
        asyncio.run(_slow_loris(server.host, server.port, connections=300, seconds=6))

    # Then every health probe in between answered within a second, within the memory ceiling
    watch.assert_healthy()


def test_headers_beyond_the_bounds_are_refused(server: Server) -> None:
    # When a client sends one enormous header, or a great many headers
    with httpx.Client(base_url=server.base, timeout=10) as http:
        huge = http.get("/api/health", headers={"X-Junk": "a" * 20_000})
        many = http.get("/api/health", headers={f"X-Junk-{n}": "a" for n in range(150)})

    # Then both are refused with 431 before any route runs
    assert huge.status_code == 431 and many.status_code == 431, (huge.status_code, many.status_code)
