"""The only network code of the scanner: resolve -> guard -> HTTP/TLS/DNS -> one SiteSnapshot.

Parts that do not depend on each other run concurrently: the main page, the `http://` form of the host, the TLS
handshakes (with their protocol and cipher probes), the DNS queries and the MTA-STS policy of the domain start
together, and the MX hosts' STARTTLS (smtp.py) once the DNS queries' first round has named them; the CORS probes and
security.txt follow as soon as the final URL is known (the foreign-origin probe, when the look-alike's answer calls
for it, once that answer is in). Each part has its own timeout and the whole scan a total budget. Only a target that
cannot be reached at all raises; anything else is recorded in the snapshot as a Failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from ...clock import clock_for
from ...settings import Settings
from ..errors import CLIENT_CERTIFICATE_REQUIRED, TargetRefused, TargetUnreachable
from ..registrable import registrable_domain
from ..request_headers import OriginHeaders
from ..snapshot import (
    CorsProbe,
    CorsProbeKind,
    DnsAnswer,
    Failure,
    FetchChain,
    HttpResponse,
    MailServer,
    SiteSnapshot,
    Timing,
    TlsHandshake,
)
from ..target import Target, ip_literal, parse_target
from ._asyncio_stream import CONNECTION_RESET
from .cors_origins import cors_probe_origins, foreign_probe_needed
from .dns import fetch_dns, mx_hosts
from .guard import ensure_port_allowed
from .http import ChainCookies, SharedFetches, describe_error, fetch_chain, fetch_one, make_client
from .mail_policy import fetch_mta_sts
from .nameservers import NameserverAsker
from .resolve import Pinner, Resolver
from .smtp import fetch_mail_servers
from .tls import fetch_tls, pinned_tls

__all__ = ["fetch_snapshot"]

T = TypeVar("T")
U = TypeVar("U")


class _Clock:
    """The scan's time budget, and a record of when each part ran (to show they overlap)."""

    def __init__(self, budget_seconds: float) -> None:
        self.started = time.perf_counter()
        self.budget = budget_seconds
        self.timings: list[Timing] = []

    def remaining(self) -> float:
        return max(self.budget - (time.perf_counter() - self.started), 0.01)

    async def run(self, part: str, work: Awaitable[T], on_timeout: U) -> T | U:
        """Await `work` within what is left of the budget; `on_timeout` when it runs out."""
        start = time.perf_counter() - self.started
        try:
            return await asyncio.wait_for(work, self.remaining())
        except TimeoutError:
            return on_timeout
        finally:
            self.timings.append(Timing(part, start, time.perf_counter() - self.started))

    async def within(self, part: str, work: Callable[[float], Awaitable[T]]) -> T:
        """`work(seconds left of the budget)`, for a part that keeps to them itself and returns what it has when
        they run out (fetch_dns: a lookup cut short must be recorded as failed, not dropped with the rest)."""
        start = time.perf_counter() - self.started
        try:
            return await work(self.remaining())
        finally:
            self.timings.append(Timing(part, start, time.perf_counter() - self.started))


async def _cors_probe(
    client: httpx.AsyncClient,
    pinner: Pinner,
    url: str,
    kind: CorsProbeKind,
    origin: str,
    settings: Settings,
    cookies: ChainCookies,
) -> CorsProbe:
    """The final URL requested with `Origin: <origin>` and the cookies a browser that loaded the page sends with
    a credentialed fetch() from a page of that origin (`cookies`: those the main chain's redirects and the page
    set): from another site, only SameSite=None ones (ChainCookies.header_for). A cookie gate whose cookie goes
    across sites lets the probe through to the page, as it lets an attacker's request; one whose cookie stays
    home answers the probe with its redirect, as it answers the attacker. Without a response, why."""
    cookie = cookies.header_for(url, from_origin=origin)
    sent = cookies.names_for(url, from_origin=origin)
    withheld = tuple(name for name in cookies.names_for(url) if name not in sent)
    headers = {"Origin": origin, **({"Cookie": cookie} if cookie else {})}
    try:
        target = parse_target(url)
        address = await pinner.pin(target.host, target.port)
        response = await fetch_one(client, target.url, address, settings.limits, headers=headers, max_body=64 * 1024)
    except Exception as exc:  # noqa: BLE001 - a failed probe is "not checked", never a failed scan
        return CorsProbe(kind, origin, failure=describe_error(exc), cookies=sent, cookies_withheld=withheld)
    return CorsProbe(kind, origin, response, cookies=sent, cookies_withheld=withheld)


#: A first hop failing so leaves nothing at the https origin to read (no answer at all).
_NO_HTTPS_ANSWER = ("unreachable", "tls", "timeout")


async def _security_txt(
    client: httpx.AsyncClient, pinner: Pinner, origin: str, settings: Settings, *, plain_origin: str | None = None
) -> FetchChain:
    """RFC 9116 §3: the file at the https `origin`, else, for a site reached over http only (`plain_origin`, its
    http:// origin) whose https origin does not answer at all, at `plain_origin`: researchers read it there, and
    the check grades it (invalid: §3 requires https) where nothing would be known of it. The https chain's
    failure stands when the http origin does not answer either."""
    found = await _security_txt_at(client, pinner, origin, settings)
    if plain_origin is None or found.responses or found.failure is None or found.failure.kind not in _NO_HTTPS_ANSWER:
        return found
    plain = await _security_txt_at(client, pinner, plain_origin, settings)
    return plain if plain.final is not None else found


async def _security_txt_at(client: httpx.AsyncClient, pinner: Pinner, origin: str, settings: Settings) -> FetchChain:
    """RFC 9116 §3: /.well-known/security.txt, with the legacy /security.txt as fallback.

    The well-known location wins only when it holds a security.txt: a page answered with 200 to every
    path (an app's HTML shell, a "Page not found" text) is not one, so the legacy location is asked too."""
    # Imported here, when the first answer is in: not before the fetch starts, where the command line waits for
    # every import (issue 14); by now the warm-up has imported it with the checks (scanner/warmup.py).
    from ..records.security_txt import is_security_txt

    limit = settings.limits.max_security_txt_bytes
    primary = await fetch_chain(client, pinner, f"{origin}/.well-known/security.txt", settings.limits, max_body=limit)
    if primary.final is not None and is_security_txt(primary.final):
        return primary
    legacy = await fetch_chain(client, pinner, f"{origin}/security.txt", settings.limits, max_body=limit)
    if legacy.final is not None and is_security_txt(legacy.final):
        return legacy
    return primary


def _tls_for(target: Target, pinner: Pinner, settings: Settings) -> Awaitable[TlsHandshake]:
    """The handshake graded for `target`: its own port for an https:// target, else 443."""
    return pinned_tls(target.host, target.port if target.scheme == "https" else 443, pinner, settings)


_OUT_OF_TIME = Failure("timeout", "the scan's time budget ran out")


def _covered_www(final_target: Target, final: HttpResponse | None) -> str | None:
    """www.<domain> when the page is at a registered domain over HTTPS on port 443 and its HSTS policy (the first
    Strict-Transport-Security field with a max-age, as browsers keep it) includes subdomains: a browser that keeps the
    policy sends every visit to www over HTTPS, where a failed handshake or a bad certificate cannot be clicked
    through (RFC 6797 §8.4, §12.1; hstspreload.org's `domain.www.no_tls`)."""
    host = final_target.host
    if final is None or final_target.scheme != "https" or final_target.port != 443 or ip_literal(host) is not None:
        return None
    if registrable_domain(host) != host:
        return None
    values = final.headers.get_all("strict-transport-security")
    if not values:
        return None
    # Imported here, once the page is in, as _security_txt_at's parser: not before the fetch starts (issue 14)
    from ..records.header_values import kept_hsts

    policy = kept_hsts(values)
    return f"www.{host}" if policy is not None and policy.include_subdomains else None


def _scanned_www(www: str | None, tls_target: Target, handshake: TlsHandshake) -> TlsHandshake | None:
    """www's HTTPS when www is the host scanned, at http:// (at https:// the scan went through it): the handshake the
    scan made with its port 443, when it failed. One with a certificate is the TLS section's (the address scanned)."""
    if www is None or (tls_target.host, tls_target.port) != (www, 443) or handshake.failure is None:
        return None
    return handshake


async def _www_tls(host: str, pinner: Pinner, settings: Settings) -> TlsHandshake | None:
    """`host`'s HTTPS on port 443, one handshake without the probes (whether a browser gets through is the
    question, not how well it is served). None when the name has no address, its lookup fails, or the guard refuses
    its address: nothing a browser is sent to, or nothing this scan may reach."""
    try:
        address = await pinner.pin(host, 443)
    except (TargetUnreachable, TargetRefused):
        return None
    return await fetch_tls(host, 443, address, settings, probes=False, pinner=pinner)


async def _refusal_explained(
    exc: TargetUnreachable, tls_target: Target, tls_task: asyncio.Future[TlsHandshake]
) -> TargetUnreachable:
    """`exc`, or, when the page fetch failed in or right after its TLS handshake with the address the grading
    handshake went to, and that handshake saw the server ask for a client certificate, what the server requires.
    Python's TLS shows no such request, and the server's refusal of a client without one is a handshake alert (TLS
    1.2), or after the handshake an alert of its own (TLS 1.3, said as it comes: _asyncio_stream.py), a close, or
    a reset when the server closes with the request unread. Waits for the TLS section, bounded by the scan's clock
    as ever."""
    refusal = exc.kind in ("tls", "protocol") or exc.reason == CONNECTION_RESET
    if exc.url is None or not refusal or exc.requires_client_certificate:
        return exc
    failed = parse_target(exc.url)
    if (failed.scheme, failed.host, failed.port) != ("https", tls_target.host, tls_target.port):
        return exc
    if not (await tls_task).client_certificate_requested:
        return exc
    said = f"it asked for one during the TLS handshake, and without one: {exc.reason}"
    return exc.explained(f"{CLIENT_CERTIFICATE_REQUIRED}: {said}", "tls")


def _kept_alive(response: HttpResponse | None) -> bool:
    """Whether the server left the response's connection open for the next request (RFC 9112 9.3)."""
    if response is None or response.http_version != "HTTP/1.1":
        return False
    tokens = {t.strip().lower() for v in response.headers.get_all("connection") for t in v.split(",")}
    return "close" not in tokens


async def _mail_servers(
    mx_answer: asyncio.Future[DnsAnswer | None], pinner: Pinner, settings: Settings, clock: _Clock
) -> tuple[MailServer, ...]:
    """The domain's MX hosts asked for STARTTLS (fetch/smtp.py), as soon as the DNS part has the MX answer (its
    first round), beside the rest of its lookups; each one the scan's time budget cut off is recorded so."""
    exchanges = mx_hosts(await mx_answer)
    cut = tuple(MailServer(exchange, failure=_OUT_OF_TIME) for exchange in exchanges)
    return await clock.run("smtp", fetch_mail_servers(exchanges, pinner, settings), cut)


async def _after(previous: asyncio.Future[Any] | None, start: Callable[[], Awaitable[T]]) -> T:
    """The work `start` makes, once `previous` has finished (whatever its outcome); at once when there is none."""
    if previous is not None:
        await asyncio.wait([previous])
    return await start()


async def fetch_snapshot(
    target: Target, settings: Settings, *, origin_headers: OriginHeaders | None = None
) -> SiteSnapshot:
    """Fetch everything one scan needs. Raises TargetRefused or TargetUnreachable for the target itself.
    `origin_headers`: the user's extra request headers for the target's own origin."""
    limits = settings.limits
    clock = _Clock(limits.total_seconds)
    fetched_at = clock_for(settings)()  # the scan's 'now': certificate, cookie and DNSSEC dates
    resolver = Resolver(settings)
    pinner = Pinner(resolver, settings)
    # Refuse or fail fast before any other traffic: the target's own port and name must pass the guard (the port
    # is the TLS handshakes' too, for an https target).
    ensure_port_allowed(target.port)
    if await clock.run("resolve", pinner.pin(target.host), None) is None:
        raise TargetUnreachable(f"DNS lookup for {target.host} did not finish within the scan's time budget")

    # The upgrade judged is that of the http:// URL the user gave (any port, any path), which the
    # main chain already fetches: fetch it once. For an https:// target, http://host/ on port 80.
    upgrade_url = None if target.scheme == "http" else target.with_scheme("http").url
    tls_target = target if target.scheme == "https" else target.with_scheme("https")
    # The main chain and the http:// form's chain share identical requests (the upgrade's https hop).
    shared = SharedFetches()
    async with make_client(pinner, settings, origin_headers=origin_headers) as client:
        # Independent parts start at once and run while the main page loads.
        upgrade_task: asyncio.Future[FetchChain] | None = None
        if upgrade_url is not None:
            upgrade_task = asyncio.ensure_future(
                clock.run(
                    "http_upgrade",
                    fetch_chain(client, pinner, upgrade_url, limits, shared=shared),
                    FetchChain(upgrade_url, failure=_OUT_OF_TIME),
                )
            )
        tls_task = asyncio.ensure_future(
            clock.run(
                "tls",
                _tls_for(tls_target, pinner, settings),
                TlsHandshake(tls_target.host, tls_target.port, failure=_OUT_OF_TIME),
            )
        )
        mx_answer: asyncio.Future[DnsAnswer | None] = asyncio.get_running_loop().create_future()
        dns_task = asyncio.ensure_future(
            clock.within(
                "dns",
                lambda seconds: fetch_dns(
                    target.host,
                    resolver,
                    limits.dns_seconds,
                    budget_seconds=seconds,
                    mx_answer=mx_answer,
                    https_port=tls_target.port,
                    nameservers=NameserverAsker.for_settings(settings),
                ),
            )
        )
        mta_sts_task = asyncio.ensure_future(
            clock.run("mta_sts", fetch_mta_sts(target.host, resolver, pinner, client, settings), (None, None))
        )
        mail_task = asyncio.ensure_future(_mail_servers(mx_answer, pinner, settings, clock))
        side: list[asyncio.Future[Any]] = [tls_task, dns_task, mta_sts_task, mail_task]
        side += [upgrade_task] if upgrade_task else []
        try:
            main_cookies = ChainCookies()
            try:
                main = await clock.run(
                    "main",
                    fetch_chain(
                        client, pinner, target.url, limits, raise_on_first_hop=True, shared=shared, cookies=main_cookies
                    ),
                    None,
                )
            except TargetUnreachable as exc:
                raise await _refusal_explained(exc, tls_target, tls_task) from None
            if main is None:
                raise TargetUnreachable(f"Could not reach {target.url}: the scan's time budget ran out")
            final_url = main.final_url
            final_target = parse_target(final_url)
            if main.final is not None and not main.final.is_redirect:  # fetch_chain took the redirects' cookies
                main_cookies.take(main.final)  # a visitor who loaded the page holds its cookies too
            https_origin = (final_target if final_target.scheme == "https" else target.with_scheme("https")).origin
            plain_origin = final_target.origin if final_target.scheme == "http" else None  # a site on http only
            # These need the final URL. When the server keeps connections alive they go one after
            # another on the page's connection (one connection per origin, as a browser would);
            # otherwise each would need a connection of its own anyway, so they go at once.
            in_series = _kept_alive(main.final)
            cors_tasks: list[asyncio.Future[CorsProbe | None]] = []
            lookalike_task: asyncio.Future[CorsProbe | None] | None = None

            def cors_probe(
                kind: CorsProbeKind, origin: str, lookalike: asyncio.Future[CorsProbe | None] | None
            ) -> Callable[[], Awaitable[CorsProbe | None]]:
                async def probe() -> CorsProbe | None:
                    # The foreign probe goes only where the look-alike's answer (finished by now) leaves it
                    # something to tell (fetch/cors_origins.py): None, it was not sent.
                    answered = lookalike.result() if kind == "foreign" and lookalike is not None else None
                    if answered is not None and not foreign_probe_needed(answered):
                        return None
                    return await clock.run(
                        f"cors_{kind}_probe",
                        _cors_probe(client, pinner, final_url, kind, origin, settings, main_cookies),
                        CorsProbe(kind, origin, failure=_OUT_OF_TIME),
                    )

                return probe

            for kind, origin in cors_probe_origins(final_target):
                previous = cors_tasks[-1] if in_series and cors_tasks else None
                if kind == "foreign" and lookalike_task is not None:
                    previous = lookalike_task  # on a closing server too, where the others go at once
                probe_task = asyncio.ensure_future(_after(previous, cors_probe(kind, origin, lookalike_task)))
                if kind == "lookalike":
                    lookalike_task = probe_task
                cors_tasks.append(probe_task)
            security_txt_task = asyncio.ensure_future(
                _after(
                    cors_tasks[-1] if in_series else None,
                    lambda: clock.run(
                        "security_txt",
                        _security_txt(client, pinner, https_origin, settings, plain_origin=plain_origin),
                        FetchChain(f"{https_origin}/.well-known/security.txt", failure=_OUT_OF_TIME),
                    ),
                )
            )
            side += [*cors_tasks, security_txt_task]
            # The page is served with the final host's certificate: grade that one when it differs.
            final_tls_task: asyncio.Future[TlsHandshake] | None = None
            if final_target.scheme == "https" and (final_target.host, final_target.port) != (
                tls_target.host,
                tls_target.port,
            ):
                final_tls_task = asyncio.ensure_future(
                    clock.run(
                        "tls_final",
                        _tls_for(final_target, pinner, settings),
                        TlsHandshake(final_target.host, final_target.port, failure=_OUT_OF_TIME),
                    )
                )
                side.append(final_tls_task)
            www = _covered_www(final_target, main.final)
            www_task: asyncio.Future[TlsHandshake | None] | None = None
            if www is not None and www != target.host:
                www_task = asyncio.ensure_future(clock.run("tls_www", _www_tls(www, pinner, settings), None))
                side.append(www_task)
            await asyncio.gather(*side)
        except BaseException:
            for task in side:
                task.cancel()
            await asyncio.gather(*side, return_exceptions=True)
            raise
        finally:
            await shared.aclose()
    return SiteSnapshot(
        target=target,
        main=main,
        http_upgrade=upgrade_task.result() if upgrade_task else main,
        cors_probes=tuple(probe for task in cors_tasks if (probe := task.result()) is not None),
        security_txt=security_txt_task.result(),
        tls=(final_tls_task or tls_task).result(),
        entry_tls=tls_task.result() if final_tls_task is not None else None,
        www_tls=www_task.result() if www_task is not None else _scanned_www(www, tls_target, tls_task.result()),
        dns=dns_task.result(),
        mta_sts_policy=mta_sts_task.result()[0],
        mta_sts_tls=mta_sts_task.result()[1],
        mail_servers=mail_task.result(),
        fetched_at=fetched_at,
        timings=tuple(clock.timings),
        passed_over=pinner.passed_over_to_an_open_address(),
    )
