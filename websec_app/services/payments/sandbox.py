"""The sandbox: a stand-in for a provider that has no keys, in development only.

A newcomer without Razorpay or Stripe accounts can still click through every purchase: checkouts
get a reference `sbx_...` and a local page (`/api/sandbox/checkout/<ref>`, clearly labelled
SANDBOX) whose Pay button plays the provider, so everything after the payment (confirmations,
tokens, keys, outbox emails, renewals, cancellations) runs the production code. The settings refuse
it in production (`Settings.sandbox_serves`).

Each provider is played the way it confirms payments (issue 15):

- Stripe confirms by webhook: Pay applies what `checkout.session.completed` would, then sends the
  browser to the success URL with the session id, as Stripe's hosted page does.
- Razorpay is confirmed by the buyer's return: Pay *captures* a payment (a `pay_` id of Razorpay's shape,
  kept on the checkout row, which plays Razorpay's own record of it) and sends the browser back with
  `razorpay_payment_id`, the order or subscription id and a signature, as Razorpay's redirect does.
  The app then confirms it exactly as with Razorpay: the signature is checked, the payment fetched
  (`fetch_payment`, `order_payments`), and `POST /api/verify-one-time`, Checkout.js's success handler and
  the generate endpoint's "ask Razorpay" all work, because this gateway answers those calls.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.models import SUBSCRIPTION_CANCELLED, SUBSCRIPTION_PAST_DUE
from websec_app.store.payments import STATUS_CREATED, STATUS_PAID, find_payment, set_payment_status
from websec_app.store.purchases import CheckoutRecord, find_checkout, find_provider_subscription

from ..prices import Price, Product, price_for
from . import messages
from .errors import PaymentNotVerified, PaymentsUnavailable, UnknownCheckout
from .events import Change, PaymentCaptured, SubscriptionCharged, SubscriptionStatusChanged
from .ids import ORDER_ID, PAYMENT_ID
from .providers import PROVIDER_A, PROVIDERS

if TYPE_CHECKING:
    from datetime import datetime

    from .fulfilment import Fulfilment, Outcome
    from .limits import PaymentLimits
    from .razorpay_gateway import RazorpayPayment

log = logging.getLogger(__name__)

#: References of sandbox checkouts start with this, so no real provider id can be mistaken for one.
SANDBOX_PREFIX = "sbx_"
#: The publishable "key" shown where Razorpay's would be.
SANDBOX_KEY = "rzp_sandbox_no_real_money"
#: What the sandbox signs Razorpay's return with. Not a secret: the sandbox issues paid items without a payment
#: anyway (loopback clients only, never in production); the signature is there so the return takes Razorpay's path.
SANDBOX_SIGNING_KEY = b"websec sandbox: no real money"
#: The `SandboxCheckouts.complete` outcome of a Razorpay Pay: captured, waiting for the buyer's return.
CAPTURED = "captured"
_ID_LETTERS = string.ascii_letters + string.digits


def sandbox_signature(message: str) -> str:
    """Razorpay's signature scheme (HMAC-SHA256, hex) with the sandbox's key."""
    return hmac.new(SANDBOX_SIGNING_KEY, message.encode(), hashlib.sha256).hexdigest()


class SandboxGateway:
    """Makes up references; `SandboxCheckouts.complete` plays the provider. For Razorpay it also answers what
    the app asks Razorpay about a payment (signatures, the payment, an order's payments) from the store."""

    sandbox = True

    def __init__(self, provider: str, base_url: str, database: Database | None = None) -> None:
        self.provider = provider
        self.key_id = SANDBOX_KEY
        self._base_url = base_url.rstrip("/")
        self._database = database

    def new_reference(self, price: Price) -> str:
        kind = "sub" if price.interval else "order"
        return f"{SANDBOX_PREFIX}{self.provider[:3]}_{kind}_{secrets.token_urlsafe(12)}"

    def checkout_url(self, reference: str) -> str:
        return f"{self._base_url}/api/sandbox/checkout/{reference}"

    def new_payment_id(self) -> str:
        """Razorpay's shape for Razorpay (`pay_` and 14 letters and digits: the API checks it), else `sbx_pay_...`."""
        if self.provider == PROVIDER_A:
            return "pay_" + "".join(secrets.choice(_ID_LETTERS) for _ in range(14))
        return f"{SANDBOX_PREFIX}pay_{secrets.token_urlsafe(12)}"

    # --- what the app asks Razorpay (confirmation.py, compliance_report.py) -------------------------------

    def verify_payment_signature(self, *, order_id: str, payment_id: str, signature: str) -> None:
        if not hmac.compare_digest(sandbox_signature(f"{order_id}|{payment_id}"), signature):
            raise PaymentNotVerified(messages.ORDER_SIGNATURE_INVALID)

    def verify_subscription_signature(self, *, subscription_id: str, payment_id: str, signature: str) -> None:
        if not hmac.compare_digest(sandbox_signature(f"{payment_id}|{subscription_id}"), signature):
            raise PaymentNotVerified(messages.SUBSCRIPTION_SIGNATURE_INVALID)

    def fetch_payment(self, payment_id: str) -> RazorpayPayment:
        """The payment the sandbox page captured: the checkout row that holds its id. Unknown ids are
        `created` (Razorpay answers 400 for them; either way they are not paid)."""
        from .razorpay_gateway import RazorpayPayment  # the type only: no SDK call is made

        if not PAYMENT_ID.fullmatch(payment_id) or self._database is None:
            return RazorpayPayment(payment_id, None, STATUS_CREATED, 0, "", None)
        with self._database.session() as session:
            row = find_payment(session, self.provider, provider_payment_id=payment_id)
        if row is None or row.provider_order_id is None:
            return RazorpayPayment(payment_id, None, STATUS_CREATED, 0, "", None)
        subscription = row.product == Product.SUBSCRIPTION.value
        return RazorpayPayment(
            payment_id=payment_id,
            order_id=None if subscription else row.provider_order_id,
            status=CAPTURED,
            amount=row.amount,
            currency=row.currency,
            email=row.email,
            subscription_id=row.provider_order_id if subscription else None,
        )

    def order_payments(self, order_id: str) -> list[RazorpayPayment]:
        if self._database is None or not (is_sandbox_reference(order_id) or ORDER_ID.fullmatch(order_id)):
            return []
        with self._database.session() as session:
            row = find_payment(session, self.provider, provider_order_id=order_id)
        if row is None or row.provider_payment_id is None:
            return []
        return [self.fetch_payment(row.provider_payment_id)]


def is_sandbox_reference(reference: str) -> bool:
    return reference.startswith(SANDBOX_PREFIX)


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
        from .fulfilment import Outcome

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


__all__ = [
    "CAPTURED",
    "SANDBOX_KEY",
    "SANDBOX_PREFIX",
    "SandboxCheckouts",
    "SandboxGateway",
    "is_sandbox_reference",
    "sandbox_signature",
]
