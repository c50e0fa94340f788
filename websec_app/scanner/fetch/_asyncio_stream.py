"""httpcore's network streams on the running asyncio loop's own transports, without anyio.

httpcore (1.0) reaches asyncio only through anyio: every read, write and connect goes through
anyio's cancel scopes and task groups, and TLS through anyio's memory-BIO pump in Python. That
was about a third of the HTTP part of a scan's CPU in the scan benchmark's profile
(docs/performance.md). Here a plain asyncio Protocol holds the bytes, TLS is the loop's own
(`loop.start_tls`: asyncio's sslproto, or uvloop's compiled one when the loop is uvloop), and
timeouts are `asyncio.timeout`. The exceptions are httpcore's, mapped as its anyio backend maps
them, so httpx raises exactly what it raised before.
"""

from __future__ import annotations

import asyncio
import ssl
import typing

import httpcore

from ..errors import CLIENT_CERTIFICATE_REQUIRED

#: Reading from the socket pauses while this much has arrived unread (a server sending faster
#: than the body limits consume it must not grow memory).
_READ_HIGH_WATER = 256 * 1024


#: How a failed TLS handshake's message starts (fetch/http.py `describe_error` keeps such a message as it is).
HANDSHAKE_FAILED = "TLS handshake failed"
#: A connection the server reset (TCP RST), in the handshake or while a response was awaited.
CONNECTION_RESET = "the server reset the connection"


def _handshake_error(exc: BaseException) -> str:
    """What went wrong during the handshake, for a site owner: the TCP connection was made, so a reset or an end
    of stream here is the server's answer to our ClientHello (asyncio raises ConnectionResetError without a
    message when the server closes mid-handshake)."""
    if isinstance(exc, ssl.SSLError):
        return str(exc)
    if isinstance(exc, ConnectionResetError) and exc.errno is not None:
        return CONNECTION_RESET
    if isinstance(exc, ConnectionResetError | EOFError | BrokenPipeError):
        return "the server closed the connection"
    return str(exc) or type(exc).__name__


def _read_error(exc: BaseException) -> str:
    """What ended a connection while a response was awaited. TLS 1.3 (RFC 8446 4.4.2.4): a server that requires a
    client certificate refuses a client without one after the handshake, with the alert certificate_required."""
    if isinstance(exc, ssl.SSLError) and exc.reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED":
        return f"{CLIENT_CERTIFICATE_REQUIRED}: it answered the request with the TLS alert certificate_required"
    if isinstance(exc, ConnectionResetError):
        return CONNECTION_RESET
    return str(exc) or type(exc).__name__


class _Pipe(asyncio.Protocol):
    """The bytes received on one connection (plain or TLS: the protocol stays across start_tls)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.lost: BaseException | None = None
        self.reading_paused = False
        self._readable: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _READ_HIGH_WATER and self.transport is not None and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake_reader()
        return None  # close the transport: HTTP/1.1 never writes after the peer's EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self._wake_reader()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def _wake_reader(self) -> None:
        if self._readable is not None and not self._readable.done():
            self._readable.set_result(None)

    async def wait_readable(self) -> None:
        if self.buffer or self.eof:
            return
        self._readable = asyncio.get_running_loop().create_future()
        try:
            await self._readable
        finally:
            self._readable = None

    @property
    def writing_paused(self) -> bool:
        return self._writable is not None and not self._writable.done()

    async def wait_writable(self) -> None:
        if self._writable is not None and not self._writable.done():
            await self._writable

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self.reading_paused and len(self.buffer) <= _READ_HIGH_WATER // 2 and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, pipe: _Pipe) -> None:
        self._transport = transport
        self._pipe = pipe

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        pipe = self._pipe
        if not pipe.buffer and not pipe.eof:
            try:
                async with asyncio.timeout(timeout):
                    await pipe.wait_readable()
            except TimeoutError as exc:
                raise httpcore.ReadTimeout(str(exc)) from exc
        if pipe.buffer:
            return pipe.take(max_bytes)
        if pipe.lost is not None:
            raise httpcore.ReadError(_read_error(pipe.lost)) from pipe.lost
        return b""  # the peer closed: end of stream

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._transport.is_closing() or self._pipe.lost is not None:
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        if self._pipe.writing_paused:  # the usual request fits the socket's buffer: no timer to set up
            try:
                async with asyncio.timeout(timeout):
                    await self._pipe.wait_writable()
            except TimeoutError as exc:
                raise httpcore.WriteTimeout(str(exc)) from exc
        if self._pipe.lost is not None:
            raise httpcore.WriteError(str(self._pipe.lost)) from self._pipe.lost

    async def aclose(self) -> None:
        # No TLS close_notify exchange: the response has been read (or abandoned), and a graceful
        # shutdown would keep the connection, and a timer, alive until a hostile peer answers.
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport,
                    self._pipe,
                    ssl_context,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=timeout,
                )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError, EOFError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(f"{HANDSHAKE_FAILED}: {_handshake_error(exc)}") from exc
        if transport is None:  # the connection closed during the handshake
            self._transport.abort()
            raise httpcore.ConnectError(f"{HANDSHAKE_FAILED}: the server closed the connection")
        return AsyncioStream(transport, self._pipe)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # httpcore asks of an idle keep-alive connection: data or EOF arrived means it is unusable.
            # The loop has already moved whatever the socket had into the pipe.
            return bool(self._pipe.buffer) or self._pipe.eof
        return None


async def connect_tcp(
    host: str, port: int, timeout: float | None = None, local_address: str | None = None
) -> httpcore.AsyncNetworkStream:
    """A TCP connection to an address (never a name: the caller passes the pinned address)."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            transport, pipe = await loop.create_connection(
                _Pipe, host, port, local_addr=(local_address, 0) if local_address else None
            )
    except TimeoutError as exc:
        raise httpcore.ConnectTimeout(str(exc)) from exc
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from exc
    return AsyncioStream(transport, pipe)
