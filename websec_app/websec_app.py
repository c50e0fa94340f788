"""The Reflex app, and the composition root of `make run`: builds the process's one Runtime, mounts the JSON
API over it into the one web server, and registers the pages, whose state reaches the same runtime
(`ui/runtime.py`).

Reflex loads this module by name (`app_name` in rxconfig.py); nothing else imports it (STYLE.md).
The pages, their components and state live in `websec_app/ui/`.
"""

from __future__ import annotations

import reflex as rx

from api_routes import create_api
from websec_app.jobs.engine import engine_lifespan
from websec_app.runtime import build_runtime
from websec_app.services.email import outbox_lifespan
from websec_app.settings import get_settings
from websec_app.ui import register_pages

# Fail at start on a bad setting, and log the private-targets warning once (settings.py).
runtime = build_runtime(get_settings())

app = rx.App(
    api_transformer=create_api(runtime=runtime),
    head_components=[
        rx.el.link(rel="icon", href="/favicon.svg", type="image/svg+xml"),
        rx.el.meta(name="theme-color", content="#3e63dd"),
    ],
    stylesheets=["/styles.css"],
)
register_pages(app)
# Emails (tokens, keys, reports) are queued in the store and sent by this worker, with retries (services/README.md).
if runtime.payments is not None:
    app.register_lifespan_task(outbox_lifespan, outbox=runtime.payments.outbox)
# The task engine's in-process workers run scans and the periodic monitor tick from start-up (jobs/engine.py).
app.register_lifespan_task(engine_lifespan, engine=runtime.jobs)
