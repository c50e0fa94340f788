"""A callback's delivery is bounded as a whole (websec_app/jobs/callbacks.py `deliver`): a receiver that
answers at once and then drips its body, or sends a huge one, neither holds a worker past the deadline nor
fills its memory. The receivers are raw asyncio servers on loopback."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Site, SiteFactory
from websec_app.jobs import callbacks
from websec_app.jobs.callbacks import deliver
from websec_app.settings import Settings

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
#: Far above the deadlines below: only reached by a delivery that never ends (the old code).
NEVER = 20.0
#: The whole delivery's deadline in these tests.
DEADLINE = 0.5


@asynccontextmanager
async def _receiver(handle: Handler) -> AsyncIterator[str]:
    writers: list[asyncio.StreamWriter] = []

    async def handled(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        try:
            await handle(reader, writer)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handled, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        server.close()
        for writer in writers:
            writer.close()
        await server.wait_closed()


def _dripping(head: bytes, byte: bytes) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A receiver that reads the request, sends `head`, then `byte` every 50 ms for as long as the client stays:
    each byte well within any per-read timeout."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head)
        while not writer.is_closing():
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(byte)

    return serve


async def test_a_receiver_dripping_its_body_does_not_hold_the_delivery(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a receiver that answers 200 at once, then one byte of its body at a time, never finishing
    # (each byte comes well within any per-read timeout)
    drip = _dripping(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", b"x")
    monkeypatch.setattr(callbacks, "CALLBACK_TIMEOUT_SECONDS", DEADLINE)
    settings = Settings(data_dir=tmp_path, allow_private_targets=True)
    async with _receiver(drip) as url:
        # When a callback is delivered to it (the deadline shortened for the test)
        delivery = asyncio.ensure_future(deliver(url, b"{}", "sha256=x", settings))
        done, _ = await asyncio.wait([delivery], timeout=NEVER)
        # Then the delivery ended (the status is known from the headers: the body is not waited for)
        assert done, "the delivery was still running: the receiver holds the worker"
        assert delivery.result() == 200


async def test_a_receiver_never_answering_is_given_up_at_the_deadline(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = _dripping(b"HTTP/1.1 200 OK\r\n", b"X")  # the status line, then a header a byte at a time, forever
    monkeypatch.setattr(callbacks, "CALLBACK_TIMEOUT_SECONDS", DEADLINE)
    settings = Settings(data_dir=tmp_path, allow_private_targets=True)
    async with _receiver(silent) as url:
        delivery = asyncio.ensure_future(deliver(url, b"{}", "sha256=x", settings))
        done, _ = await asyncio.wait([delivery], timeout=NEVER)
        assert done, "the delivery was still running: the receiver holds the worker"
        with pytest.raises(TimeoutError):
            delivery.result()  # the task engine retries it later


async def test_a_huge_answer_is_not_read(tmp_path) -> None:
    # Given a receiver that answers 200 with a 256 MB body, as fast as the socket takes it
    size = 256 * 1024 * 1024
    sent = 0

    async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        chunk = b"x" * (1 << 20)
        while sent < size:
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)

    settings = Settings(data_dir=tmp_path, allow_private_targets=True)
    async with _receiver(huge) as url:
        assert await deliver(url, b"{}", "sha256=x", settings) == 200
        await asyncio.sleep(0.2)  # the receiver sees the connection closed
    # Then the sender could only fill the sockets' buffers: the body was not read (the old code read it all)
    assert sent < 32 * 1024 * 1024


async def test_a_callback_whose_first_address_refuses_is_posted_to_the_next(
    site_factory: SiteFactory, dns_server: AuthDnsServer, scan_settings: Settings
) -> None:
    # Given a receiver's name with two addresses, the lower one where nothing listens on the receiver's port
    down, up = (site_factory(Site(tls=None, http=None, https_port=0, http_port=0)) for _ in range(2))
    assert ipaddress.ip_address(down.ip) < ipaddress.ip_address(up.ip)
    host = site_factory.unique_host("hooks")
    dns_server.set(host, "A", down.ip, up.ip)
    received: list[bytes] = []

    async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(take, up.ip, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        # When a callback is delivered to it, it is posted at the second address, named as the URL names it
        assert await deliver(f"http://{host}:{port}/hook", b"{}", "sha256=x", scan_settings) == 204
    finally:
        server.close()
        await server.wait_closed()
    assert len(received) == 1 and f"Host: {host}:{port}".encode() in received[0]
