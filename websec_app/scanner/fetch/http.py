"""HTTP fetching over connections pinned to guarded addresses, with hard limits.

httpx does the HTTP; a custom httpcore network backend replaces its name resolution,
so every TCP connection goes to the address the guard approved for that host, while
the URL (and so SNI and Host) keeps the name. Redirects are followed by hand so each
hop's host is resolved and guarded before anything is sent to it.
"""

from __future__ import annotations

import asyncio
import errno
import ssl
import typing
import warnings
from urllib.parse import urljoin

import httpcore
import httpx

from ...settings import ScanLimits, Settings
from ..errors import InvalidTarget, ScanError, TargetRefused, TargetUnreachable
from ..snapshot import Failure, FetchChain, HeaderList, HttpResponse
from ..target import parse_target
from .resolve import Pinner


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the pinned address of a host instead of resolving its name again."""

    def __init__(self, pinner: Pinner) -> None:
        self._pinner = pinner
        self._inner = httpcore.AnyIOBackend()
        self._connects: list[asyncio.Future[httpcore.AsyncNetworkStream]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = self._pinner.address_for(host)
        if address is None:  # never happens through fetch_chain; refuse rather than resolve
            raise httpcore.ConnectError(f"{host} was not resolved and checked by the guard")
        # anyio (4.x) drops a socket that connects just as its connect_tcp is cancelled, and a scan
        # cancels its side fetches as soon as the target itself fails. So the connect is shielded
        # (it is bounded by the connect timeout) and close_all() closes every stream it returned.
        connect = asyncio.ensure_future(self._inner.connect_tcp(address, port, timeout, local_address, socket_options))
        self._connects.append(connect)
        return await asyncio.shield(connect)

    async def close_all(self) -> None:
        """Close every connection this backend opened, whether or not httpcore still knows it."""
        connects, self._connects = self._connects, []
        for outcome in await asyncio.gather(*connects, return_exceptions=True):
            if isinstance(outcome, httpcore.AsyncNetworkStream):
                try:
                    await outcome.aclose()
                except (OSError, ssl.SSLError, httpcore.NetworkError):  # already broken: it is closed now
                    pass

    async def connect_unix_socket(self, *args: typing.Any, **kwargs: typing.Any) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never used by the scanner")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def permissive_tls_context() -> ssl.SSLContext:
    """Reach any server to read its headers; certificate trust is graded separately (tls.py)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with warnings.catch_warnings():
            # Python 3.11 deprecates TLS 1.0/1.1 as a setting; we still need to reach such servers.
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1
        context.set_ciphers("ALL:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):  # an OpenSSL build without legacy support
        pass
    return context


class _PinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, pinner: Pinner, limits: ScanLimits) -> None:
        super().__init__(verify=False, trust_env=False, retries=0)
        # httpx (0.28) gives no public way to pass a network backend, so we replace the pool it
        # built with an identical one that has ours (httpx/_transports/default.py).
        self._backend = _PinnedBackend(pinner)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=permissive_tls_context(),
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            network_backend=self._backend,
        )

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await self._backend.close_all()

    async def __aexit__(self, *exc_info: typing.Any) -> None:  # AsyncClient's exit calls this, not aclose()
        try:
            await super().__aexit__(*exc_info)
        finally:
            await self._backend.close_all()


def make_client(pinner: Pinner, settings: Settings) -> httpx.AsyncClient:
    limits = settings.limits
    return httpx.AsyncClient(
        transport=_PinnedTransport(pinner, limits),
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(
            connect=limits.connect_seconds,
            read=limits.read_seconds,
            write=limits.read_seconds,
            pool=limits.connect_seconds,
        ),
        headers={
            "User-Agent": settings.user_agent,
            "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
            "Accept-Encoding": "gzip, deflate",
        },
    )


def _refused(exc: BaseException) -> bool:
    """Whether a connect failed because the peer refused it (a TCP RST: nothing listens there).

    anyio (4.x) tries every address and then raises OSError("All connection attempts failed")
    from the last attempt's error; httpcore and httpx wrap that again. The refusal is at the
    bottom of the cause chain.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or (
            isinstance(current, OSError) and current.errno == errno.ECONNREFUSED
        ):
            return True
        current = current.__cause__ or current.__context__
    return False


def describe_error(exc: BaseException) -> Failure:
    """A transport error as a Failure with a message a site owner understands."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return Failure("timeout", "the server did not answer in time")
    if isinstance(exc, httpx.ConnectError):
        if _refused(exc):
            return Failure("unreachable", "connection refused: nothing accepts connections on that port")
        text = str(exc) or type(exc).__name__
        if "SSL" in text or "TLS" in text or "handshake" in text.lower():
            return Failure("tls", f"TLS handshake failed: {text}")
        return Failure("unreachable", f"connection failed: {text}")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.DecodingError | httpx.LocalProtocolError):
        return Failure("protocol", f"the server sent an invalid HTTP response: {exc}")
    if isinstance(exc, httpx.HTTPError | OSError | ssl.SSLError):
        return Failure("unreachable", f"{type(exc).__name__}: {exc}")
    return Failure("unreachable", f"{type(exc).__name__}: {exc}")


async def fetch_one(
    client: httpx.AsyncClient,
    url: str,
    address: str,
    limits: ScanLimits,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    max_body: int | None = None,
) -> HttpResponse:
    """One request; the body is read up to `max_body` bytes and for at most `read_seconds`.

    A body that is too large, or drips too slowly, is kept as far as it got and marked
    truncated: the headers are what most checks need, and they have arrived.
    """
    max_body = limits.max_body_bytes if max_body is None else max_body
    request = client.build_request(method, url, headers=headers)
    async with asyncio.timeout(limits.connect_seconds + limits.read_seconds):
        response = await client.send(request, stream=True)
    body = bytearray()
    truncated = False
    try:
        if method != "HEAD":
            async with asyncio.timeout_at(asyncio.get_running_loop().time() + limits.read_seconds):
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) >= max_body:
                        del body[max_body:]
                        truncated = True
                        break
    except TimeoutError:
        truncated = True  # slow drip: keep what arrived within the read budget
    except (httpx.HTTPError, OSError):
        truncated = True  # the body broke off mid-way; headers are still valid
    finally:
        await response.aclose()
    return HttpResponse(
        url=str(response.url),
        status_code=response.status_code,
        headers=HeaderList(tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw)),
        body=bytes(body),
        body_truncated=truncated,
        address=address,
        http_version=response.http_version,
    )


async def fetch_chain(
    client: httpx.AsyncClient,
    pinner: Pinner,
    url: str,
    limits: ScanLimits,
    *,
    headers: dict[str, str] | None = None,
    max_body: int | None = None,
    raise_on_first_hop: bool = False,
) -> FetchChain:
    """Fetch `url`, following redirects by hand; every hop's host is resolved and guarded.

    With `raise_on_first_hop`, failures are raised as ScanError (the target itself);
    otherwise they end the chain as a recorded Failure (secondary fetches).
    """
    responses: list[HttpResponse] = []
    current = url
    seen: set[str] = set()
    for _hop in range(limits.max_redirects + 1):
        try:
            target = parse_target(current)
            address = await pinner.pin(target.host)
            response = await fetch_one(client, target.url, address, limits, headers=headers, max_body=max_body)
        except ScanError as exc:
            if raise_on_first_hop:
                if responses and isinstance(exc, InvalidTarget):
                    raise TargetRefused(f"The site redirects to {current!r}, which cannot be scanned: {exc}") from None
                if responses and isinstance(exc, TargetRefused):
                    raise TargetRefused(f"The site redirects to {current}. {exc}") from None
                raise
            kind = "refused" if isinstance(exc, TargetRefused | InvalidTarget) else "unreachable"
            return FetchChain(url, tuple(responses), Failure(kind, str(exc)))
        except (httpx.HTTPError, OSError, ssl.SSLError, TimeoutError) as exc:
            failure = describe_error(exc)
            if raise_on_first_hop:
                where = "" if not responses else f" (redirected to {current})"
                raise TargetUnreachable(f"Could not reach {current}{where}: {failure.message}") from None
            return FetchChain(url, tuple(responses), failure)
        responses.append(response)
        if not response.is_redirect:
            return FetchChain(url, tuple(responses))
        location = response.location or ""
        current = urljoin(response.url, location.strip())
        if current in seen and raise_on_first_hop:
            break
        seen.add(current)
    failure = Failure("too_many_redirects", f"more than {limits.max_redirects} redirects (or a redirect loop)")
    if raise_on_first_hop:
        raise TargetUnreachable(f"Could not reach a page at {url}: {failure.message}")
    return FetchChain(url, tuple(responses), failure)
