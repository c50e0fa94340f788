"""What a provider tells us, reduced to the few facts fulfilment acts on.

Gateways translate webhooks (and browser confirmations, and sandbox clicks) into these
events; `fulfilment.Fulfilment.apply` is the one place that acts on them, so a Razorpay
webhook, a Stripe webhook and the sandbox's Pay button go through the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class PaymentCaptured:
    """A one-time checkout (Razorpay order, Stripe Checkout Session in payment mode) was paid."""

    reference: str  # our checkout reference: order id / checkout session id
    payment_id: str | None
    amount: int  # minor units, as the provider reports them
    currency: str
    email: str | None = None


@dataclass(frozen=True)
class SubscriptionCharged:
    """A subscription payment succeeded: the first one starts the subscription, later ones renew it."""

    subscription_id: str
    payment_id: str
    amount: int
    currency: str
    #: The checkout that created the subscription, when the provider says (Stripe's checkout session).
    reference: str | None = None
    email: str | None = None
    #: Other ids of this charge that a refund or dispute names instead of `payment_id` (Stripe: the paid
    #: invoice's payment intent or charge; `payment_id` is the invoice). Kept so a dispute finds it (issue 12).
    payment_references: tuple[str, ...] = ()
    #: When the provider says this happened (Stripe: the event's `created`; Razorpay: the payload's
    #: `created_at`); None when nobody says (a browser confirmation, the sandbox). See `occurred_at` below.
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class SubscriptionStatusChanged:
    """Renewal failed (past_due), the subscription ended (cancelled), or it recovered (active)."""

    subscription_id: str
    status: str  # the store's SUBSCRIPTION_ACTIVE, SUBSCRIPTION_PAST_DUE or SUBSCRIPTION_CANCELLED
    #: When the provider says this happened. Providers deliver events out of order (Stripe does not
    #: guarantee an order, Razorpay retries for hours): an event older than the last one applied to the
    #: subscription's status does not change it (`store.purchases.set_provider_subscription_status`); one of
    #: the same second that says otherwise is decided by the provider's status now (`Fulfilment._set_status`).
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class PaymentReversed:
    """The money of a payment went back (a refund) or is contested (a dispute, a chargeback): what it
    bought and is unused is revoked; on a dispute the subscription it paid for is suspended (issue 12)."""

    #: The provider's ids this payment may be recorded under (Razorpay: pay_...; Stripe: the payment
    #: intent, the charge, and the invoice when the event names one).
    payment_ids: tuple[str, ...]
    dispute: bool


@dataclass(frozen=True)
class Ignored:
    """An event we do not act on (logged and recorded as such)."""

    reason: str


Change = PaymentCaptured | SubscriptionCharged | SubscriptionStatusChanged | PaymentReversed | Ignored


@dataclass(frozen=True)
class ProviderEvent:
    """A verified webhook: who sent it, its id (for idempotency), its type, and what it means."""

    provider: str
    event_id: str
    event_type: str
    change: Change


def event_time(value: Any) -> datetime | None:
    """A provider's event time (Unix seconds) as an aware UTC datetime; None when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


__all__ = [
    "Change",
    "Ignored",
    "PaymentCaptured",
    "PaymentReversed",
    "ProviderEvent",
    "SubscriptionCharged",
    "SubscriptionStatusChanged",
    "event_time",
]
