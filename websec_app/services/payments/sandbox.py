"""The sandbox: a stand-in for a provider that has no keys, in development only.

A newcomer without Razorpay or Stripe accounts can still click through every purchase: checkouts
get a reference `sbx_...` and a local page (`/api/sandbox/checkout/<ref>`, clearly labelled
SANDBOX) whose Pay button produces the same events a real webhook would, so everything after the
payment (tokens, keys, outbox emails, renewals, cancellations) runs the production code. The
settings refuse it in production (`Settings.sandbox_serves`).
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.models import SUBSCRIPTION_CANCELLED, SUBSCRIPTION_PAST_DUE
from websec_app.store.purchases import CheckoutRecord, find_checkout, find_provider_subscription

from ..prices import Price, Product, price_for
from . import messages
from .errors import PaymentNotVerified, PaymentsUnavailable, UnknownCheckout
from .events import Change, PaymentCaptured, SubscriptionCharged, SubscriptionStatusChanged
from .providers import PROVIDERS

if TYPE_CHECKING:
    from .fulfilment import Fulfilment, Outcome

log = logging.getLogger(__name__)

#: References of sandbox checkouts start with this, so no real provider id can be mistaken for one.
SANDBOX_PREFIX = "sbx_"
#: The publishable "key" shown where Razorpay's would be.
SANDBOX_KEY = "rzp_sandbox_no_real_money"


class SandboxGateway:
    """Makes up references; `SandboxCheckouts.complete` plays the provider."""

    sandbox = True

    def __init__(self, provider: str, base_url: str) -> None:
        self.provider = provider
        self.key_id = SANDBOX_KEY
        self._base_url = base_url.rstrip("/")

    def new_reference(self, price: Price) -> str:
        kind = "sub" if price.interval else "order"
        return f"{SANDBOX_PREFIX}{self.provider[:3]}_{kind}_{secrets.token_urlsafe(12)}"

    def checkout_url(self, reference: str) -> str:
        return f"{self._base_url}/api/sandbox/checkout/{reference}"

    @staticmethod
    def new_payment_id() -> str:
        return f"{SANDBOX_PREFIX}pay_{secrets.token_urlsafe(12)}"


def is_sandbox_reference(reference: str) -> bool:
    return reference.startswith(SANDBOX_PREFIX)


@dataclass
class SandboxCheckouts:
    """The sandbox page's side: the checkout behind a reference, and its buttons."""

    settings: Settings
    database: Database
    fulfilment: Fulfilment

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
        """What the sandbox page's buttons do: pay, renew, fail_renewal, cancel (as a provider webhook would)."""
        checkout, _ = self.checkout(reference)
        price = price_for(checkout.product, checkout.provider)
        payment_id = SandboxGateway.new_payment_id()
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


__all__ = ["SANDBOX_KEY", "SANDBOX_PREFIX", "SandboxCheckouts", "SandboxGateway", "is_sandbox_reference"]
