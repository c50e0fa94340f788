"""HTTP fetching over connections pinned to guarded addresses, with hard limits.

httpx does the HTTP; a custom httpcore network backend replaces its name resolution,
so every TCP connection goes to the address the guard approved for that host, while
the URL (and so SNI and Host) keeps the name. Redirects are followed by hand so each
hop's host is resolved and guarded before anything is sent to it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import importlib.util
import ssl
import sys
import typing
import warnings
from datetime import datetime
from urllib.parse import urlsplit

import httpcore
import httpx

from ...settings import ScanLimits, Settings
from ..errors import CLIENT_CERTIFICATE_REQUIRED, InvalidTarget, ScanError, TargetRefused, TargetUnreachable
from ..records.cookies import (
    EPOCH,
    Malformed,
    domain_matches,
    parse_cookie_date,
    parse_set_cookie,
    path_matches,
    rejection,
    storage_key,
)
from ..records.header_text import as_utf8
from ..records.location import BadLocation, redirect_target
from ..records.origins import same_site
from ..request_headers import OriginHeaders
from ..snapshot import Failure, FetchChain, HeaderList, HttpResponse
from ..target import parse_target

# _httpcore_asyncio: httpcore's locks on asyncio; _h11_field_values: h11 reads \f and \v in a header value
from . import _asyncio_stream, _h11_field_values, _httpcore_asyncio  # noqa: F401
from ._asyncio_stream import CONNECTION_RESET, HANDSHAKE_FAILED
from .body import ACCEPT_ENCODING, BodyDecoder
from .guard import BAD_PORTS, ensure_port_allowed
from .resolve import Pinner

# httpcore (1.0) runs `import sniffio` every time it sets up a lock or semaphore (~40 times a scan);
# when sniffio is not installed (httpx no longer needs it) each failed import searches sys.path
# again: ~7% of a scan's CPU in the scan benchmark's profile (docs/performance.md). Marked absent
# once, the import fails at once, with the same outcome (httpcore then assumes asyncio).
if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
    sys.modules["sniffio"] = None  # type: ignore[assignment]  # None is the documented "absent"


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the pinned address of a host instead of resolving its name again."""

    def __init__(self, pinner: Pinner) -> None:
        self._pinner = pinner
        self._connects: list[asyncio.Future[httpcore.AsyncNetworkStream]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if self._pinner.address_for(host) is None:  # never happens through fetch_chain; refuse rather than resolve
            raise httpcore.ConnectError(f"{host} was not resolved and checked by the guard")
        if port in BAD_PORTS:  # fetch_chain refuses them by name; this stops the single fetches (fetch_one) too
            raise httpcore.ConnectError(f"port {port} is one browsers refuse to connect to")

        async def connect(address: str) -> httpcore.AsyncNetworkStream:
            # A scan cancels its side fetches as soon as the target itself fails; a connect cancelled just as
            # it succeeds could leave its socket open. So the connect is shielded (it is bounded by the
            # connect timeout) and close_all() closes every stream it returned.
            connecting = asyncio.ensure_future(_asyncio_stream.connect_tcp(address, port, timeout, local_address))
            self._connects.append(connecting)
            return await asyncio.shield(connecting)

        return await self._pinner.reach(host, port, connect, _not_opened)

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
        await asyncio.sleep(seconds)


def _not_opened(exc: Exception) -> bool | None:
    """For Pinner.reach: whether a connect failed to open its connection, timed out (True) or not (False)."""
    if isinstance(exc, httpcore.ConnectTimeout):
        return True
    return False if isinstance(exc, httpcore.ConnectError) else None


def _ticket(connection: ssl.SSLObject) -> ssl.SSLSession | None:
    """The connection's session when it holds a resumable ticket. None while its handshake is still running
    (a concurrent connection to the same host) or after it failed: OpenSSL cannot serialise such a session,
    and CPython's `SSLObject.session` then raises `ValueError: i2d() failed`."""
    if connection.version() is None:  # handshake not done: cheaper to know than to catch that error
        return None
    try:
        session = connection.session
    except ValueError:
        return None
    return session if session is not None and session.has_ticket else None


class _Made:
    """A connection made with the resuming context, and its session once it had a ticket (read once:
    `SSLObject.session` serialises the session each time it is read)."""

    __slots__ = ("connection", "session")

    def __init__(self, connection: ssl.SSLObject) -> None:
        self.connection = connection
        self.session: ssl.SSLSession | None = None

    def ticket(self) -> ssl.SSLSession | None:
        if self.session is None:
            self.session = _ticket(self.connection)
        return self.session


def _session_resumer() -> type[ssl.SSLObject]:
    """The SSLObject class of one scan's client context: a new connection to a host offers the TLS
    session of an earlier connection to it (a TLS 1.3 ticket, RFC 8446 2.2; RFC 5077 below 1.3), so the
    page, the CORS probes and security.txt share one full handshake where the server allows it.

    These connections only read HTTP: the certificate, protocol and ciphers are graded by tls.py's own
    fresh handshakes, never by these. `SSLContext.sslobject_class` is the documented way to customise
    `wrap_bio`'s objects (Python 3.7+); `session=` is the argument `wrap_bio` passes on to `_create`,
    which `loop.start_tls` (asyncio's and uvloop's, both through `wrap_bio`) does not let us pass itself."""
    made: dict[str | None, list[_Made]] = {}

    class _Resuming(ssl.SSLObject):
        @classmethod
        def _create(  # type: ignore[no-untyped-def]  # CPython's private constructor, untyped in typeshed
            cls, incoming, outgoing, server_side=False, server_hostname=None, session=None, context=None
        ):
            earlier = made.setdefault(server_hostname, [])
            if session is None and not server_side:
                session = next(filter(None, (m.ticket() for m in reversed(earlier))), None)
            created = super()._create(  # type: ignore[misc]
                incoming, outgoing, server_side, server_hostname, session=session, context=context
            )
            earlier.append(_Made(created))
            if len(earlier) > 4:
                # The latest few, and the newest older one with a ticket: connections opened at once (to a server
                # that closes each, the CORS probes and security.txt) would otherwise push out the one they resume.
                ticketed = [m for m in earlier[:-4] if m.ticket()][-1:]
                earlier[:] = ticketed + earlier[-4:]
            return created

    return _Resuming


def permissive_tls_context(*, resume_sessions: bool = False) -> ssl.SSLContext:
    """Reach any server to read its headers; certificate trust is graded separately (tls.py).
    With `resume_sessions`, connections made with this context resume each other's sessions per host
    (`_session_resumer`): make one such context per scan."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if resume_sessions:
        context.sslobject_class = _session_resumer()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    # As browsers, reach a server without RFC 5746 (OpenSSL 3 refuses it by default); tls.py grades that.
    context.options |= getattr(ssl, "OP_LEGACY_SERVER_CONNECT", 0x4) | ssl.OP_NO_RENEGOTIATION
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
        context = permissive_tls_context(resume_sessions=True)
        super().__init__(verify=context, trust_env=False, retries=0)  # a context: httpx makes none of its own
        # httpx (0.28) gives no public way to pass a network backend, so we replace the pool it
        # built with an identical one that has ours (httpx/_transports/default.py).
        self._backend = _PinnedBackend(pinner)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
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


class _NoCookies(httpx.Cookies):
    """The client's own cookie store, which keeps nothing and reads no Set-Cookie. httpx's would carry every cookie
    any request of the scan received to all the others, unbounded, in whatever order concurrent parts happened to
    finish; each chain carries its own (ChainCookies). httpx (0.28) hands every response to
    `client.cookies.extract_cookies`, where a CookieJar, even one whose policy refuses everything, builds a
    urllib request and parses each Set-Cookie line: 14 us a response without one, 66 us with three."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass

    def set_cookie_header(self, request: httpx.Request) -> None:
        pass

    def set(self, name: str, value: str, domain: str = "", path: str = "/") -> None:
        pass


class _Client(httpx.AsyncClient):
    """An AsyncClient that leaves redirects alone: fetch_chain follows them by hand.

    httpx (0.28) builds the next request from `Location` even with follow_redirects=False (for
    `response.next_request`) and raises on a malformed one before the response is returned: a
    hostile redirect became an uncaught httpx.InvalidURL (issue 12). fetch_chain judges it instead.
    """

    _no_cookies = _NoCookies()

    def _build_redirect_request(self, request: httpx.Request, response: httpx.Response) -> httpx.Request:
        return request

    @property
    def cookies(self) -> httpx.Cookies:
        """A store that keeps nothing: httpx reads every store through this property."""
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: typing.Any) -> None:
        raise TypeError("the scan's client keeps no cookies: each redirect chain has its own (ChainCookies)")


def make_client(
    pinner: Pinner, settings: Settings, *, origin_headers: OriginHeaders | None = None
) -> httpx.AsyncClient:
    """The scan's HTTP client; `origin_headers`: the user's extra headers, added only to requests for the
    target's own origin (request_headers.py)."""
    limits = settings.limits
    return _Client(
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
            "Accept-Encoding": ACCEPT_ENCODING,  # exactly what body.py decodes
        },
        event_hooks={"request": [origin_headers.add_to]} if origin_headers and origin_headers.headers else None,
    )


def _refused(exc: BaseException) -> bool:
    """Whether a connect failed because the peer refused it (a TCP RST: nothing listens there).

    The connect's OSError (ConnectionRefusedError) is wrapped by httpcore's and httpx's ConnectError;
    the refusal is at the bottom of the cause chain.
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


#: httpcore's words for a connection closed before any byte of a response (httpcore `_async/http11.py`).
_NO_RESPONSE = "Server disconnected without sending a response"


def describe_error(exc: BaseException) -> Failure:
    """A transport error as a Failure with a message a site owner understands."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return Failure("timeout", "the server did not answer in time")
    if isinstance(exc, httpx.ReadError) and str(exc).startswith(CLIENT_CERTIFICATE_REQUIRED):
        return Failure("tls", str(exc))  # our stream's words for TLS 1.3's alert (_asyncio_stream.py)
    if isinstance(exc, httpx.ReadError) and str(exc) == CONNECTION_RESET:
        return Failure("unreachable", CONNECTION_RESET)
    if isinstance(exc, httpx.ConnectError):
        if _refused(exc):
            return Failure("unreachable", "connection refused: nothing accepts connections on that port")
        text = str(exc) or type(exc).__name__
        if text.startswith(HANDSHAKE_FAILED):  # our stream's words (_asyncio_stream.py): as they are
            return Failure("tls", text)
        if "SSL" in text or "TLS" in text or "handshake" in text.lower():
            return Failure("tls", f"{HANDSHAKE_FAILED}: {text}")
        return Failure("unreachable", f"connection failed: {text}")
    if isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith(_NO_RESPONSE):
        # nothing was sent, so nothing was invalid (a server that requires a client certificate over TLS 1.3 ends
        # here: its refusal comes after the handshake, and asyncio's TLS reports it as an end of stream)
        return Failure("protocol", "the server closed the connection without answering the request")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.DecodingError | httpx.LocalProtocolError):
        return Failure("protocol", f"the server sent an invalid HTTP response: {exc}")
    if isinstance(exc, httpx.HTTPError | OSError | ssl.SSLError):
        return Failure("unreachable", f"{type(exc).__name__}: {exc}")
    return Failure("unreachable", f"{type(exc).__name__}: {exc}")


#: What is read of a redirect's body before the redirect is followed. No check reads it (block pages and
#: fingerprints come from other statuses and from headers); a body that arrives with the headers is read to
#: its end so the connection can be kept for the next hop, and one that stalls is not waited for: browsers
#: follow a redirect on its headers.
REDIRECT_BODY_SECONDS = 1.0
REDIRECT_BODY_BYTES = 16 * 1024


async def fetch_one(
    client: httpx.AsyncClient,
    url: str,
    address: str,
    limits: ScanLimits,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    max_body: int | None = None,
) -> HttpResponse:
    """One request; the body is read and decoded up to `max_body` bytes and for at most `read_seconds`
    (a redirect's, up to REDIRECT_BODY_BYTES for at most REDIRECT_BODY_SECONDS).

    A body that is too large, expands like a decompression bomb, or drips too slowly, is kept as
    far as it got and marked truncated, with the reason in `body_note` (see body.py): the headers
    are what most checks need, and they have arrived.
    """
    max_body = limits.max_body_bytes if max_body is None else max_body
    # A header value is held as the latin-1 text of its bytes, as HeaderList holds a response's: a cookie a site set
    # in UTF-8 goes back as the bytes it came in (httpx would encode text as ASCII and refuse it)
    wire = None if headers is None else [(name.encode(), value.encode("latin-1")) for name, value in headers.items()]
    try:
        request = client.build_request(method, url, headers=wire, content=content)
    except (httpx.InvalidURL, ValueError) as exc:  # parse_target accepted it, httpx did not: still not a 500
        raise InvalidTarget(f"The URL {url!r} is not valid: {exc}") from None
    async with asyncio.timeout(limits.connect_seconds + limits.read_seconds):
        response = await client.send(request, stream=True)
    head = HttpResponse(
        url=str(response.url),
        status_code=response.status_code,
        headers=HeaderList(tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw)),
        address=_connected_to(response) or address,
        http_version=response.http_version,
    )
    read_seconds = limits.read_seconds
    if head.is_redirect:
        max_body, read_seconds = min(max_body, REDIRECT_BODY_BYTES), min(read_seconds, REDIRECT_BODY_SECONDS)
    decoder = BodyDecoder(response.headers.get("content-encoding"), max_body=max_body)
    try:
        if method != "HEAD":
            async with asyncio.timeout_at(asyncio.get_running_loop().time() + read_seconds):
                # The raw (still encoded) stream: httpx would decode a whole chunk at once, and follow
                # a chain of codings; BodyDecoder bounds every step (issue 12).
                async for chunk in response.aiter_raw():
                    if decoder.feed(chunk):
                        break
        decoder.finish()
    except TimeoutError:  # slow drip: keep what arrived within the read budget
        decoder.cut(
            "the redirect's body did not arrive with it; the redirect was followed without waiting for the rest"
            if head.is_redirect
            else f"the body did not arrive within the {read_seconds:g} s read budget; only its start was kept"
        )
    except (httpx.HTTPError, OSError):  # the body broke off mid-way; headers are still valid
        decoder.cut("the connection broke off during the body; only what arrived was kept")
    finally:
        await response.aclose()
    return dataclasses.replace(head, body=bytes(decoder.body), body_truncated=decoder.truncated, body_note=decoder.note)


def _connected_to(response: httpx.Response) -> str | None:
    """The address the response came from: the pinned one, or the next when the pinned one did not connect."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    return str(peer[0]) if peer else None


class SharedFetches:
    """One scan's GETs by URL: the same request asked twice is sent once, and both askers get its answer.

    The `http://` form's chain usually redirects to the very URL the main chain fetches at the same
    time; its hop then reads the main page's response instead of opening a connection of its own for
    an identical request. Requests that differ in anything sent (headers, body limit) are not shared."""

    def __init__(self) -> None:
        self._tasks: dict[_RequestKey, asyncio.Task[HttpResponse]] = {}
        self._all: list[asyncio.Task[HttpResponse]] = []

    async def fetch(
        self,
        client: httpx.AsyncClient,
        url: str,
        address: str,
        limits: ScanLimits,
        *,
        headers: dict[str, str] | None = None,
        max_body: int | None = None,
        fresh: bool = False,
    ) -> HttpResponse:
        """The answer to this request; with `fresh`, a new one even when it was asked before (and later askers
        read that newer one): a chain that asks again what it asked before expects the server to answer anew."""
        key = _request_key(url, address, headers, max_body)
        task = None if fresh else self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = asyncio.ensure_future(
                fetch_one(client, url, address, limits, headers=headers, max_body=max_body)
            )
            self._all.append(task)
        # Shielded: one asker giving up (its part's budget, a cancelled scan) must not cancel the other's.
        return await asyncio.shield(task)

    async def aclose(self) -> None:
        """Cancel what no one waits for any more, and collect every outcome (no unretrieved exception)."""
        for task in self._all:
            task.cancel()
        await asyncio.gather(*self._all, return_exceptions=True)


_RequestKey: typing.TypeAlias = tuple[str, str, tuple[tuple[str, str], ...], int | None]


def _request_key(url: str, address: str, headers: dict[str, str] | None, max_body: int | None) -> _RequestKey:
    """What makes two requests the same request: everything sent, and how much of the answer is read."""
    return (url, address, tuple(sorted((headers or {}).items())), max_body)


#: RFC 6265 6.1: the least a user agent keeps is 50 cookies per domain and 4096 bytes a cookie. A chain keeps
#: no more, and reads no more than MAX_CHAIN_COOKIES Set-Cookie lines of a response, whatever a server sends.
MAX_CHAIN_COOKIES = 50
MAX_COOKIE_BYTES = 4096


@dataclasses.dataclass(frozen=True, slots=True)
class _StoredCookie:
    """One cookie of a chain's jar, as RFC 6265bis 5.7 stores it."""

    name: str
    value: str
    domain: str  # the host that set it when host-only
    host_only: bool
    path: str
    secure: bool
    samesite: str | None  # "Strict", "Lax", "None", or None: unset (or a value browsers do not know)
    partitioned: bool

    def goes_to(self, scheme: str, host: str, path: str) -> bool:
        """6265bis 5.8.3 step 1: the domain (the very host for a host-only cookie), the path, and Secure."""
        if self.secure and scheme != "https":
            return False
        if not (host == self.domain if self.host_only else domain_matches(host, self.domain)):
            return False
        return path_matches(path, self.path)

    @property
    def goes_cross_site(self) -> bool:
        """Whether a request from another site's page (a credentialed fetch()) carries it, in Chromium 156 with
        third-party cookies allowed (as Chrome's regular windows have them): SameSite=None with Secure only. Strict
        and Lax stay home (6265bis 5.8.3 step 1), and so does a cookie without SameSite (or with a value browsers
        do not know): Chromium treats it as Lax, whose two-minute exception is for top-level POST navigations,
        not for a fetch(). A Partitioned cookie the site's own page set belongs to that site's partition, not to
        the other site's page (CHIPS). Firefox and Safari send even less: they keep a site's cookies from other
        sites' requests altogether (Total Cookie Protection, ITP)."""
        return self.samesite == "None" and self.secure and not self.partitioned


def _judged_at(response: HttpResponse) -> datetime:
    """The instant a cookie's expiry is compared with: the response's Date (the clock of the server that chose
    the expiry; the fetch reads none of its own), or EPOCH without one, so that only Max-Age=0 or an Expires at
    1970 deletes a cookie then."""
    dates = response.headers.get_all("date")
    return (parse_cookie_date(dates[0]) if dates else None) or EPOCH


class ChainCookies:
    """The cookies a chain's responses set, sent on its later hops as a browser's cookie jar sends them. A site
    that sets a cookie and redirects to check it (a consent or bot gate, often to the very same URL) is then
    followed as a browser follows it.

    A line is stored only if records/cookies.py parses it (a line without a name too, as a cookie of an empty name
    sent as its bare value) and finds no reason a browser refuses it (a Secure or
    prefixed cookie over http, a Domain that does not cover the host or is a public suffix, Partitioned without
    Secure: 6265bis 5.7, as Chromium does); its Domain scope is records/cookies.py's too (a last empty Domain,
    or a public suffix that is the host itself, leaves it host-only). It is sent back to its host or domain,
    under its path, Secure ones over https only (6265bis 5.8.3); to a request made from another site's page, only
    those browsers send across sites (`_StoredCookie.goes_cross_site`). Each chain starts empty, as a new
    visitor does; it keeps at most MAX_CHAIN_COOKIES, of at most MAX_COOKIE_BYTES each, so a hostile server cannot
    grow it. A cookie set in UTF-8 is kept and sent back byte for byte (the header's latin-1 text, as fetch_one
    sends it), as Chromium does; a line with a control character but HTAB, never (records/cookies.py refuses it,
    6265bis 5.6 step 1)."""

    def __init__(self) -> None:
        # Keyed as 6265bis 5.7 step 22 replaces a cookie (name, domain, host-only flag, path; CHIPS adds the
        # partition). Insertion order is creation order: a replaced cookie keeps its place.
        self._cookies: dict[tuple[str, str, bool, str, bool], _StoredCookie] = {}

    def header_for(self, url: str, *, from_origin: str | None = None) -> str | None:
        """The Cookie header a request to `url` carries, or None. `from_origin`: the origin of the page that makes
        the request (a CORS probe's Origin); None for the site's own navigation, as the chain's hops are."""
        sent = self._sent(url, from_origin)
        # 6265bis 5.8.3 step 4: a cookie without a name is sent as its value alone
        return "; ".join(f"{cookie.name}={cookie.value}" if cookie.name else cookie.value for cookie in sent) or None

    def names_for(self, url: str, *, from_origin: str | None = None) -> tuple[str, ...]:
        """The names of the cookies in `header_for(url, from_origin=...)`, in its order."""
        return tuple(cookie.name for cookie in self._sent(url, from_origin))

    def _sent(self, url: str, from_origin: str | None) -> list[_StoredCookie]:
        if not self._cookies:
            return []
        parts = urlsplit(url)
        scheme, host, path = parts.scheme, (parts.hostname or "").lower(), parts.path or "/"
        # A page of another site (schemeful: http://host is another site than https://host; `null` is every
        # site's) gets only what browsers send across sites; a page of the same site, every cookie that matches.
        cross_site = from_origin is not None and not same_site(from_origin, url)
        sent = [
            cookie
            for cookie in self._cookies.values()
            if cookie.goes_to(scheme, host, path) and (cookie.goes_cross_site or not cross_site)
        ]
        # 6265bis 5.8.3 step 2: longer paths first, then the earlier created (sorted() is stable).
        sent.sort(key=lambda cookie: -len(cookie.path))
        return sent

    def take(self, response: HttpResponse) -> None:
        """Keep the cookies `response` sets (or deletes)."""
        lines = [line for line in response.headers.get_all("set-cookie") if len(line) <= MAX_COOKIE_BYTES][
            :MAX_CHAIN_COOKIES
        ]
        if not lines:
            return
        url = response.url
        secure_origin = urlsplit(url).scheme == "https"
        now = _judged_at(response)
        for line in lines:
            # A line without a name ("foo", "=foo") is a cookie of an empty name, as Chromium stores it (6265bis 5.6)
            parsed = parse_set_cookie(line, nameless=True)
            if isinstance(parsed, Malformed) or rejection(parsed, url) is not None:
                continue
            key = storage_key(parsed, url)
            name, domain, host_only, path, _ = key
            cookie = _StoredCookie(
                name, parsed.value, domain, host_only, path, parsed.secure, parsed.samesite, parsed.partitioned
            )
            if not secure_origin and self._shadows_a_secure_cookie(cookie):
                continue
            if parsed.deletes(now):
                self._cookies.pop(key, None)
            elif key in self._cookies or len(self._cookies) < MAX_CHAIN_COOKIES:
                self._cookies[key] = cookie

    def _shadows_a_secure_cookie(self, cookie: _StoredCookie) -> bool:
        """6265bis 5.7 step 16: plain HTTP may neither set nor delete a cookie of the name of a Secure one
        over a domain and path it would cover (Chromium's strict secure cookies)."""
        return any(
            kept.secure
            and kept.name == cookie.name
            and (domain_matches(kept.domain, cookie.domain) or domain_matches(cookie.domain, kept.domain))
            and path_matches(cookie.path, kept.path)
            for kept in self._cookies.values()
        )


def _shown(location: str) -> str:
    """The Location as quoted in a message: escaped, and shortened when absurdly long."""
    return repr(location if len(location) <= 120 else location[:100] + "...")


async def fetch_chain(
    client: httpx.AsyncClient,
    pinner: Pinner,
    url: str,
    limits: ScanLimits,
    *,
    headers: dict[str, str] | None = None,
    max_body: int | None = None,
    raise_on_first_hop: bool = False,
    shared: SharedFetches | None = None,
    cookies: ChainCookies | None = None,
) -> FetchChain:
    """Fetch `url`, following redirects by hand; every hop's host is resolved and guarded, and its port too.

    With `raise_on_first_hop`, failures are raised as ScanError (the target itself);
    otherwise they end the chain as a recorded Failure (secondary fetches). With `shared`, a hop
    another chain of the scan is fetching (or fetched) with the same request reads that answer.

    Cookies set along the chain are sent on its later hops (ChainCookies; `cookies`, when given, is that jar,
    left holding them for the caller's later requests to the page). A hop that leads back to a URL
    asks it again, as browsers do: only the redirect limit ends a chain (Fetch Standard 4.4, "HTTP-redirect
    fetch": the redirect count), since a site may redirect to the same URL once it has set a cookie.
    """
    responses: list[HttpResponse] = []
    current = url
    cookies = ChainCookies() if cookies is None else cookies
    asked: set[_RequestKey] = set()
    for _hop in range(limits.max_redirects + 1):
        try:
            target = parse_target(current)
            address = await pinner.pin(target.host, target.port)
            ensure_port_allowed(target.port)
            cookie = cookies.header_for(target.url)
            hop_headers = {**(headers or {}), "Cookie": cookie} if cookie else headers
            if shared is not None:
                key = _request_key(target.url, address, hop_headers, max_body)
                response = await shared.fetch(
                    client, target.url, address, limits, headers=hop_headers, max_body=max_body, fresh=key in asked
                )
                asked.add(key)
            else:
                response = await fetch_one(client, target.url, address, limits, headers=hop_headers, max_body=max_body)
        except ScanError as exc:
            if raise_on_first_hop:
                if responses and isinstance(exc, InvalidTarget):
                    raise TargetUnreachable(
                        f"Could not reach {url}: the site redirects to an invalid address ({current!r}): {exc}"
                    ) from None
                if responses and isinstance(exc, TargetRefused):
                    raise TargetRefused(f"The site redirects to {current}. {exc}") from None
                raise
            if responses and isinstance(exc, InvalidTarget):
                return FetchChain(url, tuple(responses), Failure("bad_redirect", f"{current!r}: {exc}"))
            kind = "refused" if isinstance(exc, TargetRefused | InvalidTarget) else "unreachable"
            return FetchChain(url, tuple(responses), Failure(kind, str(exc)))
        except (httpx.HTTPError, OSError, ssl.SSLError, TimeoutError) as exc:
            failure = describe_error(exc)
            if raise_on_first_hop:
                where = "" if not responses else f" (redirected to {current})"
                raise TargetUnreachable(
                    f"Could not reach {current}{where}: {failure.message}",
                    url=current,
                    kind=failure.kind,
                    reason=failure.message,
                ) from None
            return FetchChain(url, tuple(responses), failure)
        responses.append(response)
        if not response.is_redirect:
            return FetchChain(url, tuple(responses))
        cookies.take(response)
        locations = list(dict.fromkeys(response.headers.get_all("location")))
        location = as_utf8(locations[0])
        try:
            if len(locations) > 1:
                # Browsers follow none (Chromium: ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION; Fetch 2.2.2, "extract
                # header list values": failure); the same value repeated is one Location.
                others = ", ".join(_shown(as_utf8(other)) for other in locations[1:3])
                raise BadLocation(f"is one of several different Location headers (also {others}): browsers follow none")
            current = redirect_target(response.url, location)
        except BadLocation as exc:
            message = f"the Location header of {response.url} ({_shown(location)}) {exc}"
            if raise_on_first_hop:
                raise TargetUnreachable(
                    f"Could not reach {url}: the site redirects to an invalid address: {message}."
                ) from None
            return FetchChain(url, tuple(responses), Failure("bad_redirect", message))
    failure = Failure("too_many_redirects", f"more than {limits.max_redirects} redirects (or a redirect loop)")
    if raise_on_first_hop:
        raise TargetUnreachable(f"Could not reach a page at {url}: {failure.message}")
    return FetchChain(url, tuple(responses), failure)
