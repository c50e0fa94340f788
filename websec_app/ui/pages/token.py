"""`/one-time-scan#token=wst_...`: the page the buyer's email and the checkout link to; it runs the paid scan.

The token comes in the fragment (never sent to a server; `state/scan.py` reads it), or `?token=` from older
emails; the form is filled with it.
"""

from __future__ import annotations

import reflex as rx

from websec_app.services.prices import Product

from ..components.field import field_input
from ..components.layout import page, page_heading
from ..components.scan import problem, progress, url_form
from ..purchases import price_text
from ..state.scan import ScanState


def token_page() -> rx.Component:
    return page(
        page_heading(
            "Your one-time scan",
            "A full scan with every section and the fix for each finding. The token works once, within 24 hours "
            "of purchase; a scan that cannot reach the site does not use it up.",
        ),
        rx.card(
            url_form(
                "token",
                ScanState.token_scan,
                button="Run my full scan",
                url_default=ScanState.target,
                extra=(
                    rx.box(
                        field_input(
                            "One-time token",
                            "token",
                            placeholder="wst_…",
                            default_value=ScanState.token,
                            hint="From your purchase email.",
                            required=True,
                            form="token",
                            error=ScanState.field_errors["token-token"],
                        ),
                        flex="1",
                        min_width="0",
                        width="100%",
                    ),
                ),
            ),
            size="3",
            width="100%",
        ),
        progress("token"),
        problem("token"),
        rx.text(
            "No token yet? ",
            rx.link("Buy a one-time scan", href="/checkout/one-time-scan"),
            f" for {price_text(Product.ONE_TIME_SCAN)}.",
            size="2",
            color_scheme="gray",
        ),
        width="760px",
    )
