"""The sandbox page's side (`/api/sandbox/checkout/<ref>`): the checkout behind a reference, and what its
buttons do, through the production fulfilment. The gateway the sandbox plays is `sandbox.py`; this module
sits above `fulfilment.py`, which that gateway sits below.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.models import SUBSCRIPTION_CANCELLED, SUBSCRIPTION_PAST_DUE
from websec_app.store.payments import STATUS_CREATED, STATUS_PAID, set_payment_status
from websec_app.store.purchases import CheckoutRecord, find_checkout, find_provider_subscription

from ..prices import Product, price_for
from . import messages
from .errors import PaymentNotVerified, PaymentsUnavailable, UnknownCheckout
from .events import Change, PaymentCaptured, SubscriptionCharged, SubscriptionStatusChanged
from .fulfilment import Fulfilment, Outcome
from .limits import PaymentLimits
from .providers import PROVIDER_A, PROVIDERS
from .sandbox import CAPTURED, SandboxGateway, is_sandbox_reference, sandbox_signature

log = logging.getLogger(__name__)


@dataclass
class SandboxCheckouts:
    """The sandbox page's side: the checkout behind a reference, and its buttons."""

    settings: Settings
    database: Database
    fulfilment: Fulfilment
    limits: PaymentLimits

    def checkout(self, reference: str) -> tuple[CheckoutRecord, str | None]:
        """The sandbox checkout behind a reference, and its subscription status if it is one."""
        if not is_sandbox_reference(reference):
            raise UnknownCheckout(messages.NO_SANDBOX_CHECKOUT)
        with self.database.session() as session:
            for provider in PROVIDERS:
                checkout = find_checkout(session, provider, reference)
                if checkout is not None:
                    if not self.settings.sandbox_serves(provider):
                        raise PaymentsUnavailable(messages.SANDBOX_DISABLED)
                    subscription = find_provider_subscription(session, provider, reference)
                    return checkout, subscription.status if subscription is not None else None
        raise UnknownCheckout(messages.NO_SANDBOX_CHECKOUT)

    def complete(self, reference: str, action: str = "pay") -> Outcome:
        """What the sandbox page's buttons do: pay, renew, fail_renewal, cancel (as a provider webhook would).

        Razorpay's Pay only captures (`capture`): the buyer's return confirms it, as with Razorpay."""
        checkout, _ = self.checkout(reference)
        if action == "pay" and checkout.provider == PROVIDER_A:
            return self.capture(checkout)
        price = price_for(checkout.product, checkout.provider)
        payment_id = SandboxGateway(checkout.provider, self.settings.base_url).new_payment_id()
        change: Change
        if action in ("pay", "renew"):
            if checkout.product == Product.SUBSCRIPTION:
                change = SubscriptionCharged(
                    reference, payment_id, price.amount, price.currency, reference, checkout.email
                )
            else:
                change = PaymentCaptured(reference, payment_id, price.amount, price.currency, checkout.email)
        elif action == "fail_renewal":
            change = SubscriptionStatusChanged(reference, SUBSCRIPTION_PAST_DUE)
        elif action == "cancel":
            change = SubscriptionStatusChanged(reference, SUBSCRIPTION_CANCELLED)
        else:
            raise PaymentNotVerified(messages.unknown_sandbox_action(action))
        outcome = self.fulfilment.apply(checkout.provider, change)
        log.warning("SANDBOX %s on %s: %s (%s)", action, reference, outcome.name, outcome.detail)
        return outcome

    def capture(self, checkout: CheckoutRecord) -> Outcome:
        """Razorpay's side of a payment: captured once (a second Pay finds the same payment), nothing issued."""
        payment_id = checkout.provider_payment_id
        if payment_id is None and checkout.status != STATUS_PAID:
            payment_id = SandboxGateway(PROVIDER_A, self.settings.base_url).new_payment_id()
            with self.database.session() as session:
                set_payment_status(session, checkout.payment_id, STATUS_CREATED, self.now(), payment_id)
            # Razorpay's "not paid yet" for this order is cached for a moment (limits.py); here the moment it
            # stops being true is known.
            self.limits.not_paid_yet.forget(checkout.reference)
        log.warning("SANDBOX pay on %s: payment %s captured", checkout.reference, payment_id)
        return Outcome(CAPTURED, f"payment {payment_id} captured; the buyer's return confirms it")

    def return_url(self, reference: str) -> str | None:
        """Where the provider sends the buyer after paying: Stripe's success URL with the session id; for
        Razorpay the return with the captured payment's ids and signature (spec 4.7's redirect)."""
        checkout, _ = self.checkout(reference)
        base = self.settings.base_url
        if checkout.provider != PROVIDER_A:
            return f"{base}/checkout/success?session_id={reference}" if checkout.status == STATUS_PAID else None
        payment_id = checkout.provider_payment_id
        if payment_id is None:
            return None
        if checkout.product == Product.SUBSCRIPTION.value:
            ids = {"razorpay_subscription_id": reference, "razorpay_payment_id": payment_id}
            signature = sandbox_signature(f"{payment_id}|{reference}")
        else:
            ids = {"razorpay_order_id": reference, "razorpay_payment_id": payment_id}
            signature = sandbox_signature(f"{reference}|{payment_id}")
        return f"{base}/checkout/success?{urlencode({**ids, 'razorpay_signature': signature})}"

    def now(self) -> datetime:
        return self.fulfilment.clock()


__all__ = ["SandboxCheckouts"]
