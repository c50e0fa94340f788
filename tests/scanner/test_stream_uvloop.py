"""What the scanner's HTTP stream waits for, on asyncio's loop and on uvloop (serve-api, the job worker).

A fetch of a fixture site often took ~40 ms longer under uvloop (at times under asyncio too). The cause was the
fixture server, not the stream: its sockets kept Nagle's algorithm on (asyncio disables it only on
sockets whose protocol says TCP, and sites.py made them with protocol 0), so a response written
while the TLS session ticket sent just before was unacknowledged waited for the client's delayed ACK.
Real servers disable Nagle. These tests keep the sites honest, and check that the stream itself sends
a request in one write and returns a response whose length is known without waiting for the server
to close.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from tests.fixtures.sites import SAME, RunningSite, Site, SiteFactory, Stall, html
from websec_app.scanner.fetch import _asyncio_stream
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import FetchChain
from websec_app.settings import Settings

LOOPS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {"asyncio": asyncio.run, "uvloop": uvloop.run}
PAGE = "<h1>persistent</h1>" * 50


def _server_side_nodelay(site: RunningSite) -> list[int]:
    """TCP_NODELAY of each connection the site is serving, read from the server's own sockets."""
    deadline = time.monotonic() + 5.0  # failsafe only: the server registers the connection at once
    while not site._writers and time.monotonic() < deadline:
        time.sleep(0.01)
    return [
        writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        for writer in list(site._writers)
    ]


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_fixture_sites_disable_nagle_on_every_connection_as_real_servers_do(
    site_factory: SiteFactory, scheme: str
) -> None:
    # Given a site whose page never answers, so the connection stays open while we look at it
    site = site_factory(
        Site(names=(site_factory.unique_host("nodelay"),), routes={"/": Stall(max_seconds=10)}, http=SAME)
    )
    port = site.https_port if scheme == "https" else site.http_port
    assert port is not None

    # When a client connects and sends its request
    with socket.create_connection((site.ip, port), timeout=5) as raw:
        client: socket.socket = raw
        if scheme == "https":
            # Trust is not what this looks at, and the system clock may be a year off (make test-clock): the
            # test certificates' dates follow TEST_NOW, so the client checks neither dates nor the chain.
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            client = context.wrap_socket(raw, server_hostname=site.host)
        client.sendall(f"GET / HTTP/1.1\r\nHost: {site.host}\r\n\r\n".encode())

        # Then the server's side of the connection has Nagle off: a small write (the response after a
        # TLS session ticket, a close_notify after the response) leaves at once instead of waiting for
        # the client's delayed ACK
        assert _server_side_nodelay(site) == [1]
        if isinstance(client, ssl.SSLSocket):
            client.close()


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_the_stream_sends_one_write_and_never_waits_for_the_servers_close(
    site_factory: SiteFactory, scan_settings: Settings, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    # Given a site that keeps the connection open after its response (Content-Length, no Connection: close)
    site = site_factory(Site(names=(site_factory.unique_host("persist"),), routes={"/": html(PAGE)}, keep_alive=True))
    writes: list[int] = []
    reads_at_end_of_stream = 0
    real_write, real_read = _asyncio_stream.AsyncioStream.write, _asyncio_stream.AsyncioStream.read

    async def counted_write(self: _asyncio_stream.AsyncioStream, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            writes.append(len(buffer))
        await real_write(self, buffer, timeout)

    async def counted_read(self: _asyncio_stream.AsyncioStream, max_bytes: int, timeout: float | None = None) -> bytes:
        nonlocal reads_at_end_of_stream
        data = await real_read(self, max_bytes, timeout)
        reads_at_end_of_stream += not data
        return data

    monkeypatch.setattr(_asyncio_stream.AsyncioStream, "write", counted_write)
    monkeypatch.setattr(_asyncio_stream.AsyncioStream, "read", counted_read)

    async def fetch() -> FetchChain:
        pinner = Pinner(Resolver(scan_settings), scan_settings)
        async with make_client(pinner, scan_settings) as client:
            # failsafe only: a stream waiting for the close would otherwise wait out the read budget
            return await asyncio.wait_for(
                fetch_chain(client, pinner, site.url, scan_settings.limits, raise_on_first_hop=True), 30
            )

    # When the scanner fetches the page on that loop
    chain = LOOPS[loop](fetch())

    # Then the whole page arrived, the request left in one write (one TLS record, one segment), and
    # no read waited for the end of the stream: the response's length said where it ended
    final = chain.final
    assert final is not None and final.status_code == 200
    assert final.body == PAGE.encode()
    assert len(writes) == 1
    assert reads_at_end_of_stream == 0
