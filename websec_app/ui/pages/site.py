"""`/site?url=...`: one site's kept scans for a Pro subscriber: the score over time, the latest diff, each report.

The monitor alert emails link here. Without a key in this tab the page asks for it, as the Pro area does.
"""

from __future__ import annotations

import reflex as rx

from ..components.common import section_card
from ..components.history import history_table, latest_diff, score_chart
from ..components.layout import page
from ..components.scan import problem, progress, url_form
from ..state.pro import ProState
from ..state.scan import ScanState
from ..state.site import SiteState
from .pro import sign_in_card


def _empty() -> rx.Component:
    return section_card(
        rx.heading("No kept scans yet", as_="h2", size="5"),
        rx.text(
            "Nothing is kept for ",
            rx.el.strong(SiteState.url, class_name="break-anywhere"),
            " yet. Run a Pro scan now to start its history (uses one scan), or monitor it from the ",
            rx.link("Pro area", href="/pro", underline="always"),
            ".",
            size="2",
            data_testid="site-empty",
        ),
        url_form("pro", ScanState.pro_scan, button="Run Pro scan", url_default=SiteState.url),
        progress("pro"),
        problem("pro"),
    )


def _history() -> rx.Component:
    return rx.vstack(
        section_card(score_chart()),
        latest_diff(),
        history_table(),
        spacing="5",
        width="100%",
    )


def _signed_in() -> rx.Component:
    return rx.box(
        rx.cond(
            SiteState.problem != "",
            rx.callout(
                SiteState.problem, icon="triangle-alert", color_scheme="red", role="alert", data_testid="site-problem"
            ),
            rx.cond(
                SiteState.loaded,
                rx.cond(SiteState.total > 0, _history(), _empty()),
                rx.text("Loading the history…", size="2", color_scheme="gray", role="status"),
            ),
        ),
        rx.text(
            "Signed in as ",
            ProState.email,
            ". ",
            rx.link("Back to the Pro area", href="/pro", underline="always"),
            size="2",
            color_scheme="gray",
            margin_top="1.5rem",
        ),
        # After the sign-in form of this page (on_load has run before it).
        on_mount=SiteState.open_page,
        width="100%",
    )


def site() -> rx.Component:
    return page(
        rx.vstack(
            rx.heading("Site history", as_="h1", size="8", weight="bold"),
            rx.text(
                rx.cond(SiteState.url != "", SiteState.url, SiteState.asked),
                size="4",
                color_scheme="gray",
                class_name="break-anywhere",
                data_testid="site-url",
            ),
            spacing="2",
        ),
        rx.cond(ProState.signed_in, _signed_in(), sign_in_card()),
        width="860px",
    )
