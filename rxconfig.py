"""Reflex configuration only. Secrets and service settings come from the environment (websec_app/settings.py).

The port is not set here: `make run` passes it (`PORT`, default 3000) and in prod mode Reflex serves the
UI, its event websocket and our API (`/api/...`, `/docs`) on that one port.
"""

import reflex as rx

config = rx.Config(
    app_name="websec_app",
    # No usage data leaves the machine (and the network may not allow it anyway).
    telemetry_enabled=False,
    # The badge is on by default in prod builds; a security report page is not an advert.
    show_built_with_reflex=False,
    # The sitemap plugin would publish localhost URLs (deploy_url); we have one public page.
    disable_plugins=[rx.plugins.SitemapPlugin],
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="indigo", radius="medium"))],
)
