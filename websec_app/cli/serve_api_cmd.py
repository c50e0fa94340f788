"""`python -m websec_app serve-api --host H --port P`: the JSON API alone, without the UI.

For API-only deployments, the benchmark and end-to-end tests. The database schema is
migrated before the server starts accepting requests.

Served by granian, the server Reflex itself runs on (`make run`), so the API behaves the same
alone and mounted. Granian's Rust HTTP layer on uvloop, one single-threaded runtime per worker,
gave the polled key endpoints about a third more requests per second and a lower p99 than
uvicorn with httptools (`python -m bench.api_bench`, docs/performance.md). Granian never
rewrites the client address from X-Forwarded-For (the API decides whom to believe,
WEBSEC_TRUSTED_PROXIES) and sends no `Server` header.
"""

from __future__ import annotations

import argparse
import sys

from ..settings import SettingsError, get_settings

#: The access log line: uvicorn's shape, with the request target whose secrets `RedactSecrets` removed.
ACCESS_LOG_FORMAT = '%(addr)s - "%(method)s %(target)s %(protocol)s" %(status)d %(dt_ms).1fms'
#: Seconds a worker gets to finish after SIGTERM before granian kills it. Without it granian waits for a
#: busy worker forever (issue 12: a server analysing a hostile page ignored SIGTERM). Below the 10 s that
#: Docker and Kubernetes allow before their own SIGKILL; a page analysis is bounded well under it.
SHUTDOWN_GRACE_SECONDS = 4


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("serve-api", help="serve the JSON API (no UI) with granian")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--no-access-log", action="store_true", help="do not log every request")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces, Loops, RuntimeModes
    from granian.log import LogLevels

    from ..store import database_for
    from .granian_server import Granian

    try:
        settings = get_settings()
    except SettingsError as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    # Migrate once here, before any worker starts (workers would serialise on the lock anyway).
    database = database_for(settings.resolved_database_url)
    database.ensure_schema()
    database.dispose()
    Granian(
        "api_routes:create_api",
        factory=True,
        address=args.host,
        port=args.port,
        interface=Interfaces.ASGI,
        workers=args.workers,
        loop=Loops.uvloop,
        runtime_mode=RuntimeModes.st,
        websockets=False,
        log_level=LogLevels(args.log_level),
        log_access=not args.no_access_log,
        log_access_format=ACCESS_LOG_FORMAT,
        workers_kill_timeout=SHUTDOWN_GRACE_SECONDS,
    ).serve()
    return 0
