"""Provider B: Stripe, through the official `stripe` SDK.

- Every purchase is a hosted Checkout Session (https://docs.stripe.com/api/checkout/sessions/create):
  `mode=payment` for the one-time products, `mode=subscription` with a monthly recurring
  `price_data` for Pro, so no Price objects need to exist in the dashboard. The buyer is redirected
  to `session.url`; nothing is issued on the way back, because the redirect proves nothing.
- Fulfilment happens on webhooks (https://docs.stripe.com/checkout/fulfillment): verified with
  `stripe.Webhook.construct_event` (HMAC over `timestamp.body`, 5-minute tolerance) and identified by
  the event id, which Stripe reuses when it retries a delivery.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

import stripe

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
from .providers import PROVIDER_B

log = logging.getLogger(__name__)

_TIMEOUT = 15
#: A Checkout Session id (cs_test_a1B2..., cs_live_...), checked before it goes into an API path.
_SESSION_ID = re.compile(r"cs_[A-Za-z0-9_]{1,250}")
#: Subscription statuses (https://docs.stripe.com/api/subscriptions/object#subscription_object-status) -> ours.
_SUBSCRIPTION_STATUS = {
    "active": SUBSCRIPTION_ACTIVE,
    "trialing": SUBSCRIPTION_ACTIVE,
    "past_due": SUBSCRIPTION_PAST_DUE,
    "unpaid": SUBSCRIPTION_PAST_DUE,
    "paused": SUBSCRIPTION_PAST_DUE,
    "incomplete_expired": SUBSCRIPTION_CANCELLED,
    "canceled": SUBSCRIPTION_CANCELLED,
}


class StripeGateway:
    """Checkout Sessions and webhooks at Stripe."""

    provider = PROVIDER_B
    sandbox = False

    def __init__(self, settings: PaymentSettings, *, http_client: stripe.HTTPClient | None = None) -> None:
        if not settings.stripe_configured:
            raise PaymentsUnavailable(messages.STRIPE_NOT_CONFIGURED)
        base = {"api": settings.stripe_api_base} if settings.stripe_api_base else None
        self._webhook_secret = settings.stripe_webhook_secret
        self._api_key = settings.stripe_secret_key
        self._client = stripe.StripeClient(
            settings.stripe_secret_key,
            base_addresses=base,  # type: ignore[arg-type]
            max_network_retries=2,  # the SDK retries with idempotency keys, so a retried create is not doubled
            http_client=http_client or stripe.RequestsClient(timeout=_TIMEOUT),
        )

    def create_checkout_session(
        self, price: Price, *, email: str, success_url: str, cancel_url: str, metadata: Mapping[str, str]
    ) -> tuple[str, str]:
        """A hosted checkout for one product: (session id, checkout URL)."""
        price_data: dict[str, Any] = {
            "currency": price.currency.lower(),
            "unit_amount": price.amount,
            "product_data": {"name": price.name, "description": price.description},
        }
        params: dict[str, Any] = {
            "line_items": [{"quantity": 1, "price_data": price_data}],
            "customer_email": email,
            "success_url": success_url,
            "cancel_url": cancel_url,
            "metadata": {"websec_product": price.product.value, **metadata},
        }
        if price.interval:
            price_data["recurring"] = {"interval": price.interval}
            params["mode"] = "subscription"
            params["subscription_data"] = {"metadata": {"websec_product": price.product.value, **metadata}}
        else:
            params["mode"] = "payment"
        try:
            session = self._client.v1.checkout.sessions.create(params=params)  # type: ignore[arg-type]
        except stripe.InvalidRequestError as exc:
            raise PaymentNotVerified(messages.stripe_refused_checkout(exc.user_message or exc)) from exc
        except stripe.StripeError as exc:
            log.warning("Stripe checkout session create failed: %s", exc)
            raise PaymentError(messages.provider_unreachable()) from exc
        if not session.url:
            raise PaymentError(messages.STRIPE_SESSION_WITHOUT_URL)
        return session.id, session.url

    def checkout_session_change(self, session_id: str) -> Change:
        """What a Checkout Session says now, read back when the buyer returns: the same as its
        `checkout.session.completed` event (https://docs.stripe.com/checkout/fulfillment: fulfil from the
        success page as well as the webhook, whichever comes first)."""
        if not _SESSION_ID.fullmatch(session_id):
            return Ignored(f"{session_id[:40]!r} is not a checkout session id")
        try:
            session = self._client.v1.checkout.sessions.retrieve(session_id)
        except stripe.StripeError as exc:
            log.warning("Stripe checkout session %s could not be read: %s", session_id, exc)
            raise PaymentError(messages.provider_unreachable()) from exc
        return translate_event("checkout.session.completed", session.to_dict())

    def subscription_status(self, subscription_id: str) -> str | None:
        """The subscription's status now, read from Stripe (https://docs.stripe.com/api/subscriptions/retrieve),
        as ours; None for a status that means nothing here (`incomplete`: not paid for the first time yet).
        Stripe's answer when its events cannot say which came first (https://docs.stripe.com/webhooks#event-ordering:
        retrieve the object when order matters). PaymentError when Stripe cannot be asked."""
        try:  # the id comes from a signed event, and the SDK quotes it into the path
            subscription = self._client.v1.subscriptions.retrieve(subscription_id)
        except stripe.StripeError as exc:
            log.warning("Stripe subscription %s could not be read: %s", subscription_id, exc)
            raise PaymentError(messages.provider_unreachable("subscription status")) from exc
        return _SUBSCRIPTION_STATUS.get(str(subscription.status))

    def parse_webhook(self, body: bytes, headers: Mapping[str, str]) -> ProviderEvent:
        """Verify (`stripe.Webhook.construct_event`) and translate one delivery; raises InvalidWebhook."""
        if not self._webhook_secret:
            raise InvalidWebhook(messages.STRIPE_WEBHOOKS_NOT_CONFIGURED)
        signature = headers.get("stripe-signature") or ""
        if not signature.isascii():  # hmac.compare_digest raises TypeError on a non-ASCII str: a 500, not a 400
            raise InvalidWebhook(messages.WEBHOOK_SIGNATURE_INVALID)
        try:
            event = stripe.Webhook.construct_event(body, signature, self._webhook_secret, api_key=self._api_key)
        except stripe.SignatureVerificationError:
            raise InvalidWebhook(messages.WEBHOOK_SIGNATURE_INVALID) from None
        except ValueError:  # not JSON, or not an event
            raise InvalidWebhook(messages.NOT_A_STRIPE_EVENT) from None
        data = event.to_dict()
        event_type = str(data.get("type", ""))
        obj = data.get("data", {}).get("object", {})
        change = translate_event(event_type, obj if isinstance(obj, Mapping) else {})
        if isinstance(change, SubscriptionCharged) and _invoice_payments_left_out(event_type, obj):
            change = dataclasses.replace(change, payment_references=self._paid_invoice_payments(change.payment_id))
        if isinstance(change, SubscriptionCharged | SubscriptionStatusChanged):
            # Stripe does not deliver events in order (https://docs.stripe.com/webhooks#event-ordering):
            # the event's `created` says which of two came first.
            change = dataclasses.replace(change, occurred_at=event_time(data.get("created")))
        return ProviderEvent(self.provider, str(data.get("id", ""))[:128], event_type[:64], change)

    def _paid_invoice_payments(self, invoice_id: str) -> tuple[str, ...]:
        """The payment intents (or charges) that paid an invoice, from Stripe
        (https://docs.stripe.com/api/invoice-payment/list). A failure is a 502: Stripe retries the event, and
        the charge it reports is recorded once however often it comes."""
        try:
            listed = self._client.v1.invoice_payments.list(params={"invoice": invoice_id, "status": "paid"})
        except stripe.StripeError as exc:
            log.warning("Stripe invoice payments of %s could not be listed: %s", invoice_id, exc)
            raise PaymentError(messages.provider_unreachable()) from exc
        return _payment_ids(item.to_dict() for item in listed.auto_paging_iter())


def _subscription_of_invoice(invoice: Mapping[str, Any]) -> str | None:
    """The invoice's subscription: top-level before API version 2025-03-31, under `parent` since."""
    top_level = invoice.get("subscription")
    if isinstance(top_level, str):
        return top_level
    details = (invoice.get("parent") or {}).get("subscription_details") or {}
    value = details.get("subscription")
    return value if isinstance(value, str) else None


def _payment_ids(invoice_payments: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The payment intent or charge of each paid InvoicePayment (API version 2025-03-31 and later)."""
    found: list[str] = []
    for item in invoice_payments:
        if not isinstance(item, Mapping) or item.get("status", "paid") != "paid":
            continue
        payment = item.get("payment") or {}
        found += [str(payment[k]) for k in ("payment_intent", "charge") if isinstance(payment.get(k), str)]
    return tuple(dict.fromkeys(found))


def _payments_of_invoice(invoice: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids a refund or dispute of this invoice's charge names: since API version 2025-03-31 the payment
    intent (or charge) of each paid InvoicePayment under `payments` (an includable property, often left out
    of events); before, the invoice's own `payment_intent` and `charge`."""
    listed = invoice.get("payments") or {}
    found = list(_payment_ids(listed.get("data") or [])) if isinstance(listed, Mapping) else []
    found += [str(invoice[k]) for k in ("payment_intent", "charge") if isinstance(invoice.get(k), str)]
    return tuple(dict.fromkeys(v for v in found if v))


def _invoice_payments_left_out(event_type: str, invoice: Any) -> bool:
    """A paid invoice whose event does not say what paid it: `payments` left out (or cut short) and no
    top-level ids (the older shape). Its payments are then asked for."""
    if event_type not in ("invoice.paid", "invoice.payment_succeeded") or not isinstance(invoice, Mapping):
        return False
    listed = invoice.get("payments")
    truncated = isinstance(listed, Mapping) and bool(listed.get("has_more"))
    return truncated or not _payments_of_invoice(invoice)


def _email(obj: Mapping[str, Any]) -> str | None:
    details = obj.get("customer_details") or {}
    return details.get("email") or obj.get("customer_email")


def translate_event(event_type: str, obj: Mapping[str, Any]) -> Change:
    """Stripe event -> what it means for us (https://docs.stripe.com/api/events/types)."""
    if event_type in ("checkout.session.completed", "checkout.session.async_payment_succeeded"):
        if obj.get("payment_status") != "paid":
            return Ignored(f"checkout {obj.get('id')} is {obj.get('payment_status')} (waiting for the payment)")
        amount, currency = int(obj.get("amount_total") or 0), str(obj.get("currency", "")).upper()
        if obj.get("mode") == "subscription" and obj.get("subscription"):
            return SubscriptionCharged(
                subscription_id=str(obj["subscription"]),
                payment_id=str(obj.get("invoice") or obj["id"]),
                amount=amount,
                currency=currency,
                reference=str(obj["id"]),
                email=_email(obj),
            )
        if obj.get("mode") == "payment":
            payment = obj.get("payment_intent")
            return PaymentCaptured(str(obj["id"]), str(payment) if payment else None, amount, currency, _email(obj))
        return Ignored(f"checkout mode {obj.get('mode')} is not used here")
    if event_type in ("invoice.paid", "invoice.payment_succeeded"):
        subscription = _subscription_of_invoice(obj)
        if subscription is None:
            return Ignored("invoice without a subscription")
        return SubscriptionCharged(
            subscription_id=subscription,
            payment_id=str(obj.get("id")),
            amount=int(obj.get("amount_paid") or 0),
            currency=str(obj.get("currency", "")).upper(),
            email=obj.get("customer_email"),
            payment_references=_payments_of_invoice(obj),
        )
    if event_type == "invoice.payment_failed":
        subscription = _subscription_of_invoice(obj)
        if subscription is None:
            return Ignored("invoice without a subscription")
        return SubscriptionStatusChanged(subscription, SUBSCRIPTION_PAST_DUE)
    if event_type in ("charge.refunded", "charge.dispute.created"):
        # https://docs.stripe.com/api/events/types#event_types-charge.refunded (a Charge) and
        # #event_types-charge.dispute.created (a Dispute naming its charge): issue 12.
        # A refund in part takes the product back too: each product is one indivisible item.
        dispute = event_type == "charge.dispute.created"
        ids = [obj.get("payment_intent"), obj.get("charge") if dispute else obj.get("id"), obj.get("invoice")]
        found = tuple(str(value) for value in ids if isinstance(value, str) and value)
        if not found:
            return Ignored(f"{event_type} names no payment")
        return PaymentReversed(found, dispute)
    if event_type == "customer.subscription.deleted":
        return SubscriptionStatusChanged(str(obj.get("id")), SUBSCRIPTION_CANCELLED)
    if event_type == "customer.subscription.updated":
        status = _SUBSCRIPTION_STATUS.get(str(obj.get("status")))
        if status is None:
            return Ignored(f"subscription status {obj.get('status')} needs no action")
        return SubscriptionStatusChanged(str(obj.get("id")), status)
    return Ignored(f"{event_type or 'an event without a type'} needs no action")


__all__ = ["StripeGateway", "translate_event"]
