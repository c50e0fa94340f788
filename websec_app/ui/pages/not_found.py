"""The page for an address the site does not have: the site's own frame and navigation, and where to go.

Reflex renders it for every path no page matches (route "404"); in prod the server answers such a path
with status 404 (reflex/utils/precompressed_staticfiles.py: a path outside the route table gets 404.html).
"""

from __future__ import annotations

import reflex as rx

from ..components.layout import page, page_heading

#: Where someone who followed a stale link most likely wanted to go.
_DESTINATIONS = (
    ("Scan a website", "/", "scan-search", "Get a grade and what to fix first."),
    ("Pricing", "/pricing", "tag", "Pro, one-time scans and compliance reports."),
    ("API", "/api-docs", "code", "The JSON API with curl examples."),
)


def _destination(label: str, path: str, icon: str, text: str) -> rx.Component:
    return rx.link(
        rx.card(
            rx.hstack(
                rx.icon(icon, size=20, color=rx.color("indigo", 11), aria_hidden="true", flex_shrink="0"),
                rx.vstack(
                    rx.text(label, weight="bold", size="3", color=rx.color("gray", 12)),
                    rx.text(text, size="2", color=rx.color("gray", 11)),
                    spacing="1",
                ),
                align="start",
                spacing="3",
            ),
            size="2",
            width="100%",
            height="100%",
        ),
        href=path,
        underline="none",
        width="100%",
        height="100%",
        display="block",
    )


def not_found() -> rx.Component:
    return page(
        rx.vstack(
            rx.text("Error 404", size="2", weight="medium", color=rx.color("indigo", 11)),
            page_heading(
                "Page not found",
                "There is no page at this address. The link may be mistyped or out of date; "
                "a report link must be copied whole.",
            ),
            spacing="2",
            data_testid="not-found",
        ),
        rx.grid(
            *[_destination(*item) for item in _DESTINATIONS],
            columns={"initial": "1", "sm": "3"},
            spacing="4",
            width="100%",
        ),
    )
