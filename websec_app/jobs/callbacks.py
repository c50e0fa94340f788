"""Callbacks of async scans (issue 16): a POST of the finished job to the owner's `callback_url`, signed.

The signature is HMAC-SHA256 over the exact body, hex, in `X-Websec-Signature: sha256=<hex>`. Its secret
is per API key and derived, never stored: HMAC-SHA256(WEBSEC_CALLBACK_SECRET, "websec-callback:<key id>").
The server can sign for any key without a table of secrets to steal; a stolen database signs nothing; a
rotated key (a new key id) gets a new secret. The owner is shown it once (the first 202 with a
callback_url, api_routes/routes/jobs.py); it is never logged.

The callback URL goes through the scanner's SSRF guard (resolve.Pinner: every address of the name must be
public unless WEBSEC_ALLOW_PRIVATE_TARGETS; the port must be one browsers connect to) when it is given and
again when it is called, and the connection goes to an address that was checked (the name's next one when a
connection to the first cannot be opened, as the scanner's do). Delivery is a task of the
engine, retried with exponential backoff (procrastinate's RetryStrategy) when the receiver does not answer 2xx.

A delivery is bounded as a whole, not per read: one deadline (CALLBACK_TIMEOUT_SECONDS) covers the name's
check, the connection, the request and the answer's headers, and the answer's body is never read (only its
status matters). Callbacks run on the scans' workers: a receiver that drips its answer, or sends a huge one,
holds a worker at most that long and costs no memory. Async scans' callbacks and monitors' webhooks both
go through `deliver`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from websec_app.settings import Settings

if TYPE_CHECKING:
    from websec_app.scanner.fetch.resolve import Pinner

SIGNATURE_HEADER = "X-Websec-Signature"
#: The whole delivery's deadline (seconds): resolving, connecting, sending and the answer's headers.
CALLBACK_TIMEOUT_SECONDS = 10.0
CALLBACK_URL_MAX = 2048


class CallbacksUnavailable(Exception):
    """WEBSEC_CALLBACK_SECRET is not set: callbacks cannot be signed, so none are accepted."""


def callback_secret(settings: Settings, api_key_id: int) -> str:
    if not settings.callback_secret:
        raise CallbacksUnavailable("callbacks are not enabled on this server (WEBSEC_CALLBACK_SECRET)")
    message = f"websec-callback:{api_key_id}".encode()
    return hmac.new(settings.callback_secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encode(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


async def checked_address(url: str, settings: Settings) -> tuple[str, str]:
    """(host, the address to connect to first) for a callback URL; raises the scanner's TargetRefused (a private
    target, a port browsers refuse, or not http/https) or TargetUnreachable (no such name)."""
    host, pinner = await _checked(url, settings)
    return host, await pinner.pin(host)


async def _checked(url: str, settings: Settings) -> tuple[str, Pinner]:
    """The URL's host and the Pinner that resolved and guarded every address of it."""
    from websec_app.scanner.errors import TargetRefused
    from websec_app.scanner.fetch.guard import ensure_port_allowed, url_port
    from websec_app.scanner.fetch.resolve import Pinner, Resolver

    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname or len(url) > CALLBACK_URL_MAX:
        raise TargetRefused("The callback_url must be an http(s) URL of at most 2048 characters.")
    try:
        port = parts.port
    except ValueError:  # out of range: every delivery would fail on it
        port = 0
    if port == 0:  # urlsplit reads `:0` as port 0, which no server listens on (parse_target refuses it too)
        raise TargetRefused("The callback_url has an invalid port.")
    ensure_port_allowed(url_port(parts))
    pinner = Pinner(Resolver(settings), settings)
    await pinner.pin(parts.hostname)
    return parts.hostname, pinner


async def deliver(url: str, body: bytes, signature: str, settings: Settings) -> int:
    """POST `body` to `url` at its checked address (the name's next one when a connection there cannot be opened,
    as the scanner moves on: resolve.Pinner); the receiver's status. Raises on a refused or unreachable target, on
    transport errors and (TimeoutError) when the receiver has not answered within CALLBACK_TIMEOUT_SECONDS in all:
    the task is then retried. The answer's body is not read."""
    deadline = CALLBACK_TIMEOUT_SECONDS
    async with asyncio.timeout(deadline):
        return await _post(url, body, signature, settings, deadline)


async def _post(url: str, body: bytes, signature: str, settings: Settings, deadline: float) -> int:
    import ssl

    import httpx

    from websec_app.scanner.fetch.guard import url_port

    host, pinner = await _checked(url, settings)
    parts = urlsplit(url)
    port = url_port(parts)
    context = ssl.create_default_context(cafile=str(settings.ca_bundle) if settings.ca_bundle else None)
    headers = {
        "Host": parts.netloc.rsplit("@", 1)[-1],
        "Content-Type": "application/json",
        SIGNATURE_HEADER: signature,
        "User-Agent": settings.user_agent,
    }
    # A connection not made within the scanner's connect timeout leaves the rest of the deadline to the next address
    timeout = httpx.Timeout(deadline, connect=min(deadline, settings.limits.connect_seconds))
    async with httpx.AsyncClient(verify=context, trust_env=False, timeout=timeout) as client:

        async def post(address: str) -> int:
            netloc = f"[{address}]" if ":" in address else address
            target = f"{parts.scheme}://{netloc}:{port}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")
            async with client.stream(
                "POST", target, content=body, headers=headers, extensions={"sni_hostname": host}
            ) as response:
                # Only the status matters: the body is left unread and the connection closed with the stream.
                return response.status_code

        def not_opened(exc: Exception) -> bool | None:
            if not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) or isinstance(
                exc.__cause__, ssl.SSLError
            ):
                return None  # an answer, or a TLS failure: the receiver's, not its address's
            return isinstance(exc, httpx.ConnectTimeout)

        return await pinner.reach(host, port, post, not_opened)


__all__ = [
    "SIGNATURE_HEADER",
    "CallbacksUnavailable",
    "callback_secret",
    "checked_address",
    "deliver",
    "encode",
    "sign",
]
