"""`python -m websec_app serve-api --host H --port P`: the JSON API alone, without the UI.

For API-only deployments, the benchmark and end-to-end tests. The database schema is
migrated before the server starts accepting requests.
"""

from __future__ import annotations

import argparse
import sys

from ..settings import SettingsError, get_settings


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("serve-api", help="serve the JSON API (no UI) with uvicorn")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--no-access-log", action="store_true", help="do not log every request")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..store import database_for

    try:
        settings = get_settings()
    except SettingsError as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    # Migrate once here, before any worker starts (workers would serialise on the lock anyway).
    database = database_for(settings.resolved_database_url)
    database.ensure_schema()
    database.dispose()
    uvicorn.run(
        "api_routes:create_api",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        access_log=not args.no_access_log,
        # The API decides itself whom to believe about X-Forwarded-For (WEBSEC_TRUSTED_PROXIES); uvicorn's own
        # handling would trust it from 127.0.0.1 by default and rewrite the client address before we see it.
        proxy_headers=False,
        server_header=False,
    )
    return 0
