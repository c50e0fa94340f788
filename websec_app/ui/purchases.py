"""Buying from the browser: offers and prices as the pages show them, and a checkout in the buyer's currency.

What a buyer does (start, confirm, read a checkout back, the compliance report) is
`websec_app.usecases.purchases`, the same use cases as the paid API endpoints; this module only adds what
is the browser's own: the currency that picks the provider and the pages a checkout returns to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from websec_app.services.payments import PROVIDER_A, PROVIDER_B, PaymentNotVerified
from websec_app.services.prices import Product, price_for, price_list
from websec_app.usecases import purchases
from websec_app.usecases.runtime import Runtime

if TYPE_CHECKING:
    from websec_app.services.payments import CheckoutStart

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


def sandbox_serves(runtime: Runtime, currency: str) -> bool:
    """Whether a checkout in this currency goes to the local sandbox (development without provider keys)."""
    return runtime.settings.sandbox_serves(PROVIDER_OF_CURRENCY[currency])


async def begin(runtime: Runtime, product: Product, currency: str, email: str, url: str) -> CheckoutStart:
    """Start a checkout in the buyer's currency, returning to this site's success or cancel page."""
    provider = PROVIDER_OF_CURRENCY.get(currency)
    if provider is None:
        raise PaymentNotVerified(f"Choose INR or USD, not {currency!r}.")
    base = runtime.settings.base_url
    return await purchases.start_checkout(
        runtime,
        product,
        provider,
        email,
        url or None,
        success_url=f"{base}/checkout/success?session_id={{CHECKOUT_SESSION_ID}}",
        cancel_url=f"{base}/checkout/cancelled?product={SLUG_OF_PRODUCT[product.value]}",
    )
