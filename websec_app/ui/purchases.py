"""Buying from the browser: offers and prices, starting a checkout, confirming it, and the paid reports.

Everything that talks to a provider or sends mail is `websec_app.services` (the same PaymentService
as the paid API endpoints); this module picks the provider for a currency, runs the synchronous
service calls in a worker thread, and reads checkouts back from the store for the return pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from websec_app.scanner import ScanReport, parse_target
from websec_app.services.checkout import CheckoutStart, Confirmation, get_payment_service
from websec_app.services.metering import record_report
from websec_app.services.payments import PROVIDER_A, PROVIDER_B, PROVIDERS, PaymentNotVerified
from websec_app.services.prices import Product, price_for, price_list
from websec_app.store import SCAN_COMPLIANCE
from websec_app.store.purchases import CheckoutRecord, find_checkout

from .flows import Backend, Progress, no_progress

#: The currency a buyer picks decides the provider (spec 1: provider A in INR, provider B in USD).
PROVIDER_OF_CURRENCY = {"INR": PROVIDER_A, "USD": PROVIDER_B}
CURRENCIES = tuple(PROVIDER_OF_CURRENCY)
#: Where each product's checkout page is (`/checkout/<slug>`), in the order the pricing page shows them.
PRODUCT_SLUGS = {
    "pro": Product.SUBSCRIPTION,
    "one-time-scan": Product.ONE_TIME_SCAN,
    "compliance-report": Product.COMPLIANCE_REPORT,
}
SLUG_OF_PRODUCT = {product.value: slug for slug, product in PRODUCT_SLUGS.items()}


@dataclass(frozen=True)
class Offer:
    slug: str
    product: str
    name: str
    description: str
    inr: str  # "₹499/month"
    usd: str  # "$7.00/month"


def offers() -> list[Offer]:
    """Every product with its price in both currencies, from the one price table."""
    by_product: dict[str, dict[str, str]] = {}
    names: dict[str, tuple[str, str]] = {}
    for price in price_list():
        by_product.setdefault(price.product.value, {})[price.currency] = price.display
        names[price.product.value] = (price.name, price.description)
    return [
        Offer(
            slug,
            product.value,
            *names[product.value],
            by_product[product.value]["INR"],
            by_product[product.value]["USD"],
        )
        for slug, product in PRODUCT_SLUGS.items()
    ]


def price_text(product: Product) -> str:
    """'₹99 or $2.00': both prices of a product, for sentences."""
    return f"{price_for(product, PROVIDER_A).display} or {price_for(product, PROVIDER_B).display}"


def sandbox_serves(b: Backend, currency: str) -> bool:
    """Whether a checkout in this currency goes to the local sandbox (development without provider keys)."""
    return b.settings.sandbox_serves(PROVIDER_OF_CURRENCY[currency])


async def begin(b: Backend, product: Product, currency: str, email: str, url: str) -> CheckoutStart:
    """Start a checkout (a Razorpay order or subscription, a Stripe Checkout Session, or a sandbox page)."""
    provider = PROVIDER_OF_CURRENCY.get(currency)
    if provider is None:
        raise PaymentNotVerified(f"Choose INR or USD, not {currency!r}.")
    email = email.strip()
    if "@" not in email or len(email) > 254:
        raise PaymentNotVerified("Enter the email address the purchase should be sent to.")
    if product is Product.COMPLIANCE_REPORT:
        parse_target(url)  # InvalidTarget for a bad or private address, before anything is created
    base = b.settings.base_url
    service = get_payment_service()
    return await anyio.to_thread.run_sync(
        lambda: service.start_checkout(
            product,
            provider,
            email,
            url or None,
            success_url=f"{base}/checkout/success?session_id={{CHECKOUT_SESSION_ID}}",
            cancel_url=f"{base}/checkout/cancelled?product={SLUG_OF_PRODUCT[product.value]}",
        )
    )


async def confirm_razorpay(product: Product, response: Mapping[str, Any]) -> Confirmation:
    """Checkout.js success handler: the signature and the payment are checked by the service, then fulfilled."""
    payment_id = str(response.get("razorpay_payment_id") or "")
    signature = str(response.get("razorpay_signature") or "")
    service = get_payment_service()
    if product is Product.SUBSCRIPTION:
        subscription_id = str(response.get("razorpay_subscription_id") or "")
        return await anyio.to_thread.run_sync(
            lambda: service.confirm_razorpay_subscription(
                subscription_id=subscription_id, payment_id=payment_id, signature=signature
            )
        )
    order_id = str(response.get("razorpay_order_id") or "")
    return await anyio.to_thread.run_sync(
        lambda: service.confirm_razorpay_payment(order_id=order_id, payment_id=payment_id, signature=signature)
    )


async def checkout_status(b: Backend, reference: str) -> CheckoutRecord | None:
    """The checkout a return page is about (Stripe session id or sandbox reference), as the store has it."""

    def find(session: Any) -> CheckoutRecord | None:
        for provider in PROVIDERS:
            record = find_checkout(session, provider, reference)
            if record is not None:
                return record
        return None

    if not reference or len(reference) > 255:
        return None
    return await b.db(find)


async def compliance_report(b: Backend, token: str, url: str, email: str, progress: Progress = no_progress) -> str:
    """Scan and email the compliance report for a paid token: the same PaymentService call as
    `POST /api/compliance-report/generate`, with the page's progress steps around the scan.

    Raises store.TokenRejected (unknown, unpaid, used), the scanner's errors, or the PDF renderer's; the
    token stays usable unless the email was queued.
    """
    email = email.strip()
    if "@" not in email:
        raise PaymentNotVerified("Enter the email address the report should be sent to.")
    now = b.clock()
    progress("quota")

    async def scan_with_progress(target_url: str) -> ScanReport:
        progress("fetch")
        report = await b.scanner(target_url, b.settings)
        progress("save")
        return report

    generated = await get_payment_service().generate_compliance_report(
        token, url=url, email=email, scan=scan_with_progress
    )
    report = generated.report
    await b.db(record_report, report, kind=SCAN_COMPLIANCE, now=now)
    return generated.message
