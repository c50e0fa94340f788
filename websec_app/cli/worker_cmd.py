"""`python -m websec_app worker [--concurrency N]`: run scan jobs of the task engine (issue 16).

Workers and web processes share the queue through WEBSEC_DATABASE_URL (PostgreSQL): start as many workers,
on as many machines, as the scans need (`docker compose up --scale worker=N`). Each registers its
concurrency as the cluster's capacity, which the web processes' admission divides the queue by. SIGTERM or
SIGINT: stop taking jobs, finish the running ones, exit. A worker killed outright loses nothing: its jobs
go back in the queue once its heartbeat stops (websec_app/jobs/engine.py).

Exit codes: 0 stopped; 2 bad configuration (or no shared queue: SQLite runs its workers in the web process).
"""

from __future__ import annotations

import argparse
import sys

from ..settings import SettingsError, get_settings

#: Scans a worker runs at once by default: a scan mostly waits on the network (settings.py explains the 8).
DEFAULT_CONCURRENCY = 8


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("worker", help="run scan jobs from the shared queue (PostgreSQL)")
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULT_CONCURRENCY, help=f"scans at once (default {DEFAULT_CONCURRENCY})"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    import uvloop

    from ..runtime import build_runtime

    if args.concurrency < 1:
        print("--concurrency must be at least 1", file=sys.stderr)
        return 2
    try:
        settings = get_settings()
    except SettingsError as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("websec_app").setLevel(logging.INFO)
    # This process only works: no scans of its own beyond --concurrency, whatever WEBSEC_SCAN_WORKERS says.
    runtime = build_runtime(settings.with_overrides(scan_workers=0))
    engine = runtime.jobs
    if not engine.distributed:
        print("A worker needs a shared queue: set WEBSEC_DATABASE_URL to PostgreSQL.", file=sys.stderr)
        return 2
    runtime.database.ensure_schema()

    async def work() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, task.cancel)
        try:
            await engine.run_worker(args.concurrency)
        except asyncio.CancelledError:
            pass

    uvloop.run(work())
    runtime.database.dispose()
    return 0
