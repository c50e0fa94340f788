"""Confirming a payment the buyer comes back with: Razorpay's (Checkout.js's success handler, its redirect, and
`POST /api/verify-one-time`, spec 4.7) and Stripe's (the Checkout Session read back on the success page).

The signature proves the browser did not make the ids up; fetching the payment proves the money is there
(status, amount, currency, order). Then the payment is fulfilled like a webhook would fulfil it, so
whichever comes first issues the token or key and the other changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from websec_app.store import Database, TokenAlreadyIssued
from websec_app.store.payments import STATUS_PAID, find_payment
from websec_app.store.purchases import find_checkout

from ..prices import Product
from . import messages
from .errors import PaymentNotVerified
from .events import Ignored, PaymentCaptured, SubscriptionCharged
from .fulfilment import AMOUNT_MISMATCH, Confirmation, Fulfilment, Outcome
from .ids import PAYMENT_ID, check_id
from .providers import PROVIDER_A, PROVIDER_B
from .sandbox import SandboxGateway

if TYPE_CHECKING:
    from .gateways import Gateways


@dataclass
class Confirmations:
    database: Database
    gateways: Gateways
    fulfilment: Fulfilment

    def razorpay_payment(self, *, order_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for an order: signature, then the payment itself, then fulfilment."""
        gateway = self.gateways.razorpay()
        gateway.verify_payment_signature(order_id=order_id, payment_id=payment_id, signature=signature)
        payment = gateway.fetch_payment(payment_id)
        if not payment.paid or payment.order_id != order_id:
            raise PaymentNotVerified(messages.not_paid_for_order(payment_id, payment.status))
        change = PaymentCaptured(order_id, payment.payment_id, payment.amount, payment.currency, payment.email)
        return _confirmation(self.fulfilment.apply(PROVIDER_A, change))

    def razorpay_subscription(self, *, subscription_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for a subscription: the key is issued now (or by the webhook, first wins)."""
        gateway = self.gateways.razorpay()
        gateway.verify_subscription_signature(
            subscription_id=subscription_id, payment_id=payment_id, signature=signature
        )
        payment = gateway.fetch_payment(payment_id)
        if not payment.paid:
            raise PaymentNotVerified(messages.not_paid(payment_id, payment.status))
        change = SubscriptionCharged(
            subscription_id, payment.payment_id, payment.amount, payment.currency, subscription_id, payment.email
        )
        return _confirmation(self.fulfilment.apply(PROVIDER_A, change))

    def one_time_payment(self, payment_id: str, email: str) -> Confirmation:
        """Spec 4.7: a Razorpay payment id from the redirect -> a one-time scan token (emailed too).

        The token is bound to the email the order was created with (issue 12): `email` must be that address
        (in any case), and the token is sent there; anyone else who learned the payment id gets 402. The id
        is checked for Razorpay's shape before it goes into the SDK's URL (InvalidPaymentId, 400), and only
        a captured payment counts.

        Raises PaymentNotVerified (402), InvalidPaymentId (400) and TokenAlreadyIssued (a token exists for
        this payment).
        """
        check_id(payment_id, PAYMENT_ID, "payment")  # first: PostgreSQL refuses a NUL in a query (a 500)
        with self.database.session() as session:
            known = find_payment(session, PROVIDER_A, provider_payment_id=payment_id)
        if known is not None and known.status == STATUS_PAID:
            raise TokenAlreadyIssued(f"payment {payment_id} was fulfilled before")
        payment = self.gateways.razorpay().fetch_payment(payment_id)
        if not payment.paid:
            raise PaymentNotVerified(messages.not_captured(payment_id))
        with self.database.session() as session:
            checkout = find_checkout(session, PROVIDER_A, payment.order_id) if payment.order_id else None
        if checkout is None or checkout.product != Product.ONE_TIME_SCAN:
            raise PaymentNotVerified(messages.not_a_one_time_scan(payment_id))
        if email.strip().casefold() != checkout.email.casefold():
            raise PaymentNotVerified(messages.payment_for_another_email(payment_id))
        change = PaymentCaptured(
            checkout.reference, payment.payment_id, payment.amount, payment.currency, checkout.email
        )
        outcome = self.fulfilment.apply(PROVIDER_A, change)
        if outcome.name == AMOUNT_MISMATCH:
            raise PaymentNotVerified(messages.one_time_scan_price_mismatch(payment_id))
        if outcome.confirmation is None or outcome.confirmation.token is None:
            raise TokenAlreadyIssued(f"payment {payment_id} was fulfilled before")
        return outcome.confirmation

    def stripe_return(self, session_id: str) -> Confirmation | None:
        """The buyer is back from Stripe's hosted page: the session is read from Stripe and, when paid, fulfilled
        like its webhook (first wins). None when Stripe says it is not paid yet, or the sandbox plays Stripe
        (its Pay has already settled it)."""
        gateway = self.gateways.get(PROVIDER_B)
        if isinstance(gateway, SandboxGateway):
            return None
        change = gateway.checkout_session_change(session_id)  # type: ignore[union-attr]
        if isinstance(change, Ignored):
            return None
        return self.fulfilment.apply(PROVIDER_B, change).confirmation


def _confirmation(outcome: Outcome) -> Confirmation:
    if outcome.name == AMOUNT_MISMATCH:
        raise PaymentNotVerified(messages.PRICE_MISMATCH)
    if outcome.confirmation is None:
        raise PaymentNotVerified(messages.unmatched_payment(outcome.detail))
    return outcome.confirmation


__all__ = ["Confirmations"]
