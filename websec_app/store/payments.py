"""Payments and provider webhook events, shaped for idempotent processing (issue 5 uses these).

Provider ids are unique per provider, so recording the same payment twice (a webhook
retried, a redirect reloaded) finds the first row instead of creating a second one, and
a processed event id is refused the second time.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select, update

from ._sql import insert_ignoring_conflicts
from .keys import normalise_email
from .models import Payment, WebhookEvent

STATUS_CREATED = "created"
STATUS_PAID = "paid"
STATUS_FAILED = "failed"
STATUS_REFUNDED = "refunded"
#: The buyer disputed the charge with their bank (a chargeback).
STATUS_DISPUTED = "disputed"


def record_payment(
    session: Session,
    *,
    provider: str,
    product: str,
    email: str,
    amount: int,
    currency: str,
    status: str,
    now: datetime,
    provider_order_id: str | None = None,
    provider_payment_id: str | None = None,
) -> tuple[Payment, bool]:
    """The payment row for these provider ids, and whether this call created it."""
    if provider_order_id is None and provider_payment_id is None:
        raise ValueError("a payment needs a provider order id or payment id")
    created = insert_ignoring_conflicts(
        session,
        Payment,
        {
            "provider": provider,
            "product": product,
            "email": normalise_email(email),
            "amount": amount,
            "currency": currency.upper(),
            "status": status,
            "provider_order_id": provider_order_id,
            "provider_payment_id": provider_payment_id,
            "created_at": now,
            "updated_at": now,
        },
    )
    session.commit()
    payment = find_payment(
        session, provider, provider_payment_id=provider_payment_id, provider_order_id=provider_order_id
    )
    if payment is None:  # pragma: no cover - the insert or an earlier one made it
        raise RuntimeError("payment row vanished after insert")
    return payment, created


def find_payment(
    session: Session, provider: str, *, provider_payment_id: str | None = None, provider_order_id: str | None = None
) -> Payment | None:
    query = select(Payment).where(Payment.provider == provider)
    if provider_payment_id is not None:
        query = query.where(Payment.provider_payment_id == provider_payment_id)
    elif provider_order_id is not None:
        query = query.where(Payment.provider_order_id == provider_order_id)
    else:
        raise ValueError("give a provider payment id or order id")
    return session.exec(query).first()


def set_payment_status(
    session: Session, payment_id: int, status: str, now: datetime, provider_payment_id: str | None = None
) -> None:
    values: dict[str, object] = {"status": status, "updated_at": now}
    if provider_payment_id is not None:
        values["provider_payment_id"] = provider_payment_id
    session.exec(update(Payment).where(col(Payment.id) == payment_id).values(**values))
    session.commit()


def record_webhook_event(
    session: Session,
    *,
    provider: str,
    event_id: str,
    event_type: str,
    now: datetime,
    outcome: str | None = None,
    detail: str | None = None,
) -> bool:
    """True the first time an event id is seen; False for a retry (skip processing it)."""
    created = insert_ignoring_conflicts(
        session,
        WebhookEvent,
        {
            "provider": provider,
            "event_id": event_id,
            "event_type": event_type,
            "received_at": now,
            "outcome": outcome,
            "detail": detail[:500] if detail else None,
        },
    )
    session.commit()
    return created


def find_webhook_event(session: Session, provider: str, event_id: str) -> WebhookEvent | None:
    return session.exec(
        select(WebhookEvent).where(WebhookEvent.provider == provider, WebhookEvent.event_id == event_id)
    ).first()
