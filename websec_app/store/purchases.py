"""Purchases: a checkout's payment row, then what a confirmed payment buys, in one transaction each.

A checkout records a `payments` row (status `created`) keyed by the provider's order,
checkout-session or subscription id: the *reference*. Confirmations arrive from the browser
(Razorpay's checkout callback), from webhooks and from the sandbox, possibly twice and in any
order. Each `settle_*` function below is the single place where one of them takes effect:

- it checks a condition and changes state with one conditional statement (a token row unique
  per payment, `paid_at IS NULL`, `status = 'pending'`), so only the first confirmation issues
  anything and replays change nothing;
- the email carrying what was issued is inserted into the outbox in the same transaction
  (`compose` renders it from the new secret), so a crash loses neither the token nor its email.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import false, or_, true
from sqlmodel import Session, col, delete, select, update

from ._secrets import hash_secret, new_secret
from ._sql import insert_ignoring_conflicts
from .keys import IssuedKey, _insert_key, normalise_email
from .models import (
    PLAN_PRO,
    PRODUCT_SUBSCRIPTION,
    SUBSCRIPTION_ACTIVE,
    SUBSCRIPTION_CANCELLED,
    SUBSCRIPTION_DISPUTED,
    SUBSCRIPTION_PENDING,
    ComplianceToken,
    Payment,
    PaymentReference,
    PendingReversal,
    ScanToken,
    Subscription,
)
from .outbox import QueuedEmail, enqueue_email
from .payments import STATUS_CREATED, STATUS_DISPUTED, STATUS_PAID, STATUS_REFUNDED, record_payment
from .tokens import (
    COMPLIANCE_TOKEN_PREFIX,
    COMPLIANCE_TOKEN_USABLE,
    SCAN_TOKEN_LIFETIME,
    SCAN_TOKEN_PREFIX,
    IssuedToken,
    Reservation,
)


@dataclass(frozen=True)
class CheckoutRecord:
    """What the store knows about a started checkout (a `payments` row)."""

    payment_id: int
    provider: str
    product: str
    email: str
    amount: int
    currency: str
    reference: str
    status: str
    provider_payment_id: str | None

    @classmethod
    def of(cls, row: Payment) -> CheckoutRecord:
        if row.id is None or row.provider_order_id is None:  # pragma: no cover - checkouts always have both
            raise ValueError("not a checkout row")
        return cls(
            row.id,
            row.provider,
            row.product,
            row.email,
            row.amount,
            row.currency,
            row.provider_order_id,
            row.status,
            row.provider_payment_id,
        )


def open_checkout(
    session: Session,
    *,
    provider: str,
    product: str,
    email: str,
    amount: int,
    currency: str,
    reference: str,
    now: datetime,
) -> CheckoutRecord:
    """Record a started checkout (idempotent per reference)."""
    row, _ = record_payment(
        session,
        provider=provider,
        product=product,
        email=email,
        amount=amount,
        currency=currency,
        status=STATUS_CREATED,
        now=now,
        provider_order_id=reference,
    )
    return CheckoutRecord.of(row)


def find_checkout(session: Session, provider: str, reference: str) -> CheckoutRecord | None:
    row = session.exec(
        select(Payment).where(Payment.provider == provider, Payment.provider_order_id == reference)
    ).first()
    return CheckoutRecord.of(row) if row is not None else None


def _mark_paid(
    session: Session,
    payment_id: int,
    now: datetime,
    provider_payment_id: str | None,
    subscription_id: int | None = None,
) -> bool:
    values: dict[str, object] = {"status": STATUS_PAID, "updated_at": now}
    if provider_payment_id is not None:
        values["provider_payment_id"] = provider_payment_id
    if subscription_id is not None:
        values["subscription_id"] = subscription_id
    result = session.exec(
        update(Payment).where(col(Payment.id) == payment_id, col(Payment.status) != STATUS_PAID).values(**values)
    )
    return result.rowcount == 1


def _enqueue(session: Session, email: QueuedEmail | None, now: datetime) -> None:
    if email is not None:
        enqueue_email(session, email, now, commit=False)


# --- one-time scan ----------------------------------------------------------------------------------------


def settle_one_time_scan(
    session: Session,
    checkout: CheckoutRecord,
    *,
    now: datetime,
    provider_payment_id: str | None,
    compose: Callable[[IssuedToken], QueuedEmail],
) -> IssuedToken | None:
    """Mark the payment paid and issue its one scan token, emailed. None: a token was issued before."""
    plain = new_secret(SCAN_TOKEN_PREFIX)
    expires = now + SCAN_TOKEN_LIFETIME
    created = insert_ignoring_conflicts(
        session,
        ScanToken,
        {
            "token_hash": hash_secret(plain),
            "email": normalise_email(checkout.email),
            "payment_id": checkout.payment_id,  # unique: the second confirmation inserts nothing
            "created_at": now,
            "expires_at": expires,
        },
    )
    if not created:
        session.rollback()
        return None
    token_id = session.exec(select(ScanToken.id).where(ScanToken.payment_id == checkout.payment_id)).one()
    issued = IssuedToken(plain, token_id or 0, normalise_email(checkout.email), expires)
    _mark_paid(session, checkout.payment_id, now, provider_payment_id)
    _enqueue(session, compose(issued), now)
    session.commit()
    return issued


# --- compliance report ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComplianceSettlement:
    newly_paid: bool
    #: A fresh token, when the settlement issued one (it is in the queued email too).
    token: str | None = None


def settle_compliance(
    session: Session,
    checkout: CheckoutRecord,
    *,
    now: datetime,
    provider_payment_id: str | None,
    compose: Callable[[IssuedToken], QueuedEmail] | None,
) -> ComplianceSettlement:
    """Mark the compliance token of this checkout paid (first confirmation wins).

    Without `compose` the buyer already holds the token (Razorpay: the pay response carried it).
    With `compose` nobody has seen it yet (Stripe: the token is emailed once paid): the row gets a
    fresh secret in the same conditional update, and only that value is emailed.
    """
    row = session.exec(
        select(ComplianceToken).where(
            ComplianceToken.provider == checkout.provider, ComplianceToken.provider_order_id == checkout.reference
        )
    ).first()
    if row is None or row.id is None:
        session.rollback()
        return ComplianceSettlement(False)
    values: dict[str, object] = {"paid_at": now, "payment_id": checkout.payment_id}
    plain = None
    if compose is not None:
        plain = new_secret(COMPLIANCE_TOKEN_PREFIX)
        values["token_hash"] = hash_secret(plain)
    result = session.exec(
        update(ComplianceToken)
        .where(col(ComplianceToken.id) == row.id, col(ComplianceToken.paid_at).is_(None))
        .values(**values)
    )
    if result.rowcount != 1:
        session.rollback()
        return ComplianceSettlement(False)
    _mark_paid(session, checkout.payment_id, now, provider_payment_id)
    if compose is not None and plain is not None:
        _enqueue(session, compose(IssuedToken(plain, row.id, row.email)), now)
    session.commit()
    return ComplianceSettlement(True, plain)


def claim_compliance_token_with_email(
    session: Session, reservation: Reservation, now: datetime, email: QueuedEmail
) -> tuple[int | None, int | None]:
    """Use a reserved compliance token and queue the report email, atomically (spec 4.8: single use).

    Only the reservation's holder can use it (even after its lease ran out, as long as nobody took it over),
    and never once its payment was refunded or disputed. Returns (token id, outbox email id), or
    (None, None) when the token is not this holder's to use (the caller says why).
    """
    claimed = session.exec(
        update(ComplianceToken)
        .where(
            col(ComplianceToken.id) == reservation.token_id,
            col(ComplianceToken.reserved_by) == reservation.holder,
            *COMPLIANCE_TOKEN_USABLE,
        )
        .values(used_at=now, reserved_until=None, reserved_by=None)
        .returning(col(ComplianceToken.id))
    ).first()
    if claimed is None:
        session.rollback()
        return None, None
    email_id = enqueue_email(session, email, now, commit=False)
    session.commit()
    return claimed[0], email_id


# --- subscriptions ----------------------------------------------------------------------------------------


def _status_written(now: datetime) -> dict[str, object]:
    """The values every write of a subscription's status sets besides it (`Subscription.status_version`)."""
    return {"updated_at": now, "status_version": col(Subscription.status_version) + 1}


def open_subscription(
    session: Session, *, provider: str, provider_subscription_id: str, email: str, now: datetime
) -> Subscription:
    """A subscription that is not paid yet (status pending): idempotent per provider id."""
    insert_ignoring_conflicts(
        session,
        Subscription,
        {
            "email": normalise_email(email),
            "plan": PLAN_PRO,
            "status": SUBSCRIPTION_PENDING,
            "provider": provider,
            "provider_subscription_id": provider_subscription_id,
            "created_at": now,
            "updated_at": now,
        },
    )
    session.commit()
    found = find_provider_subscription(session, provider, provider_subscription_id)
    if found is None:  # pragma: no cover - inserted just now or before
        raise RuntimeError("subscription row vanished after insert")
    return found


def find_provider_subscription(session: Session, provider: str, provider_subscription_id: str) -> Subscription | None:
    return session.exec(
        select(Subscription).where(
            Subscription.provider == provider, Subscription.provider_subscription_id == provider_subscription_id
        )
    ).first()


def settle_subscription_start(
    session: Session,
    subscription: Subscription,
    *,
    now: datetime,
    checkout: CheckoutRecord | None,
    provider_payment_id: str | None,
    compose: Callable[[IssuedKey], QueuedEmail],
    occurred_at: datetime | None = None,
) -> IssuedKey | None:
    """First payment confirmed: pending -> active, and the API key issued and emailed. None if done before.
    `occurred_at`, the provider's time of the charge, is kept (see `set_provider_subscription_status`)."""
    if subscription.id is None:  # pragma: no cover
        raise ValueError("unsaved subscription")
    stamp: dict[str, object] = {"status_event_at": occurred_at} if occurred_at is not None else {}
    result = session.exec(
        update(Subscription)
        .where(col(Subscription.id) == subscription.id, col(Subscription.status) == SUBSCRIPTION_PENDING)
        .values(status=SUBSCRIPTION_ACTIVE, **_status_written(now), **stamp)
    )
    if result.rowcount != 1:
        session.rollback()
        return None
    subscription.status = SUBSCRIPTION_ACTIVE
    issued = _insert_key(session, subscription, now)
    if checkout is not None:
        _mark_paid(session, checkout.payment_id, now, provider_payment_id, subscription.id)
    _enqueue(session, compose(issued), now)
    session.commit()
    return issued


def record_subscription_charge(
    session: Session,
    subscription: Subscription,
    *,
    provider_payment_id: str,
    amount: int,
    currency: str,
    now: datetime,
) -> bool:
    """A renewal charge (idempotent per provider payment id). True the first time it is seen."""
    _, created = record_payment(
        session,
        provider=subscription.provider,
        product=PRODUCT_SUBSCRIPTION,
        email=subscription.email,
        amount=amount,
        currency=currency,
        status=STATUS_PAID,
        now=now,
        provider_payment_id=provider_payment_id,
    )
    session.exec(  # so a dispute of this charge finds the subscription
        update(Payment)
        .where(
            col(Payment.provider) == subscription.provider,
            col(Payment.provider_payment_id) == provider_payment_id,
            col(Payment.subscription_id).is_(None),
        )
        .values(subscription_id=subscription.id)
    )
    session.commit()
    return created


def record_payment_references(
    session: Session, provider: str, provider_payment_id: str, references: Sequence[str], *, now: datetime
) -> int:
    """Other ids the provider names this payment by (Stripe: a subscription invoice's payment intent or
    charge), so a refund or a dispute naming only those finds it (`reverse_payment`). Idempotent; the
    payment row need not exist yet (the invoice's events arrive in any order). Returns the rows added."""
    added = 0
    for reference in dict.fromkeys(r for r in references if r and r != provider_payment_id):
        added += insert_ignoring_conflicts(
            session,
            PaymentReference,
            {
                "provider": provider,
                "reference": reference,
                "provider_payment_id": provider_payment_id,
                "created_at": now,
            },
        )
    session.commit()
    return added


@dataclass(frozen=True)
class StatusUpdate:
    """What a provider's status event did to a subscription."""

    changed: bool
    #: The event happened before the last one applied to the status (delivered late): it changed nothing.
    stale: bool = False
    #: The event is of the same second as the last one applied and says otherwise, or that second's status is
    #: unconfirmed: it changed nothing, and only the provider can say which status is current
    #: (`decide_subscription_status`, or `hold_unconfirmed_status` when the provider cannot be asked).
    undecided: bool = False
    #: When undecided: the status found and the row's `status_version` then, which a decision must find unchanged.
    found: str = ""
    version: int = 0
    #: When the provider decided an undecided event (`decide_subscription_status`): the status it gave.
    decided: str = ""


def set_provider_subscription_status(
    session: Session, subscription_id: int, status: str, now: datetime, *, occurred_at: datetime | None = None
) -> StatusUpdate:
    """Renewed (active), renewal failed (past_due) or ended (cancelled). Cancelled is final, and so is
    disputed for provider events (an operator settles a chargeback); a pending subscription can only be
    cancelled (it becomes active through `settle_subscription_start`, which issues its key).

    Providers deliver events out of order, so `occurred_at` (the provider's time of the event) is compared
    with `status_event_at`, the time of the newest event applied so far: an older event changes nothing
    (`stale`), a newer one is applied and its time kept, also when the status stays the same (an
    `invoice.paid` of an active subscription still outdates the failure that came before it). Times are
    whole seconds, so an event of the same second that says otherwise cannot be ordered by them: it changes
    nothing and comes back `undecided`, for the provider to decide (`decide_subscription_status`); so does
    any event of that second while the status is unconfirmed. A cancellation applies whatever its time:
    nothing follows it at the provider. Without `occurred_at` (nobody said when) the event is applied and
    the kept time is left as it is. Every change is one conditional statement, so concurrent deliveries
    cannot interleave between the check and the write; each counts in `status_version`."""
    allowed = [
        col(Subscription.id) == subscription_id,
        col(Subscription.status) != SUBSCRIPTION_CANCELLED,
        col(Subscription.status) != SUBSCRIPTION_DISPUTED,
        or_(
            col(Subscription.status) != SUBSCRIPTION_PENDING,
            true() if status == SUBSCRIPTION_CANCELLED else false(),
        ),
    ]
    stamp: dict[str, object] = {}
    if occurred_at is not None:
        stamp = {"status_event_at": occurred_at, "status_unconfirmed": False}
        if status != SUBSCRIPTION_CANCELLED:  # strictly newer: a tie is decided below
            allowed.append(
                or_(col(Subscription.status_event_at).is_(None), col(Subscription.status_event_at) < occurred_at)
            )
    result = session.exec(
        update(Subscription)
        .where(*allowed, col(Subscription.status) != status)
        .values(status=status, **_status_written(now), **stamp)
    )
    if result.rowcount == 1:
        session.commit()
        return StatusUpdate(changed=True)
    if occurred_at is None:
        session.commit()
        return StatusUpdate(changed=False)
    kept = session.exec(
        update(Subscription).where(*allowed, col(Subscription.status) == status).values(**_status_written(now), **stamp)
    )
    if kept.rowcount == 1:
        session.commit()
        return StatusUpdate(changed=False)
    found = session.exec(
        select(
            Subscription.status,
            Subscription.status_event_at,
            Subscription.status_unconfirmed,
            Subscription.status_version,
        ).where(col(Subscription.id) == subscription_id)
    ).first()
    session.commit()
    if found is None or found[0] in (SUBSCRIPTION_CANCELLED, SUBSCRIPTION_DISPUTED, SUBSCRIPTION_PENDING):
        return StatusUpdate(changed=False)
    found_status, event_at, unconfirmed, version = found
    if event_at is not None and event_at > occurred_at:
        return StatusUpdate(changed=False, stale=found_status != status)
    if event_at == occurred_at and (found_status != status or unconfirmed):
        return StatusUpdate(changed=False, undecided=True, found=found_status, version=version)
    return StatusUpdate(changed=False)


def decide_subscription_status(
    session: Session, subscription_id: int, status: str, now: datetime, *, undecided: StatusUpdate
) -> StatusUpdate | None:
    """The provider's answer to an `undecided` event: the subscription's status now, at the provider. It is
    written (and confirmed) only if nothing wrote the status since the event was found undecided (the same
    `status_version`), so an answer read before another write cannot undo it; the kept time stays that of
    the tie. None when something did: the caller looks again. A cancellation or a dispute stays final."""
    if not _write_if_unchanged(session, subscription_id, undecided, status, now, unconfirmed=False):
        return None
    return StatusUpdate(changed=status != undecided.found, found=undecided.found, decided=status)


def hold_unconfirmed_status(session: Session, subscription_id: int, now: datetime, *, undecided: StatusUpdate) -> bool:
    """The provider could not be asked about an `undecided` event. Until it can, the subscription is active
    (of two events of one second that disagree, one said active: the benefit of the doubt goes to the payer,
    whose purchase is never lost) and marked unconfirmed, so that an event of that second delivered again asks
    the provider (`set_provider_subscription_status`) and a newer event decides as usual. Written only if
    nothing wrote the status since; True when it was."""
    return _write_if_unchanged(session, subscription_id, undecided, SUBSCRIPTION_ACTIVE, now, unconfirmed=True)


def _write_if_unchanged(
    session: Session, subscription_id: int, undecided: StatusUpdate, status: str, now: datetime, *, unconfirmed: bool
) -> bool:
    """Write `status` if nothing wrote the status since `undecided` was found (its `status_version`) and the
    subscription is not cancelled or disputed (final); True when it was written."""
    result = session.exec(
        update(Subscription)
        .where(
            col(Subscription.id) == subscription_id,
            col(Subscription.status_version) == undecided.version,
            col(Subscription.status).not_in((SUBSCRIPTION_CANCELLED, SUBSCRIPTION_DISPUTED)),
        )
        .values(status=status, status_unconfirmed=unconfirmed, **_status_written(now))
    )
    session.commit()
    return result.rowcount == 1


# --- refunds and disputes (issue 12) ---------------------------------------------------------------------


def _payments_named(session: Session, provider: str, named: Sequence[str]) -> Sequence[Payment]:
    """The payment rows recorded under these provider ids, or under a payment they are a reference of."""
    ids = list(named)
    if ids:
        ids += session.exec(
            select(PaymentReference.provider_payment_id).where(
                PaymentReference.provider == provider, col(PaymentReference.reference).in_(ids)
            )
        ).all()
    if not ids:
        return []
    return session.exec(
        select(Payment).where(Payment.provider == provider, col(Payment.provider_payment_id).in_(ids))
    ).all()


def pending_reversal(session: Session, provider: str, provider_payment_ids: Sequence[str]) -> bool | None:
    """Whether a refund or dispute of this payment came before it was settled here: None when none did,
    else True for a dispute, False for a refund (`reverse_payment` kept it)."""
    ids = [value for value in provider_payment_ids if value]
    if not ids:
        return None
    found = session.exec(
        select(PendingReversal.dispute).where(
            PendingReversal.provider == provider, col(PendingReversal.provider_payment_id).in_(ids)
        )
    ).all()
    return any(found) if found else None


def settle_reversed_checkout(
    session: Session, checkout: CheckoutRecord, *, provider_payment_id: str | None, dispute: bool, now: datetime
) -> bool:
    """A checkout whose payment was refunded or disputed before its capture was settled: recorded as such
    (under the provider's payment id, so later events find it) and nothing issued. True the first time."""
    values: dict[str, object] = {"status": STATUS_DISPUTED if dispute else STATUS_REFUNDED, "updated_at": now}
    if provider_payment_id is not None:
        values["provider_payment_id"] = provider_payment_id
    result = session.exec(
        update(Payment)
        .where(col(Payment.id) == checkout.payment_id, col(Payment.status) == STATUS_CREATED)
        .values(**values)
    )
    session.commit()
    return result.rowcount == 1


@dataclass(frozen=True)
class Reversal:
    """What a refund or a dispute of a payment changed: nothing at all on a replay."""

    payments: int  # payment rows it concerned (0: not a payment made here, or not settled yet)
    tokens_revoked: int
    subscriptions_suspended: int
    #: No payment row had these ids yet: the reversal is kept for the settlement that comes later.
    pending: bool = False


#: How long a reversal waits for its payment's capture. Neither provider delivers an event that late: Stripe
#: retries a webhook for up to 3 days and keeps events to resend for 30 days; Razorpay retries for 24 hours.
#: Without a bound, every refund or dispute of a payment made elsewhere on the same provider account (another
#: product's charge) would be kept for ever.
PENDING_REVERSAL_KEPT = timedelta(days=90)


def reverse_payment(
    session: Session, provider: str, provider_payment_ids: Sequence[str], *, dispute: bool, now: datetime
) -> Reversal:
    """The money of a payment went back (refund) or is contested (dispute): the payment is marked so, the
    unused tokens it bought are revoked (a used one stays used), and on a dispute the subscription it paid
    for is suspended (`disputed`: its key answers 403). Every change is conditional, so a replay changes
    nothing. An id recorded as a reference of another payment (`record_payment_references`) stands for it
    too: that is how a Stripe dispute, naming a charge and a payment intent, finds the subscription invoice
    they paid."""
    named = [value for value in provider_payment_ids if value]
    rows = _payments_named(session, provider, named)
    if not rows and named:
        # Before its capture was settled here (webhooks come in any order): kept, so the settlement that comes
        # later issues nothing (`pending_reversal`). Then looked up again: a settlement that committed
        # meanwhile, after its own check of the pending reversals, is found now and reversed below. Those whose
        # capture can no longer come are dropped on the way (PENDING_REVERSAL_KEPT).
        session.exec(delete(PendingReversal).where(col(PendingReversal.created_at) < now - PENDING_REVERSAL_KEPT))
        for value in dict.fromkeys(named):
            insert_ignoring_conflicts(
                session,
                PendingReversal,
                {"provider": provider, "provider_payment_id": value, "dispute": dispute, "created_at": now},
            )
        if dispute:  # a dispute after a refund of the same payment still suspends what it paid for
            session.exec(
                update(PendingReversal)
                .where(col(PendingReversal.provider) == provider, col(PendingReversal.provider_payment_id).in_(named))
                .values(dispute=True)
            )
        session.commit()
        rows = _payments_named(session, provider, named)
        if not rows:
            return Reversal(0, 0, 0, pending=True)
    status = STATUS_DISPUTED if dispute else STATUS_REFUNDED
    revoked = suspended = 0
    for row in rows:
        session.exec(update(Payment).where(col(Payment.id) == row.id).values(status=status, updated_at=now))
        revoked += session.exec(
            update(ScanToken)
            .where(
                col(ScanToken.payment_id) == row.id,
                col(ScanToken.used_at).is_(None),
                col(ScanToken.revoked_at).is_(None),
            )
            .values(revoked_at=now)
        ).rowcount
        revoked += session.exec(
            update(ComplianceToken)
            .where(
                col(ComplianceToken.payment_id) == row.id,
                col(ComplianceToken.used_at).is_(None),
                col(ComplianceToken.revoked_at).is_(None),
            )
            .values(revoked_at=now)
        ).rowcount
        subscription_id = row.subscription_id
        if subscription_id is None and row.product == PRODUCT_SUBSCRIPTION and row.provider_order_id:
            found = find_provider_subscription(session, provider, row.provider_order_id)
            subscription_id = found.id if found is not None else None
        if dispute and subscription_id is not None:
            suspended += session.exec(
                update(Subscription)
                .where(
                    col(Subscription.id) == subscription_id,
                    col(Subscription.status).not_in((SUBSCRIPTION_DISPUTED, SUBSCRIPTION_CANCELLED)),
                )
                .values(status=SUBSCRIPTION_DISPUTED, **_status_written(now))
            ).rowcount
    session.commit()
    return Reversal(len(rows), revoked, suspended)


__all__ = [
    "CheckoutRecord",
    "ComplianceSettlement",
    "Reversal",
    "StatusUpdate",
    "reverse_payment",
    "claim_compliance_token_with_email",
    "decide_subscription_status",
    "find_checkout",
    "find_provider_subscription",
    "hold_unconfirmed_status",
    "open_checkout",
    "open_subscription",
    "pending_reversal",
    "record_payment_references",
    "record_subscription_charge",
    "settle_compliance",
    "settle_reversed_checkout",
    "settle_one_time_scan",
    "settle_subscription_start",
    "set_provider_subscription_status",
]
