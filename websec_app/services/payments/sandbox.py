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
from typing import TYPE_CHECKING

from websec_app.store import Database
from websec_app.store.payments import STATUS_CREATED, find_payment

from ..prices import Price, Product
from . import messages
from .errors import PaymentNotVerified
from .ids import ORDER_ID, PAYMENT_ID
from .providers import PROVIDER_A

if TYPE_CHECKING:
    from .razorpay_gateway import RazorpayPayment

log = logging.getLogger(__name__)

#: References of sandbox checkouts start with this, so no real provider id can be mistaken for one.
SANDBOX_PREFIX = "sbx_"
#: The publishable "key" shown where Razorpay's would be.
SANDBOX_KEY = "rzp_sandbox_no_real_money"
#: What the sandbox signs Razorpay's return with. Not a secret: the sandbox issues paid items without a payment
#: anyway (loopback clients only, never in production); the signature is there so the return takes Razorpay's path.
SANDBOX_SIGNING_KEY = b"websec sandbox: no real money"
#: The outcome of a Razorpay Pay on the sandbox page (sandbox_checkouts.py): captured, waiting for the buyer's
#: return.
CAPTURED = "captured"
_ID_LETTERS = string.ascii_letters + string.digits


def sandbox_signature(message: str) -> str:
    """Razorpay's signature scheme (HMAC-SHA256, hex) with the sandbox's key."""
    return hmac.new(SANDBOX_SIGNING_KEY, message.encode(), hashlib.sha256).hexdigest()


class SandboxGateway:
    """Makes up references; the sandbox page (`SandboxCheckouts.complete`, sandbox_checkouts.py) plays the
    provider. For Razorpay it also answers what the app asks Razorpay about a payment (signatures, the
    payment, an order's payments) from the store."""

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


__all__ = [
    "CAPTURED",
    "SANDBOX_KEY",
    "SANDBOX_PREFIX",
    "SandboxGateway",
    "is_sandbox_reference",
    "sandbox_signature",
]
