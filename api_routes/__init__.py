"""The JSON API (spec section 4): `create_api()` builds it, mounted into Reflex or served alone.

api = create_api(runtime=runtime)                   # the process's runtime, shared with the web UI
api = create_api(settings, scanner=fake, clock=c)   # tests: a runtime of these settings and parts
"""

from __future__ import annotations

import faulthandler
import gc
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import IO, Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from websec_app.runtime import build_runtime
from websec_app.services.email import OutboxWorker
from websec_app.services.payments import PaymentService
from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.usecases.runtime import Runtime

from .auth import api_key_header, api_key_query, bad_body_error
from .context import Clock, PdfRenderer, Scanner
from .errors import install_error_handlers
from .middleware import HeadAsGet, KeyPolling, RequestLimits, SecurityHeaders, install_access_log_redaction
from .openapi import add_body_limits
from .routes import ROUTERS, docs_ui, known_routes

DESCRIPTION = """\
Scans a public website and reports on its security headers, TLS, DNS, cookies, cross-origin isolation,
CORS, security.txt, server version disclosure and page content, with a grade (A+ to F) and a score (0-100).

**Authentication.** `POST /api/scan` needs no key (per-IP daily quota, reset at midnight UTC; or a
one-time scan token). Pro endpoints take the API key in the `X-API-Key` header (`GET /api/usage`: in the
`key` query parameter). Missing key: 401. Invalid, unknown, revoked or inactive key: 403.

**Quotas.** Pro: 50 scans per calendar month (UTC), reset on the 1st; `X-Scans-Remaining` tells what is
left after each Pro scan or PDF. A scan that fails (400, 502) consumes nothing. `verify-key` and `usage`
consume nothing.

**Errors.** Every error is `{"error": "<sentence>"}`: 400 malformed body, wrong types, invalid URL or
scheme, private or loopback target; 401; 403 (also unknown, expired or used tokens); 429 quota used up;
500 (PDF generation failed, or an unexpected error); 502 target unreachable; 503 the scanner is at capacity
(retry after `Retry-After` seconds; nothing was counted).
"""


def create_api(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    scanner: Scanner | None = None,
    clock: Clock | None = None,
    database: Database | None = None,
    render_pdf: PdfRenderer | None = None,
    payments: PaymentService | None = None,
) -> FastAPI:
    """A fresh FastAPI app with every route of the spec, over `runtime` (the process's one, which the web UI
    shares when mounted) or, without one, a runtime built from `settings` and the parts given."""
    if runtime is None:
        runtime = build_runtime(
            settings, database=database, clock=clock, scanner=scanner, render_pdf=render_pdf, payments=payments
        )
    context = runtime
    api = FastAPI(
        title="websec API",
        version="1.0",
        description=DESCRIPTION,
        # /docs and /redoc: docs_ui.router, Swagger UI and ReDoc served from this origin (FastAPI's use a CDN).
        docs_url=None,
        redoc_url=None,
        lifespan=_lifespan,
    )
    api.include_router(docs_ui.router)  # before ROUTERS: its assets are under /api, ahead of the catch-all
    api.state.runtime = context
    install_error_handlers(api, bad_body=bad_body_error)
    for router in ROUTERS:
        api.include_router(router)
    api.state.known_routes = known_routes(ROUTERS)
    api.openapi = lambda: _openapi(api)  # type: ignore[method-assign]
    _wrap_outermost(api, context)
    install_access_log_redaction()
    return api


def _wrap_outermost(api: FastAPI, context: Runtime) -> None:
    """Security headers around Starlette's whole middleware stack, so 500s from ServerErrorMiddleware get
    them too (`add_middleware` would sit inside it); in front of everything, the raw ASGI answer to the
    two polled key endpoints (`key_polling`), then HEAD served as GET without content (`head_requests`);
    outermost, the header and body bounds (`request_limits`). Mounted into Reflex, this stack also serves the UI."""
    build = api.build_middleware_stack
    settings = context.settings
    get_paths = [pattern for pattern, methods in known_routes((docs_ui.router, *ROUTERS)) if "GET" in methods]

    def build_with_headers() -> Any:
        stack = SecurityHeaders(build(), production=settings.is_production, base_url=settings.base_url)
        return RequestLimits(HeadAsGet(KeyPolling(stack, context), get_paths), production=settings.is_production)

    api.build_middleware_stack = build_with_headers  # type: ignore[method-assign]


#: A stop still running after this long leaves every thread's stack in the log, a second before serve-api's
#: worker would be killed (cli/serve_api_cmd.py SHUTDOWN_GRACE_SECONDS): without it, a stuck shutdown says
#: only that it was killed.
STOP_STACKS_AFTER_SECONDS = 3.0
STOP_STACKS_HEADER = "The API's stop is still running after {seconds:g} s. Every thread's stack:\n"


@asynccontextmanager
async def _lifespan(api: FastAPI) -> AsyncIterator[None]:
    """Start-up when served alone (Reflex does not run a mounted app's lifespan; nothing here is required).

    Everything alive at start-up (modules, routes, models) lives for the whole process; moving it out
    of the garbage collector's view keeps full collections short, which removed ~100 ms pauses from
    the p99 latency under load (bench/api_bench.py; https://docs.python.org/3/library/gc.html#gc.freeze).
    """
    gc.collect()
    gc.freeze()
    # Served alone (serve-api), this process delivers the outbox: first whatever an earlier run left
    # unsent, then every email queued from now on (mounted in Reflex, websec_app.py registers
    # `outbox_lifespan` instead).
    context: Runtime = api.state.runtime
    worker = OutboxWorker(context.payments.outbox).start() if context.payments is not None else None
    await context.jobs.start()  # its in-process workers (and the periodic monitor tick) start with the server
    try:
        yield
    finally:
        with _stacks_if_the_stop_overruns():
            await context.jobs.stop()
            if worker is not None:
                worker.stop()


@contextmanager
def _stacks_if_the_stop_overruns() -> Iterator[None]:
    """Write every thread's stack to stderr if the stop is still running after STOP_STACKS_AFTER_SECONDS;
    nothing once it has ended.

    A timer thread takes the stacks holding the GIL (`faulthandler.dump_traceback`), so no thread runs while
    they are read. faulthandler's own timer (`dump_traceback_later`) reads them without the GIL, from a
    thread that blocks every signal: armed here and left armed, it fired in test processes whose threads
    were busy (schemathesis runs this lifespan in the test's process), read a frame being freed, and the
    process died of a SIGSEGV that nothing could report (three CI runs, 2026-11-27)."""
    timer = threading.Timer(STOP_STACKS_AFTER_SECONDS, _write_stacks, args=(sys.stderr, STOP_STACKS_AFTER_SECONDS))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _write_stacks(stream: IO[str], seconds: float) -> None:
    try:
        stream.write(STOP_STACKS_HEADER.format(seconds=seconds))
        stream.flush()
        faulthandler.dump_traceback(file=stream, all_threads=True)
    except (AttributeError, OSError, ValueError):  # a stderr without a file descriptor: nothing to write to
        pass


def _openapi(api: FastAPI) -> dict[str, Any]:
    """The generated schema, minus FastAPI's 422 responses (validation errors are 400 here)."""
    if api.openapi_schema:
        return api.openapi_schema
    schema = get_openapi(title=api.title, version=api.version, description=api.description, routes=api.routes)
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, Mapping):
                operation.get("responses", {}).pop("422", None)
    add_body_limits(schema)
    components = schema.setdefault("components", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.get("schemas", {}).pop(name, None)
    # verify-key and usage read their key without a FastAPI dependency (see keys.py); name the schemes here.
    schemes = components.setdefault("securitySchemes", {})
    for scheme in (api_key_header, api_key_query):
        schemes[scheme.scheme_name] = scheme.model.model_dump(mode="json", by_alias=True, exclude_none=True)
    api.openapi_schema = schema
    return schema


__all__ = ["ROUTERS", "create_api"]
