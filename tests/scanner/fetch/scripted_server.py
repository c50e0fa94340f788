"""A loopback TCP server that answers a ClientHello with bytes a test scripts: a hostile or odd TLS server
for the hand-built hello probes (fetch/_legacy_hello.py)."""

from __future__ import annotations

import asyncio


async def serve_once(answer: bytes, *, hold: bool = True) -> tuple[asyncio.Server, int]:
    """A server that reads a ClientHello, sends `answer`, then (with `hold`) waits for the client to leave: a probe
    that waited for more would run into its own timeout, and say so. (server, port)"""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(65536)
            writer.write(answer)
            await writer.drain()
            if hold:
                await reader.read()
        except OSError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]
