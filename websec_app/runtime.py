"""Builds the one Runtime of a process (websec_app/usecases/runtime.py) and wires the task engine's
tasks to the use cases.

The composition roots call it: `websec_app/websec_app.py` (the Reflex app, which mounts the API),
`python -m websec_app serve-api` and the CLI's other commands; the API (`api_routes`), the web UI
(`websec_app/ui`) and the CLI receive what it built. Nothing below them imports this module: the use cases
take the `Runtime` type from `usecases/runtime.py`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .clock import Clock, clock_for
from .settings import Settings, get_settings
from .usecases.runtime import PdfRenderer, Runtime, Scanner

if TYPE_CHECKING:
    from .services.admission import ScanAdmission
    from .services.payments import PaymentService
    from .store import Database


def build_runtime(
    settings: Settings | None = None,
    *,
    database: Database | None = None,
    clock: Clock | None = None,
    scanner: Scanner | None = None,
    render_pdf: PdfRenderer | None = None,
    payments: PaymentService | None = None,
    admission: ScanAdmission | None = None,
    bounded: bool = True,
) -> Runtime:
    """The production parts for `settings` (from the environment when None); any part can be given instead.

    `bounded=False` builds no scan admission (scans unbounded), for tests that are not about it. The task
    engine opens nothing until it is started or a job is queued."""
    from .jobs.engine import JobEngine
    from .scanner import scan
    from .services.admission import ScanAdmission
    from .services.payments import build_payment_service
    from .services.pdf import render_scan_pdf
    from .store import database_for
    from .store.clients import parse_networks

    settings = settings or get_settings()
    database = database or database_for(settings.resolved_database_url)
    clock = clock or clock_for(settings)
    if admission is None and bounded:
        admission = ScanAdmission(settings.max_concurrent_scans, settings.scan_queue)
    engine = JobEngine(
        database,
        in_process_workers=settings.in_process_scan_workers,
        monitor_tick_seconds=settings.monitor_tick_seconds,
        service_now=clock,
    )
    runtime = Runtime(
        settings=settings,
        database=database,
        clock=clock,
        scanner=scanner or scan,
        render_pdf=render_pdf or render_scan_pdf,
        payments=payments or build_payment_service(settings, database, clock=clock),
        admission=admission,
        trusted_proxies=parse_networks(settings.trusted_proxies),
        jobs=engine,
    )
    from .usecases import monitors
    from .usecases.job_worker import (
        call_back,
        callback_given_up,
        delete_expired_jobs,
        end_abandoned_jobs,
        execute_job,
        redeliver_owed_callbacks,
    )

    engine.set_handlers(partial(execute_job, runtime), partial(call_back, runtime), partial(callback_given_up, runtime))
    engine.set_monitor_handlers(
        partial(monitors.tick, runtime, engine.submit_monitor_run), partial(monitors.execute_run, runtime)
    )
    engine.set_upkeep(
        sweep=partial(end_abandoned_jobs, runtime),
        prune=partial(delete_expired_jobs, runtime),
        redeliver=partial(redeliver_owed_callbacks, runtime),
    )
    return runtime


__all__ = ["build_runtime"]
