"""What the page fetch says when a server ends the TLS handshake instead of finishing it: once, in words a site
owner reads ("TLS handshake failed: the server closed the connection", where it said "TLS handshake failed: TLS
handshake failed: ConnectionResetError"), and as a TLS failure even when the server resets the connection (it read
as "connection failed: [Errno 104] ...", as if nothing answered). And when it closes after the handshake without a
byte of a response: that it closed, not that it "sent an invalid HTTP response"."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct

import pytest

from tests.fixtures.sites import TlsConfig, server_context
from websec_app.scanner.fetch.http import fetch_chain, make_client
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.scanner.snapshot import FetchChain
from websec_app.settings import Settings

ALERT = b"\x15\x03\x03\x00\x02\x02\x28"  # a fatal handshake_failure alert


async def _server(ending: str) -> tuple[asyncio.Server, int]:
    """Reads the ClientHello, then ends the connection as `ending` says."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        if ending == "reset":  # SO_LINGER 0: close sends RST
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif ending == "alert":
            writer.write(ALERT)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _fetched(server: asyncio.Server, url: str, settings: Settings) -> FetchChain:
    """The page fetch of `url` through the scan's client, the server closed after."""
    try:
        pinner = Pinner(Resolver(settings), settings)
        async with make_client(pinner, settings) as client:
            return await fetch_chain(client, pinner, url, settings.limits)
    finally:
        server.close()


@pytest.mark.parametrize(
    ("ending", "said"),
    [
        ("close", "TLS handshake failed: the server closed the connection"),
        ("reset", "TLS handshake failed: the server reset the connection"),
        ("alert", "TLS handshake failed: [SSL: SSLV3_ALERT_HANDSHAKE_FAILURE] sslv3 alert handshake failure"),
    ],
)
async def test_a_handshake_the_server_ends_is_said_once_as_a_tls_failure(
    ending: str, said: str, dns_server, scan_settings: Settings
) -> None:
    dns_server.set("ends-handshake.test", "A", "127.0.0.1", ttl=60)
    server, port = await _server(ending)
    chain = await _fetched(server, f"https://ends-handshake.test:{port}/", scan_settings)
    assert chain.failure is not None and chain.failure.kind == "tls"
    assert chain.failure.message.startswith(said) and chain.failure.message.count("TLS handshake failed") == 1


@pytest.mark.parametrize(
    "client_certificate", [False, True], ids=["closes-after-the-request", "requires-a-client-cert"]
)
async def test_a_server_that_closes_without_answering_is_not_said_to_answer_invalidly(
    client_certificate: bool, pki, dns_server, scan_settings: Settings
) -> None:
    """The TLS handshake completes, then the server closes without a byte of a response: it sent nothing invalid. A
    server that requires a client certificate over TLS 1.3 does this (its refusal comes after the handshake)."""
    dns_server.set("closes.test", "A", "127.0.0.1", ttl=60)
    context = server_context(pki, TlsConfig(), ("closes.test",))
    if client_certificate:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki.ca_bundle_path)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(65536)
        except (OSError, ssl.SSLError):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    chain = await _fetched(server, f"https://closes.test:{server.sockets[0].getsockname()[1]}/", scan_settings)
    assert chain.failure is not None
    assert chain.failure.message == "the server closed the connection without answering the request"
