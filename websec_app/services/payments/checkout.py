"""Starting a checkout: a Razorpay order or subscription, a Stripe Checkout Session, or a sandbox page,
recorded in the store so that whatever confirms it later can be checked against it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from websec_app.scanner import parse_target
from websec_app.settings import Settings
from websec_app.store import Database, issue_compliance_token
from websec_app.store.purchases import open_checkout, open_subscription

from ..prices import Price, Product, price_for
from . import messages
from .errors import PaymentNotVerified
from .providers import PROVIDER_A
from .sandbox import SandboxGateway

if TYPE_CHECKING:
    from .gateways import Gateway, Gateways

#: `CheckoutStart.action` values.
ACTION_RAZORPAY = "razorpay_checkout"
ACTION_REDIRECT = "redirect"


@dataclass(frozen=True)
class CheckoutStart:
    """What the browser needs to pay (see services/README.md)."""

    provider: str
    product: str
    email: str
    amount: int  # minor units
    currency: str
    display_price: str
    reference: str  # provider order / checkout session / subscription id
    action: str  # ACTION_RAZORPAY or ACTION_REDIRECT
    sandbox: bool
    checkout_url: str | None = None
    #: Razorpay Checkout.js options (key, amount, currency, order_id or subscription_id, name, ...).
    razorpay_options: Mapping[str, Any] | None = None
    #: Compliance report via Razorpay: the payment token (usable once the payment is verified).
    token: str | None = None
    url: str | None = None


@dataclass
class Checkouts:
    settings: Settings
    database: Database
    gateways: Gateways
    clock: Callable[[], datetime]

    def start(
        self,
        product: Product | str,
        provider: str,
        email: str,
        url: str | None = None,
        *,
        success_url: str | None = None,
        cancel_url: str | None = None,
    ) -> CheckoutStart:
        product = Product(product)
        target = None
        if product is Product.COMPLIANCE_REPORT:
            if not url:
                raise PaymentNotVerified(messages.COMPLIANCE_NEEDS_URL)
            target = parse_target(url).url  # InvalidTarget (400) for a bad or private address
        price = price_for(product, provider)
        gateway = self.gateways.get(provider)
        base = self.settings.base_url
        action, checkout_url, options = ACTION_REDIRECT, None, None
        notes = {"websec_product": product.value, **({"url": target} if target else {})}
        if isinstance(gateway, SandboxGateway):
            reference = gateway.new_reference(price)
            checkout_url = gateway.checkout_url(reference)
        elif provider == PROVIDER_A:
            gateway = self.gateways.razorpay_api()
            if product is Product.SUBSCRIPTION:
                reference = gateway.create_subscription(price, email=email)
            else:
                reference = gateway.create_order(price, email=email, receipt=f"websec-{product.value}", notes=notes)
            action = ACTION_RAZORPAY
        else:
            reference, checkout_url = gateway.create_checkout_session(  # type: ignore[union-attr]
                price,
                email=email,
                success_url=success_url or f"{base}/checkout/success?session_id={{CHECKOUT_SESSION_ID}}",
                cancel_url=cancel_url or f"{base}/checkout/cancelled",
                metadata={"email": email, **({"url": target} if target else {})},
            )
        if provider == PROVIDER_A:  # Checkout.js options (also shown by the sandbox, which then redirects)
            options = {
                "key": gateway.key_id,  # type: ignore[union-attr]
                "amount": price.amount,
                "currency": price.currency,
                "name": "websec",
                "description": price.name,
                ("subscription_id" if product is Product.SUBSCRIPTION else "order_id"): reference,
                "prefill": {"email": email},
                "notes": notes,
            }
        token = self._record(price, provider, email, reference, target, gateway)
        return CheckoutStart(
            provider=provider,
            product=product.value,
            email=email,
            amount=price.amount,
            currency=price.currency,
            display_price=price.display,
            reference=reference,
            action=action,
            sandbox=gateway.sandbox,
            checkout_url=checkout_url,
            razorpay_options=options,
            token=token,
            url=target,
        )

    def _record(
        self, price: Price, provider: str, email: str, reference: str, target: str | None, gateway: Gateway
    ) -> str | None:
        """The payment row (and subscription or compliance token row) of a new checkout; the token if shown."""
        now = self.clock()
        with self.database.session() as session:
            open_checkout(
                session,
                provider=provider,
                product=price.product.value,
                email=email,
                amount=price.amount,
                currency=price.currency,
                reference=reference,
                now=now,
            )
            if price.product is Product.SUBSCRIPTION and (gateway.sandbox or provider == PROVIDER_A):
                # Razorpay (and the sandbox) name the subscription up front; Stripe's exists once paid.
                open_subscription(session, provider=provider, provider_subscription_id=reference, email=email, now=now)
            if price.product is Product.COMPLIANCE_REPORT and target is not None:
                issued = issue_compliance_token(
                    session, provider=provider, email=email, url=target, now=now, provider_order_id=reference
                )
                # Razorpay (spec 4.6): the token is in the pay response, usable once paid. Stripe: the webhook
                # replaces it with a fresh one and emails that; this value is never shown.
                return issued.token if provider == PROVIDER_A else None
        return None


__all__ = ["ACTION_RAZORPAY", "ACTION_REDIRECT", "CheckoutStart", "Checkouts"]
