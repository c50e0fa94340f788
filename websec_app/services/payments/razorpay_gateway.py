"""Provider A: Razorpay, through the official `razorpay` SDK.

- One-time products are Orders (https://razorpay.com/docs/api/orders/create/); the browser pays
  them with Checkout.js and hands back `razorpay_payment_id`, `razorpay_order_id` and
  `razorpay_signature`. We verify the signature with the SDK's utility *and* fetch the payment
  (status captured/authorized, amount, currency, order): the signature proves the browser did not
  make the ids up, the fetch proves the money is there.
- Pro is a Subscription on a monthly Plan (https://razorpay.com/docs/api/payments/subscriptions/).
  The plan is looked up by its notes, or created once, so no dashboard set-up is needed.
- Webhooks are verified with the webhook secret (`Utility.verify_webhook_signature`, HMAC-SHA256 of
  the raw body, header `X-Razorpay-Signature`, https://razorpay.com/docs/webhooks/validate-test/) and
  identified by what the signature covers: the event type, the ids of the entities it carries and its
  `created_at` (issue 12). The `X-Razorpay-Event-Id` header is not signed, so a replayed body with a made-up
  header would otherwise pass as a new event.
- Only `captured` is paid (issue 12): orders capture automatically, and a payment still `authorized` may
  never be captured (Razorpay refunds late authorisations,
  https://razorpay.com/docs/payments/payments/#payment-life-cycle).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import razorpay  # type: ignore[import-untyped]
import requests
from razorpay.errors import (  # type: ignore[import-untyped]
    BadRequestError,
    GatewayError,
    ServerError,
    SignatureVerificationError,
)

from websec_app.settings import PaymentSettings
from websec_app.store.models import SUBSCRIPTION_ACTIVE, SUBSCRIPTION_CANCELLED, SUBSCRIPTION_PAST_DUE

from ..prices import Price
from . import messages
from .errors import InvalidWebhook, PaymentError, PaymentNotVerified, PaymentsUnavailable
from .events import (
    Change,
    Ignored,
    PaymentCaptured,
    PaymentReversed,
    ProviderEvent,
    SubscriptionCharged,
    SubscriptionStatusChanged,
    event_time,
)
from .ids import ORDER_ID, PAYMENT_ID, SUBSCRIPTION_ID, check_id
from .providers import PROVIDER_A

log = logging.getLogger(__name__)

#: Seconds for one API call (the SDK sets no timeout of its own).
_TIMEOUT = 15
#: Months a subscription runs before Razorpay ends it (Razorpay requires a count; 10 years).
_SUBSCRIPTION_MONTHS = 120
#: Payment states that mean the money is there (https://razorpay.com/docs/payments/payments/#payment-life-cycle):
#: captured only. An `authorized` payment is held, not taken, and is refunded if it is never captured.
PAID_STATES = ("captured",)
#: Events that take back what a payment bought (https://razorpay.com/docs/webhooks/refunds/,
#: https://razorpay.com/docs/webhooks/disputes/): the entity that names the payment, and whether it is a dispute.
_REVERSALS = {"refund.processed": ("refund", False), "payment.dispute.created": ("dispute", True)}
#: Subscription webhooks that change whether the key works
#: (https://razorpay.com/docs/webhooks/subscriptions/).
_SUBSCRIPTION_STATUS = {
    "subscription.activated": SUBSCRIPTION_ACTIVE,
    "subscription.resumed": SUBSCRIPTION_ACTIVE,
    "subscription.pending": SUBSCRIPTION_PAST_DUE,  # a renewal charge failed; Razorpay retries it
    "subscription.halted": SUBSCRIPTION_PAST_DUE,  # every retry failed
    "subscription.paused": SUBSCRIPTION_PAST_DUE,
    "subscription.cancelled": SUBSCRIPTION_CANCELLED,
    "subscription.completed": SUBSCRIPTION_CANCELLED,
}
#: A subscription's status at Razorpay (https://razorpay.com/docs/payments/subscriptions/states/) -> ours.
#: `created` and `authenticated` come before the first charge: nothing here to decide.
_CURRENT_STATUS = {
    "active": SUBSCRIPTION_ACTIVE,
    "pending": SUBSCRIPTION_PAST_DUE,
    "halted": SUBSCRIPTION_PAST_DUE,
    "paused": SUBSCRIPTION_PAST_DUE,
    "cancelled": SUBSCRIPTION_CANCELLED,
    "completed": SUBSCRIPTION_CANCELLED,
    "expired": SUBSCRIPTION_CANCELLED,
}


@dataclass(frozen=True)
class RazorpayPayment:
    payment_id: str
    order_id: str | None
    status: str
    amount: int
    currency: str
    email: str | None
    subscription_id: str | None = None

    @property
    def paid(self) -> bool:
        """The money is there: captured (an authorized payment may still be dropped and refunded)."""
        return self.status in PAID_STATES

    @classmethod
    def of(cls, entity: Mapping[str, Any]) -> RazorpayPayment:
        return cls(
            payment_id=str(entity.get("id", "")),
            order_id=entity.get("order_id"),
            status=str(entity.get("status", "")),
            amount=int(entity.get("amount", 0)),
            currency=str(entity.get("currency", "")).upper(),
            email=entity.get("email"),
            subscription_id=(entity.get("subscription_id") or None),
        )


class RazorpayGateway:
    """Orders, payments, plans and subscriptions at Razorpay."""

    provider = PROVIDER_A
    sandbox = False

    def __init__(self, settings: PaymentSettings, *, session: requests.Session | None = None) -> None:
        if not settings.razorpay_configured:
            raise PaymentsUnavailable(messages.RAZORPAY_NOT_CONFIGURED)
        options = {"base_url": settings.razorpay_base_url} if settings.razorpay_base_url else {}
        self.key_id = settings.razorpay_key_id
        self._webhook_secret = settings.razorpay_webhook_secret
        self._client = razorpay.Client(
            session=session, auth=(settings.razorpay_key_id, settings.razorpay_key_secret), **options
        )
        self._client.set_app_details({"title": "websec", "version": "1.0"})
        self._plan_ids: dict[tuple[int, str], str] = {}
        self._plan_lock = threading.Lock()

    # --- API calls ---------------------------------------------------------------------------------------

    def _call(self, what: str, function: Any, *args: Any) -> Any:
        try:
            return function(*args, timeout=_TIMEOUT)
        except BadRequestError as exc:
            raise PaymentNotVerified(messages.razorpay_refused(what, exc)) from exc
        except (GatewayError, ServerError, requests.RequestException, ValueError) as exc:
            log.warning("Razorpay %s failed: %s", what, exc)
            raise PaymentError(messages.provider_unreachable(what)) from exc

    def create_order(self, price: Price, *, email: str, receipt: str, notes: Mapping[str, str]) -> str:
        """An order for a one-time product; returns its id (the checkout reference)."""
        order = self._call(
            "create order",
            self._client.order.create,
            {
                "amount": price.amount,
                "currency": price.currency,
                "receipt": receipt[:40],  # Razorpay: at most 40 characters
                "payment_capture": 1,  # capture automatically: "authorized" is then only a passing state
                "notes": {"email": email, **notes},
            },
        )
        return str(order["id"])

    def fetch_payment(self, payment_id: str) -> RazorpayPayment:
        check_id(payment_id, PAYMENT_ID, "payment")
        return RazorpayPayment.of(self._call("fetch payment", self._client.payment.fetch, payment_id))

    def order_payments(self, order_id: str) -> list[RazorpayPayment]:
        check_id(order_id, ORDER_ID, "order")
        listing = self._call("fetch order payments", self._client.order.payments, order_id)
        return [RazorpayPayment.of(item) for item in listing.get("items", [])]

    def subscription_status(self, subscription_id: str) -> str | None:
        """The subscription's status now, fetched from Razorpay (the subscription entity carries it), as ours;
        None for a status before the first charge. PaymentError when Razorpay cannot be asked."""
        check_id(subscription_id, SUBSCRIPTION_ID, "subscription")
        entity = self._call("fetch subscription", self._client.subscription.fetch, subscription_id)
        return _CURRENT_STATUS.get(str(entity.get("status")))

    def _plan_id(self, price: Price) -> str:
        """The monthly plan for this price: found by its notes, created the first time."""
        key = (price.amount, price.currency)
        with self._plan_lock:
            if key in self._plan_ids:
                return self._plan_ids[key]
            listing = self._call("list plans", self._client.plan.all, {"count": 100})
            for plan in listing.get("items", []):
                item = plan.get("item", {})
                notes = plan.get("notes") or {}
                if (
                    notes.get("websec_product") == price.product.value
                    and int(item.get("amount", 0)) == price.amount
                    and str(item.get("currency", "")).upper() == price.currency
                    and plan.get("period") == "monthly"
                    and int(plan.get("interval", 0)) == 1
                ):
                    self._plan_ids[key] = str(plan["id"])
                    return self._plan_ids[key]
            plan = self._call(
                "create plan",
                self._client.plan.create,
                {
                    "period": "monthly",
                    "interval": 1,
                    "item": {
                        "name": price.name,
                        "amount": price.amount,
                        "currency": price.currency,
                        "description": price.description,
                    },
                    "notes": {"websec_product": price.product.value},
                },
            )
            self._plan_ids[key] = str(plan["id"])
            return self._plan_ids[key]

    def create_subscription(self, price: Price, *, email: str) -> str:
        """A monthly subscription to the Pro plan; returns its id (the checkout reference)."""
        subscription = self._call(
            "create subscription",
            self._client.subscription.create,
            {
                "plan_id": self._plan_id(price),
                "total_count": _SUBSCRIPTION_MONTHS,
                "customer_notify": 1,
                "notes": {"email": email, "websec_product": price.product.value},
            },
        )
        return str(subscription["id"])

    # --- signatures -----------------------------------------------------------------------------------------

    def verify_payment_signature(self, *, order_id: str, payment_id: str, signature: str) -> None:
        """Checkout.js's signature over `order_id|payment_id`, with the key secret (raises PaymentNotVerified)."""
        try:
            self._client.utility.verify_payment_signature(
                {"razorpay_order_id": order_id, "razorpay_payment_id": payment_id, "razorpay_signature": signature}
            )
        except SignatureVerificationError:
            raise PaymentNotVerified(messages.ORDER_SIGNATURE_INVALID) from None

    def verify_subscription_signature(self, *, subscription_id: str, payment_id: str, signature: str) -> None:
        """Checkout.js's signature over `payment_id|subscription_id` (raises PaymentNotVerified)."""
        try:
            self._client.utility.verify_subscription_payment_signature(
                {
                    "razorpay_subscription_id": subscription_id,
                    "razorpay_payment_id": payment_id,
                    "razorpay_signature": signature,
                }
            )
        except SignatureVerificationError:
            raise PaymentNotVerified(messages.SUBSCRIPTION_SIGNATURE_INVALID) from None

    # --- webhooks -------------------------------------------------------------------------------------------

    def parse_webhook(self, body: bytes, headers: Mapping[str, str]) -> ProviderEvent:
        """Verify and translate one webhook delivery (raises InvalidWebhook)."""
        if not self._webhook_secret:
            raise InvalidWebhook(messages.RAZORPAY_WEBHOOKS_NOT_CONFIGURED)
        signature = headers.get("x-razorpay-signature", "")
        if not signature.isascii():  # hmac.compare_digest raises TypeError on a non-ASCII str: a 500, not a 400
            raise InvalidWebhook(messages.WEBHOOK_SIGNATURE_INVALID)
        try:
            text = body.decode("utf-8")
            self._client.utility.verify_webhook_signature(text, signature, self._webhook_secret)
            payload = json.loads(text)
        except (UnicodeDecodeError, SignatureVerificationError, ValueError):
            raise InvalidWebhook(messages.WEBHOOK_SIGNATURE_INVALID) from None
        if not isinstance(payload, dict) or payload.get("entity") != "event":
            raise InvalidWebhook(messages.NOT_A_RAZORPAY_EVENT)
        event_type = str(payload.get("event", ""))
        return ProviderEvent(
            self.provider, signed_event_id(payload), event_type[:64], translate_event(event_type, payload)
        )


def signed_event_id(payload: Mapping[str, Any]) -> str:
    """The id of a webhook event from its signed body: type, the ids of the entities it carries, and its
    `created_at`. Razorpay redelivers an event with the same body; the `X-Razorpay-Event-Id` header is not
    signed, so it cannot tell a replay from a new event (issue 12)."""
    wrappers = payload.get("payload")
    ids = []
    if isinstance(wrappers, Mapping):
        for name in sorted(wrappers):
            entity = _entity(payload, name)
            if entity is not None:
                ids.append(f"{name}={entity.get('id', '')}")
    key = f"{payload.get('event', '')}:{','.join(ids)}:{payload.get('created_at', '')}"
    return key if len(key) <= 128 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _entity(payload: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    wrapper = payload.get("payload", {}).get(name)
    entity = wrapper.get("entity") if isinstance(wrapper, Mapping) else None
    return entity if isinstance(entity, Mapping) else None


def translate_event(event_type: str, payload: Mapping[str, Any]) -> Change:
    """Razorpay event -> what it means for us (https://razorpay.com/docs/webhooks/payloads/)."""
    payment = _entity(payload, "payment")
    subscription = _entity(payload, "subscription")
    if event_type in ("payment.captured", "order.paid") and payment is not None:
        paid = RazorpayPayment.of(payment)
        if not paid.paid:
            return Ignored(f"payment {paid.payment_id} is {paid.status}")
        if not paid.order_id:
            return Ignored(f"payment {paid.payment_id} has no order")
        return PaymentCaptured(paid.order_id, paid.payment_id, paid.amount, paid.currency, paid.email)
    if event_type == "subscription.charged" and subscription is not None and payment is not None:
        paid = RazorpayPayment.of(payment)
        notes = subscription.get("notes") or {}
        return SubscriptionCharged(
            subscription_id=str(subscription.get("id", "")),
            payment_id=paid.payment_id,
            amount=paid.amount,
            currency=paid.currency,
            reference=str(subscription.get("id", "")),
            email=paid.email or notes.get("email"),
            occurred_at=event_time(payload.get("created_at")),
        )
    if event_type in _REVERSALS:
        name, dispute = _REVERSALS[event_type]
        entity = _entity(payload, name)
        paid_by = str((entity or {}).get("payment_id") or (payment or {}).get("id") or "")
        if not paid_by:
            return Ignored(f"{event_type} names no payment")
        return PaymentReversed((paid_by,), dispute)
    if event_type in _SUBSCRIPTION_STATUS and subscription is not None:
        # Razorpay retries a delivery for hours, so an older event can come after a newer one: the payload's
        # `created_at` orders them.
        return SubscriptionStatusChanged(
            str(subscription.get("id", "")),
            _SUBSCRIPTION_STATUS[event_type],
            occurred_at=event_time(payload.get("created_at")),
        )
    return Ignored(f"{event_type or 'an event without a type'} needs no action")


__all__ = ["PAID_STATES", "RazorpayGateway", "RazorpayPayment", "signed_event_id", "translate_event"]
