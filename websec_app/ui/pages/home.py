"""Home: paste a URL, watch the scan, land on the report."""

from __future__ import annotations

import reflex as rx

from websec_app.scanner import SECTIONS

from ..components.layout import page
from ..components.scan import problem, progress, url_form
from ..state.scan import ScanState

#: An icon per report section; titles, summaries and order come from the section table (scanner.SECTIONS).
_ICONS = {
    "headers": "file-lock-2",
    "tls": "lock",
    "dns": "globe",
    "cookies": "cookie",
    "cross_origin": "shield",
    "security_txt": "mail",
    "cors": "share-2",
    "server_fingerprint": "server",
    "page_analysis": "file-code",
    "redirection": "arrow-right-left",
}
_CHECKS = tuple(
    (_ICONS.get(s.key, "circle-check"), s.title, f"{s.summary} (Pro)" if s.pro_only else s.summary) for s in SECTIONS
)


def _check(icon: str, title: str, text: str) -> rx.Component:
    return rx.hstack(
        rx.center(
            rx.icon(icon, size=20, color=rx.color("indigo", 11), aria_hidden="true"),
            width="2.5rem",
            height="2.5rem",
            border_radius="var(--radius-3)",
            background_color=rx.color("indigo", 3),
            flex_shrink="0",
        ),
        rx.vstack(
            rx.heading(title, as_="h3", size="3"),
            rx.text(text, size="2", color_scheme="gray"),
            spacing="1",
        ),
        align="start",
        spacing="3",
    )


def home() -> rx.Component:
    return page(
        rx.vstack(
            rx.badge("Free: no sign-up", color_scheme="indigo", variant="soft", size="2"),
            rx.heading(
                "How well does your website protect its visitors?",
                as_="h1",
                size={"initial": "7", "sm": "9"},
                weight="bold",
                line_height="1.1",
            ),
            rx.text(
                "One scan checks headers, TLS, DNS, cookies, CORS and page content, grades the site from A+ to F "
                "and tells you what to fix first.",
                size="4",
                color_scheme="gray",
            ),
            rx.card(
                rx.vstack(
                    url_form("free", ScanState.free_scan),
                    rx.text(
                        "Free scans are limited per network each day. Only public websites can be scanned.",
                        size="1",
                        color_scheme="gray",
                    ),
                    spacing="2",
                    width="100%",
                ),
                size="3",
                width="100%",
            ),
            progress("free"),
            problem("free"),
            spacing="4",
            width="100%",
            padding_y="1rem",
        ),
        rx.vstack(
            rx.heading("What a scan checks", as_="h2", size="6"),
            rx.grid(
                *[_check(*item) for item in _CHECKS],
                columns={"initial": "1", "sm": "2", "md": "3"},
                spacing="5",
                width="100%",
            ),
            spacing="4",
            width="100%",
        ),
        rx.card(
            rx.flex(
                rx.vstack(
                    rx.heading("Need the fixes, a PDF or an API?", as_="h2", size="5"),
                    rx.text(
                        "Pro: 50 full scans a month with fixes, PDF reports and API access. Or buy a single full "
                        "scan, or a compliance report mapped to OWASP, PCI-DSS, GDPR and ISO 27001.",
                        size="2",
                        color_scheme="gray",
                    ),
                    spacing="1",
                    flex="1",
                ),
                rx.link(rx.button("See prices", size="3"), href="/pricing", underline="none"),
                spacing="4",
                align="center",
                direction={"initial": "column", "sm": "row"},
            ),
            size="3",
            width="100%",
        ),
    )
