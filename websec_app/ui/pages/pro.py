"""`/pro`: sign in with the API key, see this month's usage, run Pro scans and download PDF reports."""

from __future__ import annotations

import reflex as rx

from websec_app.services.prices import Product

from ..components.common import grade_badge, section_card
from ..components.field import field_input, field_row_form
from ..components.layout import page, page_heading
from ..components.monitors import monitors_section
from ..components.scan import problem, progress, url_form
from ..purchases import price_text
from ..state.pro import ProState, RecentRow
from ..state.scan import ScanState


def sign_in_card() -> rx.Component:
    """The API key form (also on the site page, which needs the same sign-in)."""
    return section_card(
        rx.heading("Sign in with your API key", as_="h2", size="5"),
        rx.text(
            "Your key was emailed to you when you subscribed. It stays in this browser tab only (session storage) "
            "and is never put in a link.",
            size="2",
            color_scheme="gray",
        ),
        field_row_form(
            field_input(
                "API key",
                "api_key",
                placeholder="wsk_…",
                input_type="password",
                autocomplete="off",
                required=True,
                form="pro",
                error=ProState.key_error,
            ),
            submit="Sign in",
            loading=ProState.checking,
            test_id="pro-sign-in",
            on_submit=ProState.sign_in,
            reset_on_submit=True,
        ),
        rx.cond(
            ProState.problem != "",
            rx.callout(ProState.problem, icon="triangle-alert", color_scheme="red", role="alert", width="100%"),
        ),
        rx.text(
            "No key yet? ",
            rx.link("Subscribe to Pro", href="/checkout/pro"),
            f" ({price_text(Product.SUBSCRIPTION)}).",
            size="2",
            color_scheme="gray",
        ),
    )


def _usage() -> rx.Component:
    return section_card(
        rx.flex(
            rx.vstack(
                rx.text("Signed in as", size="2", color_scheme="gray"),
                rx.text(ProState.email, weight="bold", class_name="break-anywhere", data_testid="pro-email"),
                rx.text(ProState.plan, " plan · key ", rx.code(ProState.key_hint), size="2", color_scheme="gray"),
                spacing="1",
            ),
            rx.button("Sign out", on_click=ProState.sign_out, variant="outline", size="2", type="button"),
            justify="between",
            align="start",
            spacing="3",
            wrap="wrap",
        ),
        rx.vstack(
            rx.hstack(
                rx.text("Scans this month", weight="medium"),
                rx.spacer(),
                rx.text(rx.el.strong(ProState.used), " / ", ProState.limit, size="4", data_testid="pro-usage"),
                width="100%",
                align="baseline",
            ),
            rx.progress(value=ProState.usage_percent, max=100, aria_label="Scans used this month"),
            rx.text("Resets on ", ProState.resets, ".", size="2", color_scheme="gray", data_testid="pro-resets"),
            spacing="2",
            width="100%",
        ),
        data_testid="pro-account",
    )


def _recent_row(row: RecentRow) -> rx.Component:
    return rx.table.row(
        rx.table.cell(grade_badge(row.grade, size="small")),
        rx.table.cell(
            rx.vstack(
                rx.text(row.url, weight="medium", class_name="break-anywhere"),
                rx.text(row.kind, " · score ", row.score, " · ", row.when, size="1", color_scheme="gray"),
                spacing="0",
            )
        ),
        rx.table.cell(rx.cond(row.link != "", rx.link("View", href=row.link), rx.text("API", color_scheme="gray"))),
        align="center",
    )


def _recent() -> rx.Component:
    return section_card(
        rx.heading("Recent scans", as_="h2", size="5"),
        rx.cond(
            ProState.recent.length() > 0,  # type: ignore[attr-defined]
            rx.table.root(
                rx.table.header(
                    rx.table.row(
                        rx.table.column_header_cell("Grade"),
                        rx.table.column_header_cell("Site"),
                        rx.table.column_header_cell(rx.el.span("Report", class_name="visually-hidden")),
                    )
                ),
                rx.table.body(rx.foreach(ProState.recent, _recent_row)),
                width="100%",
                size="1",
                data_testid="pro-recent",
            ),
            rx.text("No scans yet this month.", size="2", color_scheme="gray"),
        ),
    )


def _tools() -> rx.Component:
    return rx.vstack(
        section_card(
            rx.heading("Pro scan", as_="h2", size="5"),
            rx.text("Every section, with the fix for each finding. Uses one scan.", size="2", color_scheme="gray"),
            url_form("pro", ScanState.pro_scan, button="Run Pro scan"),
            progress("pro"),
            problem("pro"),
        ),
        section_card(
            rx.heading("PDF report", as_="h2", size="5"),
            rx.text(
                "A Pro scan as a PDF to hand to a client or a manager; the client name (up to 80 characters) goes "
                "in its header. Uses one scan.",
                size="2",
                color_scheme="gray",
            ),
            url_form(
                "pdf",
                ScanState.pro_pdf,
                button="Download PDF",
                icon="file-down",
                extra=(
                    rx.box(
                        field_input(
                            "Client name (optional)",
                            "client_name",
                            placeholder="ACME Ltd",
                            max_length=80,
                            form="pdf",
                        ),
                        flex="1",
                        min_width="0",
                        width="100%",
                    ),
                ),
            ),
            progress("pdf"),
            problem("pdf"),
        ),
        monitors_section(),
        _recent(),
        spacing="5",
        width="100%",
    )


def pro() -> rx.Component:
    return page(
        page_heading("Pro", "Full scans with fixes, PDF reports and the API: 50 scans each calendar month."),
        rx.cond(ProState.signed_in, rx.vstack(_usage(), _tools(), spacing="5", width="100%"), sign_in_card()),
        width="860px",
    )
