"""Reflex configuration only. Secrets and service settings come from the environment (websec_app/settings.py).

The port is not set here: `make run` passes it (`PORT`, default 3000) and in prod mode Reflex serves the
UI, its event websocket and our API (`/api/...`, `/docs`) on that one port.
"""

import reflex as rx

from websec_app.settings import get_settings

_settings = get_settings()

config = rx.Config(
    app_name="websec_app",
    # No usage data leaves the machine (and the network may not allow it anyway).
    telemetry_enabled=False,
    # The badge is on by default in prod builds; a security report page is not an advert.
    show_built_with_reflex=False,
    # The sitemap plugin would publish localhost URLs (deploy_url); we have one public page.
    disable_plugins=[rx.plugins.SitemapPlugin],
    # Reflex answers CORS, with credentials, for these origins on every route (our API included); its default
    # "*" echoes any Origin, which our own `cors` check grades critical (tests/ui/test_self_grade.py). The UI,
    # its websocket and the API share one origin (`make run` serves them on one port), so no origin needs
    # CORS. In production socket.io accepts the UI's websocket only from the public address (WEBSEC_BASE_URL
    # must be the address users browse). In development the empty list sends no CORS headers at all and
    # switches socket.io's Origin check off (engineio: `cors_allowed_origins=[]`), so the UI still works
    # whether it is browsed at localhost, 127.0.0.1 or a LAN address.
    cors_allowed_origins=[_settings.base_url] if _settings.is_production else [],
    # Several app processes share each browser tab's state through Redis when REDIS_URL is set (Reflex then
    # picks its redis state manager: reflex/istate/manager/__init__.py). Reflex itself only reads
    # REFLEX_REDIS_URL; unset, state stays in this process's memory, right for the single-process `make run`.
    redis_url=_settings.redis_url or None,
    plugins=[
        rx.plugins.RadixThemesPlugin(
            theme=rx.theme(accent_color="indigo", gray_color="slate", radius="medium", appearance="light")
        )
    ],
)
