"""The API's routes, one module per group of endpoints; `ROUTERS` is the one list create_api includes.

scans (scan, Pro scan, PDF), keys (verify-key, usage), history (a subscriber's kept scans, their diffs, the
badge), purchases (pay, verify-one-time, generate), webhooks, sandbox (development checkouts), service
(health, security.txt, the /api catch-all) and docs_ui (/docs, /redoc). Each route translates HTTP to one use
case (`websec_app/usecases`) and back.
"""

from __future__ import annotations

from . import docs_ui, history, jobs, keys, monitors, purchases, sandbox, scans, service, webhooks
from .service import known_routes

#: Every router, in the order the spec lists the endpoints; the /api catch-all last.
ROUTERS = (
    scans.router,
    jobs.router,
    keys.router,
    history.router,
    monitors.router,
    purchases.router,
    webhooks.router,
    sandbox.router,
    service.router,
    service.fallback,
)

__all__ = ["ROUTERS", "docs_ui", "known_routes"]
