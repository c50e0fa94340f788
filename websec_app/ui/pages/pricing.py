"""`/pricing`: the three products in INR (Razorpay) or USD (Stripe), prices from the one price table."""

from __future__ import annotations

import reflex as rx

from ..components.layout import page, page_heading
from ..purchases import Offer, offers
from ..state.checkout import CheckoutState
from ..view import PRO_ONLY_NAMES

#: What each product includes, in the buyer's words (the price table has the short description).
_FEATURES = {
    "subscription": (
        "50 full scans every calendar month",
        f"The fix for every finding, and the {PRO_ONLY_NAMES} sections",
        "PDF reports with your client's name",
        "The JSON API with your key",
    ),
    "one_time_scan": (
        "One full scan, valid for 24 hours",
        "Every section, with the fix for each finding",
        "A shareable report link",
        "No account, no subscription",
    ),
    "compliance_report": (
        "A full scan mapped to OWASP Top 10 2021, PCI DSS v4.0, GDPR Art. 32 and ISO/IEC 27001:2022",
        "Pass/fail tables per framework with CWE references",
        "A remediation plan, the problems that cost the most points first",
        "Emailed to you as a PDF",
    ),
}


def currency_switch() -> rx.Component:
    # A radio group (Radix segmented control) is named by aria-labelledby: <label for> only names form fields.
    return rx.vstack(
        rx.text("Currency", id="currency-label", class_name="field-label"),
        rx.segmented_control.root(
            rx.segmented_control.item("₹ INR · Razorpay", value="INR"),
            rx.segmented_control.item("$ USD · Stripe", value="USD"),
            value=CheckoutState.currency,
            on_change=CheckoutState.set_currency,
            size="2",
            aria_labelledby="currency-label",
        ),
        spacing="1",
    )


def _offer(offer: Offer, highlight: bool) -> rx.Component:
    verb = "Subscribe" if offer.product == "subscription" else "Buy"
    price = rx.cond(CheckoutState.currency == "INR", offer.inr, offer.usd)
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.heading(offer.name, as_="h2", size="5"),
                rx.badge("Most popular", color_scheme="indigo") if highlight else rx.fragment(),
                justify="between",
                align="center",
                width="100%",
            ),
            rx.text(price, size="7", weight="bold", data_testid=f"price-{offer.slug}"),
            rx.el.ul(
                *[
                    rx.el.li(
                        rx.hstack(
                            rx.icon("check", size=16, color=rx.color("green", 10), aria_hidden="true", flex_shrink="0"),
                            rx.text(feature, size="2"),
                            align="start",
                            spacing="2",
                        ),
                        padding_y="0.2rem",
                    )
                    for feature in _FEATURES.get(offer.product, ())
                ],
                class_name="plain-list",
            ),
            rx.spacer(),
            rx.link(
                rx.button(
                    verb,
                    size="3",
                    width="100%",
                    variant="solid" if highlight else "outline",
                ),
                href=f"/checkout/{offer.slug}?currency=" + CheckoutState.currency,
                underline="none",
                width="100%",
                # The name starts with the button's visible word (WCAG 2.5.3, label in name).
                aria_label=f"{verb} to {offer.name}" if verb == "Subscribe" else f"{verb} {offer.name}",
            ),
            spacing="3",
            height="100%",
            align="stretch",
        ),
        size="3",
        id=offer.product,
        data_testid=f"offer-{offer.slug}",
    )


def pricing() -> rx.Component:
    items = offers()
    return page(
        page_heading("Pricing", "Pay in rupees with Razorpay or in US dollars by card with Stripe."),
        currency_switch(),
        rx.grid(
            *[_offer(offer, offer.product == "subscription") for offer in items],
            columns={"initial": "1", "md": "3"},
            spacing="5",
            width="100%",
        ),
        rx.text(
            "The free scan stays free: headers, TLS, DNS, CORS and page checks with a grade, a few times a day. "
            "Already bought a token? ",
            rx.link("Run a one-time scan", href="/one-time-scan"),
            " or ",
            rx.link("generate a compliance report", href="/compliance-report"),
            ".",
            size="2",
            color_scheme="gray",
        ),
    )
