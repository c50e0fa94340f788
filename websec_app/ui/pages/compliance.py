"""`/compliance-report#token=wsc_...&url=...&email=...`: generate the paid compliance report and have it emailed.

The purchase email and the checkout link here with the form's values in the fragment (never sent to a server;
`state/scan.py` reads it), or `?token=` from older emails.
"""

from __future__ import annotations

import reflex as rx

from ..components.field import field_input
from ..components.layout import page, page_heading
from ..components.scan import problem, progress
from ..state.scan import ScanState


def compliance() -> rx.Component:
    return page(
        page_heading(
            "Compliance report",
            "A full scan mapped to OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32 and ISO/IEC 27001:2022, emailed to "
            "you as a PDF. Your token works once; if the scan or the email fails it stays valid.",
        ),
        rx.card(
            rx.form(
                rx.vstack(
                    field_input(
                        "Compliance report token",
                        "token",
                        placeholder="wsc_…",
                        default_value=ScanState.compliance_token,
                        hint="From your purchase email.",
                        form="compliance",
                        required=True,
                        error=ScanState.field_errors["compliance-token"],
                    ),
                    field_input(
                        "Website address",
                        "url",
                        placeholder="https://example.com",
                        default_value=ScanState.target,
                        autocomplete="url",
                        form="compliance",
                        required=True,
                        error=ScanState.field_errors["compliance-url"],
                    ),
                    field_input(
                        "Email the report to",
                        "email",
                        placeholder="you@example.com",
                        input_type="email",
                        default_value=ScanState.compliance_email,
                        autocomplete="email",
                        form="compliance",
                        required=True,
                        error=ScanState.field_errors["compliance-email"],
                    ),
                    rx.button(
                        rx.icon("file-check", aria_hidden="true"),
                        "Generate and email the report",
                        type="submit",
                        size="3",
                        loading=ScanState.running & (ScanState.kind == "compliance"),
                        data_testid="compliance-submit",
                        # On a phone the label takes two lines: the button grows instead of cutting it.
                        height="auto",
                        min_height="var(--space-7)",
                        padding_y="var(--space-2)",
                    ),
                    spacing="4",
                    align="stretch",
                    width="100%",
                ),
                on_submit=ScanState.compliance_report,
                reset_on_submit=False,
                no_validate=True,  # the page says what is wrong, next to the field (components/field.py)
                width="100%",
            ),
            size="3",
            width="100%",
        ),
        progress("compliance"),
        problem("compliance"),
        rx.cond(
            (ScanState.kind == "compliance") & (ScanState.done_text != ""),
            rx.callout(ScanState.done_text, icon="mail-check", color_scheme="green", data_testid="compliance-done"),
        ),
        rx.text(
            "No token yet? ",
            rx.link("Buy a compliance report", href="/checkout/compliance-report"),
            ".",
            size="2",
            color_scheme="gray",
        ),
        width="720px",
    )
