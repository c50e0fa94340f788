"""`/checkout/<product>` and the return pages `/checkout/success` and `/checkout/cancelled`.

Every paid checkout ends with a button to where the purchase is used (issue 15): `/pro`, the one-time scan
page or the compliance form, with the token in the link's fragment when this tab has it (`CheckoutState.next_*`).
"""

from __future__ import annotations

import reflex as rx

from ..components.common import problem_callout, section_card
from ..components.field import field_input
from ..components.layout import page, page_heading
from ..purchases import offers
from ..state.checkout import CheckoutState, leave, open_razorpay
from .pricing import currency_switch

_PRODUCT_NAMES = {offer.product: offer for offer in offers()}


def _summary() -> rx.Component:
    """Name, description and price of the page's product (from the price table, chosen by the state)."""
    cases = [
        (
            offer.product,
            rx.vstack(
                rx.heading(offer.name, as_="h1", size="8"),
                rx.text(offer.description, size="3", color_scheme="gray"),
                rx.text(
                    rx.cond(CheckoutState.currency == "INR", offer.inr, offer.usd),
                    size="7",
                    weight="bold",
                    data_testid="checkout-price",
                ),
                spacing="2",
            ),
        )
        for offer in _PRODUCT_NAMES.values()
    ]
    return rx.match(
        CheckoutState.product,
        *cases,
        rx.cond(
            CheckoutState.product == "",
            page_heading("Checkout", "Choose a product on the pricing page."),
            rx.fragment(),
        ),
    )


def _form() -> rx.Component:
    return section_card(
        currency_switch(),
        rx.cond(
            CheckoutState.sandbox,
            rx.callout(
                "SANDBOX: this server has no payment keys for this provider, so checkout goes to a local test page. "
                "No real money moves.",
                icon="flask-conical",
                color_scheme="amber",
                data_testid="sandbox-notice",
            ),
        ),
        rx.form(
            rx.vstack(
                field_input(
                    "Email address",
                    "email",
                    placeholder="you@example.com",
                    input_type="email",
                    required=True,
                    autocomplete="email",
                    hint="Where your token, key or report is sent.",
                    form="checkout",
                    error=CheckoutState.field_errors["checkout-email"],
                ),
                rx.cond(
                    CheckoutState.product == "compliance_report",
                    field_input(
                        "Website to assess",
                        "url",
                        placeholder="https://example.com",
                        autocomplete="url",
                        required=True,
                        form="checkout",
                        error=CheckoutState.field_errors["checkout-url"],
                    ),
                ),
                rx.button(
                    rx.icon("lock", aria_hidden="true"),
                    "Pay with ",
                    CheckoutState.provider_label,
                    type="submit",
                    size="3",
                    loading=CheckoutState.busy,
                    data_testid="pay",
                ),
                spacing="4",
                align="stretch",
                width="100%",
            ),
            on_submit=CheckoutState.pay,
            reset_on_submit=False,
            no_validate=True,  # the page says what is wrong, next to the field (components/field.py)
            width="100%",
        ),
        rx.text(
            "INR payments open Razorpay's secure window on this page; USD payments continue on Stripe's checkout page. "
            "We never see your card details.",
            size="1",
            color_scheme="gray",
        ),
        problem_callout("payment", CheckoutState.problem_title, CheckoutState.problem_text),
    )


def next_step() -> rx.Component:
    """The button to where the purchase is used, and how to get the token there when the link has none."""
    return rx.cond(
        CheckoutState.next_href != "",
        rx.vstack(
            rx.link(
                rx.button(rx.icon("arrow-right", aria_hidden="true"), CheckoutState.next_label, size="3"),
                href=CheckoutState.next_href,
                underline="none",
                data_testid="next-step",
            ),
            rx.cond(
                CheckoutState.next_note != "",
                rx.text(CheckoutState.next_note, size="2", color_scheme="gray", data_testid="next-note"),
            ),
            spacing="2",
            align="start",
        ),
    )


def _done() -> rx.Component:
    """After a payment confirmed in the page (Razorpay's window)."""
    return section_card(
        rx.hstack(
            rx.icon("circle-check", size=28, color=rx.color("green", 10), aria_hidden="true"),
            rx.heading("Payment received, thank you", as_="h2", size="5"),
            align="center",
        ),
        rx.text(CheckoutState.done_text, data_testid="checkout-done"),
        next_step(),
        role="status",
        data_testid="checkout-result",
    )


def _browser_actions() -> rx.Component:
    """Razorpay's window, or the page load to Stripe / the sandbox: each runs when the state sets it (on mount)."""
    return rx.fragment(
        rx.cond(CheckoutState.razorpay_opening, rx.el.div(hidden=True, on_mount=open_razorpay())),
        rx.cond(CheckoutState.leave_to != "", rx.el.div(hidden=True, on_mount=leave())),
    )


def checkout() -> rx.Component:
    return page(
        _summary(),
        rx.cond(CheckoutState.done, _done(), rx.cond(CheckoutState.product != "", _form(), rx.fragment())),
        _browser_actions(),
        rx.link("← All prices", href="/pricing", size="2"),
        width="720px",
    )


def checkout_success() -> rx.Component:
    return page(
        section_card(
            rx.match(
                CheckoutState.return_status,
                ("paid", rx.icon("circle-check", size=32, color=rx.color("green", 10), aria_hidden="true")),
                ("pending", rx.spinner(size="3")),
                ("failed", rx.icon("circle-x", size=32, color=rx.color("red", 10), aria_hidden="true")),
                rx.icon("circle-help", size=32, color=rx.color("amber", 10), aria_hidden="true"),
            ),
            rx.heading(CheckoutState.return_title, as_="h1", size="7", data_testid="return-title"),
            rx.text(CheckoutState.return_text, size="3", data_testid="return-text"),
            rx.cond(CheckoutState.return_status == "paid", next_step()),
            # a purchase not found, or a payment that failed, leads on: never a dead end
            rx.cond(
                (CheckoutState.return_status == "failed") | (CheckoutState.return_status == "unknown"),
                _try_again_or_prices(
                    (CheckoutState.return_status == "failed") & (CheckoutState.return_product_slug != "")
                ),
            ),
            role="status",
            aria_live="polite",
        ),
        width="720px",
    )


def _try_again_or_prices(try_again: rx.Var[bool] | bool) -> rx.Component:
    """The way on from a purchase that did not happen: its checkout again (when `try_again`), or the prices."""
    return rx.hstack(
        rx.cond(
            try_again,
            rx.link(rx.button("Try again"), href="/checkout/" + CheckoutState.return_product_slug, underline="none"),
        ),
        rx.link(rx.button("See prices", variant="outline"), href="/pricing", underline="none"),
        wrap="wrap",
    )


def checkout_cancelled() -> rx.Component:
    return page(
        section_card(
            rx.heading("Payment cancelled", as_="h1", size="7"),
            rx.text("Nothing was charged. You can try again whenever you like.", size="3"),
            _try_again_or_prices(CheckoutState.return_product_slug != ""),
        ),
        width="720px",
    )
