"""Fulfilment: the one place a confirmed payment takes effect, and the webhooks that report most of them.

Every way a payment can be confirmed (Razorpay's checkout callback, `POST /api/verify-one-time`, a Razorpay
or Stripe webhook, the generate endpoint asking Razorpay, the sandbox's Pay button) becomes an event of
`events.py` and goes through `Fulfilment.apply`, which checks amount and currency against the price table
and settles it in the store (`store/purchases.py`): the first confirmation issues the token or key and
queues its email in one transaction; every later one changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from websec_app.settings import Settings
from websec_app.store import (
    Database,
    IssuedKey,
    IssuedToken,
    find_compliance_token_by_order,
    monthly_scan_limit,
)
from websec_app.store.models import SUBSCRIPTION_ACTIVE, SUBSCRIPTION_PENDING, Subscription
from websec_app.store.payments import find_webhook_event, record_webhook_event
from websec_app.store.purchases import (
    CheckoutRecord,
    StatusUpdate,
    decide_subscription_status,
    find_checkout,
    find_provider_subscription,
    hold_unconfirmed_status,
    open_subscription,
    pending_reversal,
    record_payment_references,
    record_subscription_charge,
    reverse_payment,
    set_provider_subscription_status,
    settle_compliance,
    settle_one_time_scan,
    settle_reversed_checkout,
    settle_subscription_start,
)

from ..email.outbox import notify_outbox
from ..email.render import api_key_email, compliance_token_email, queued, scan_token_email
from ..prices import Price, Product, price_for
from . import messages
from .errors import PaymentError, PaymentsUnavailable
from .events import (
    Change,
    Ignored,
    PaymentCaptured,
    PaymentReversed,
    SubscriptionCharged,
    SubscriptionStatusChanged,
)
from .providers import PROVIDER_B
from .sandbox import SandboxGateway

if TYPE_CHECKING:
    from .gateways import Gateways

log = logging.getLogger(__name__)

#: Outcomes recorded with each webhook event (`webhook_events.outcome`).
FULFILLED = "fulfilled"
ALREADY_FULFILLED = "already_fulfilled"
RENEWED = "renewed"
STATUS_CHANGED = "status_changed"
UNCHANGED = "unchanged"
AMOUNT_MISMATCH = "amount_mismatch"
IGNORED = "ignored"
DUPLICATE = "duplicate"
#: A refund or dispute took back unused tokens (REVOKED) or suspended a subscription's key (SUSPENDED).
REVOKED = "revoked"
SUSPENDED = "suspended"
#: A refund or dispute of a payment not settled here yet: kept, and its settlement issues nothing.
REVERSAL_PENDING = "reversal_pending"
#: A capture whose refund or dispute came first: nothing issued (or what was issued taken back at once).
REVERSED_BEFORE = "reversed_before"

#: How often one status event asks the provider when the status is written by others while it asks: past that,
#: the webhook answers 502 and the provider delivers the event again later.
STATUS_DECISION_ROUNDS = 3


@dataclass(frozen=True)
class Confirmation:
    """The result of a confirmed payment, for the buyer."""

    product: str
    email: str
    message: str
    #: The one-time scan or compliance token, when this confirmation issued one (it is emailed too).
    token: str | None = None
    newly_fulfilled: bool = True


@dataclass(frozen=True)
class Outcome:
    """What applying an event did: one of the outcome names above, a detail for operators, and for the
    buyer the confirmation (when the event was about a purchase made here)."""

    name: str
    detail: str
    confirmation: Confirmation | None = None


@dataclass
class Fulfilment:
    settings: Settings
    database: Database
    gateways: Gateways
    clock: Callable[[], datetime]

    def handle_webhook(self, provider: str, body: bytes, headers: Mapping[str, str]) -> Outcome:
        """Verify, de-duplicate, apply and record one webhook delivery (InvalidWebhook -> 400)."""
        gateway = self.gateways.get(provider)
        if isinstance(gateway, SandboxGateway):
            raise PaymentsUnavailable(messages.sandbox_sends_no_webhooks(provider))
        event = gateway.parse_webhook(body, headers)
        with self.database.session() as session:
            seen = find_webhook_event(session, provider, event.event_id)
        if seen is not None:
            log.info("%s webhook %s (%s) was processed before: ignored", provider, event.event_id, event.event_type)
            return Outcome(DUPLICATE, f"first processed at {seen.received_at.isoformat()}: {seen.outcome}")
        outcome = self.apply(provider, event.change)
        with self.database.session() as session:
            record_webhook_event(
                session,
                provider=provider,
                event_id=event.event_id,
                event_type=event.event_type,
                now=self.clock(),
                outcome=outcome.name,
                detail=outcome.detail,
            )
        log.info("%s webhook %s (%s): %s, %s", provider, event.event_id, event.event_type, outcome.name, outcome.detail)
        return outcome

    def apply(self, provider: str, change: Change, *, recipient: str | None = None) -> Outcome:
        """Settle one event in the store; `recipient` overrides the checkout's email for what it issues."""
        if isinstance(change, PaymentCaptured):
            return self._payment_captured(provider, change, recipient)
        if isinstance(change, SubscriptionCharged):
            outcome = self._subscription_charged(provider, change)
            if outcome.name == FULFILLED:  # a refund or dispute of this charge may have come first
                return self._reversed_meanwhile(provider, (change.payment_id, *change.payment_references), outcome)
            return outcome  # a renewal looks for one itself (`_subscription_charged`)
        if isinstance(change, SubscriptionStatusChanged):
            return self._subscription_status(provider, change)
        if isinstance(change, PaymentReversed):
            return self._payment_reversed(provider, change)
        return Outcome(IGNORED, change.reason if isinstance(change, Ignored) else repr(change))

    def _queue(self, rendered: Any, *, dedupe_key: str | None) -> Any:
        """A rendered email as an outbox row from this service's sender, at this service's clock."""
        return queued(rendered, sender=self.settings.mail.sender, now=self.clock(), dedupe_key=dedupe_key)

    def _amount_mismatch(self, provider: str, checkout: CheckoutRecord | None, price: Price, change: Any) -> bool:
        expected_ok = price.matches(change.amount, change.currency)
        checkout_ok = checkout is None or (checkout.amount, checkout.currency) == (change.amount, change.currency)
        if expected_ok and checkout_ok:
            return False
        log.error(
            "%s reports %s %s for %s, the price is %s %s: nothing issued",
            provider,
            change.amount,
            change.currency,
            price.product.value,
            price.amount,
            price.currency,
        )
        return True

    def _payment_captured(self, provider: str, change: PaymentCaptured, recipient: str | None) -> Outcome:
        with self.database.session() as session:
            checkout = find_checkout(session, provider, change.reference)
        if checkout is None:
            return Outcome(IGNORED, f"no checkout {change.reference} was started here")
        price = price_for(checkout.product, provider)
        if self._amount_mismatch(provider, checkout, price, change):
            return Outcome(AMOUNT_MISMATCH, f"{change.amount} {change.currency} for {checkout.reference}")
        to = recipient or checkout.email
        if checkout.product not in (Product.ONE_TIME_SCAN, Product.COMPLIANCE_REPORT):
            return Outcome(IGNORED, f"{checkout.product} checkouts are not paid by a one-time payment")
        paid_by = (change.payment_id,) if change.payment_id else ()
        with self.database.session() as session:
            held = pending_reversal(session, provider, paid_by)
            if held is not None:  # refunded or disputed before this capture reached us: nothing to issue
                settle_reversed_checkout(
                    session, checkout, provider_payment_id=change.payment_id, dispute=held, now=self.clock()
                )
        if held is not None:
            what = "disputed" if held else "refunded"
            log.warning("%s payment %s was %s before its capture arrived: nothing issued", provider, paid_by, what)
            return Outcome(REVERSED_BEFORE, f"{checkout.reference} was {what} before its capture: nothing issued")
        if checkout.product == Product.ONE_TIME_SCAN:
            outcome = self._scan_token(checkout, change, to)
        else:
            outcome = self._compliance_token(provider, checkout, change, to)
        if outcome.name == FULFILLED:
            return self._reversed_meanwhile(provider, paid_by, outcome)
        return outcome

    def _reversed_meanwhile(self, provider: str, paid_by: tuple[str, ...], outcome: Outcome) -> Outcome:
        """After a settlement committed: a refund or dispute that was kept while it ran (it checked before)
        is applied now, so what was just issued is taken back. With `reverse_payment` looking again after it
        keeps one, either side sees the other whatever the interleaving."""
        with self.database.session() as session:
            held = pending_reversal(session, provider, paid_by)
            if held is None:
                return outcome
            reverse_payment(session, provider, paid_by, dispute=held, now=self.clock())
        log.warning("%s payment %s was reversed while it was settled: what it bought is revoked", provider, paid_by)
        return Outcome(REVERSED_BEFORE, f"{outcome.detail}, and revoked: the payment was reversed meanwhile")

    def _scan_token(self, checkout: CheckoutRecord, change: PaymentCaptured, to: str) -> Outcome:
        now = self.clock()
        base = self.settings.base_url

        def scan_token(issued: IssuedToken) -> Any:
            expires = issued.expires_at or now
            rendered = scan_token_email(to=to, token=issued.token, expires_at=expires, base_url=base)
            return self._queue(rendered, dedupe_key=f"scan_token:{checkout.payment_id}")

        with self.database.session() as session:
            issued = settle_one_time_scan(
                session, checkout, now=now, provider_payment_id=change.payment_id, compose=scan_token
            )
        if issued is None:
            return Outcome(
                ALREADY_FULFILLED,
                f"a scan token was issued for {checkout.reference} before",
                Confirmation(
                    checkout.product,
                    checkout.email,
                    messages.scan_token_confirmed_before(checkout.email),
                    newly_fulfilled=False,
                ),
            )
        notify_outbox()
        return Outcome(
            FULFILLED,
            f"scan token issued for {checkout.reference}",
            Confirmation(checkout.product, to, messages.scan_token_emailed(to), issued.token),
        )

    def _compliance_token(self, provider: str, checkout: CheckoutRecord, change: PaymentCaptured, to: str) -> Outcome:
        now = self.clock()
        base = self.settings.base_url
        emailed = provider == PROVIDER_B  # Stripe buyers get the token by email (spec 4.6, 6)
        with self.database.session() as session:
            target = find_compliance_token_by_order(session, provider, checkout.reference)
        url = target.url if target is not None else ""

        def compliance_token(issued: IssuedToken) -> Any:
            rendered = compliance_token_email(to=to, token=issued.token, url=url, base_url=base)
            return self._queue(rendered, dedupe_key=f"compliance_token:{issued.token_id}")

        with self.database.session() as session:
            settled = settle_compliance(
                session,
                checkout,
                now=now,
                provider_payment_id=change.payment_id,
                compose=compliance_token if emailed else None,
            )
        if not settled.newly_paid:
            return Outcome(
                ALREADY_FULFILLED,
                f"compliance token of {checkout.reference} was confirmed before",
                Confirmation(
                    checkout.product,
                    checkout.email,
                    messages.COMPLIANCE_TOKEN_CONFIRMED_BEFORE,
                    newly_fulfilled=False,
                ),
            )
        notify_outbox()
        message = messages.compliance_token_emailed(to) if emailed else messages.COMPLIANCE_TOKEN_USABLE
        return Outcome(
            FULFILLED,
            f"compliance token of {checkout.reference} paid",
            Confirmation(checkout.product, to, message, settled.token),
        )

    def _subscription_charged(self, provider: str, change: SubscriptionCharged) -> Outcome:
        price = price_for(Product.SUBSCRIPTION, provider)
        if change.payment_references:
            # First, whatever follows: a Stripe invoice.paid may arrive before its checkout completes (and is
            # then ignored); the checkout records the charge under the same invoice id, which these ids find.
            with self.database.session() as session:
                record_payment_references(
                    session, provider, change.payment_id, change.payment_references, now=self.clock()
                )
        with self.database.session() as session:
            subscription = find_provider_subscription(session, provider, change.subscription_id)
            checkout = find_checkout(session, provider, change.reference) if change.reference else None
        if checkout is not None and checkout.product != Product.SUBSCRIPTION:
            checkout = None
        if subscription is None:
            if checkout is None:
                return Outcome(IGNORED, f"subscription {change.subscription_id} was not started here")
            with self.database.session() as session:  # Stripe: the subscription exists once its checkout is paid
                subscription = open_subscription(
                    session,
                    provider=provider,
                    provider_subscription_id=change.subscription_id,
                    email=checkout.email,
                    now=self.clock(),
                )
        if self._amount_mismatch(provider, checkout, price, change):
            return Outcome(AMOUNT_MISMATCH, f"{change.amount} {change.currency} for {change.subscription_id}")
        now = self.clock()
        if subscription.status == SUBSCRIPTION_PENDING:
            plan_limit = monthly_scan_limit(subscription.plan, self.settings)
            to = subscription.email

            def key_email(issued: IssuedKey) -> Any:
                rendered = api_key_email(
                    to=to, key=issued.key, plan="Pro", scans_per_month=plan_limit, base_url=self.settings.base_url
                )
                return self._queue(rendered, dedupe_key=f"api_key:{issued.subscription_id}:first")

            with self.database.session() as session:
                issued = settle_subscription_start(
                    session,
                    subscription,
                    now=now,
                    checkout=checkout,
                    provider_payment_id=change.payment_id,
                    compose=key_email,
                    occurred_at=change.occurred_at,
                )
            if issued is not None:
                notify_outbox()
                return Outcome(
                    FULFILLED,
                    f"subscription {change.subscription_id} started, key {issued.prefix}… issued",
                    Confirmation(Product.SUBSCRIPTION.value, to, messages.api_key_emailed(to)),
                )
        with self.database.session() as session:
            new_charge = record_subscription_charge(
                session,
                subscription,
                provider_payment_id=change.payment_id,
                amount=change.amount,
                currency=change.currency,
                now=now,
            )
        paid_by = (change.payment_id, *change.payment_references)
        try:
            status = self._set_status(provider, subscription, SUBSCRIPTION_ACTIVE, change.occurred_at)
        except PaymentError:
            if new_charge:  # recorded, and the event will come again as "recorded before": reverse it now if due
                self._reversed_meanwhile(provider, paid_by, Outcome(RENEWED, f"charge {change.payment_id} recorded"))
            raise
        outcome = self._renewal_outcome(provider, change, subscription, new_charge, status)
        if new_charge or outcome.name == RENEWED:  # a refund or dispute of this charge may have come first
            return self._reversed_meanwhile(provider, paid_by, outcome)
        return outcome

    def _renewal_outcome(
        self,
        provider: str,
        change: SubscriptionCharged,
        subscription: Subscription,
        new_charge: bool,
        status: StatusUpdate,
    ) -> Outcome:
        seen = "recorded" if new_charge else "recorded before"
        if status.stale:
            # Delivered late (a retry of an older month's charge): the payment is recorded above, but a newer
            # event (a failure, a halt) decided the status since.
            return Outcome(
                UNCHANGED,
                f"charge {change.payment_id} {seen}; older than the last status event of subscription "
                f"{change.subscription_id}, which stays as it is",
            )
        if status.decided and status.decided != SUBSCRIPTION_ACTIVE:
            # A failure of the same second came after this charge (another invoice, a halt): the payment is
            # recorded, the provider's status stands.
            return Outcome(
                STATUS_CHANGED if status.changed else UNCHANGED,
                f"charge {change.payment_id} {seen}; in the same second as {status.found} for subscription "
                f"{change.subscription_id}, which {provider} says is {status.decided} now",
            )
        confirmation = Confirmation(
            Product.SUBSCRIPTION.value,
            subscription.email,
            messages.SUBSCRIPTION_ACTIVE_KEY_SENT_BEFORE,
            newly_fulfilled=False,
        )
        if not new_charge and not status.changed:
            return Outcome(ALREADY_FULFILLED, f"charge {change.payment_id} was recorded before", confirmation)
        return Outcome(RENEWED, f"subscription {change.subscription_id} charged ({change.payment_id})", confirmation)

    def _set_status(
        self, provider: str, subscription: Subscription, status: str, occurred_at: datetime | None
    ) -> StatusUpdate:
        """Apply a provider's status for a subscription (`set_provider_subscription_status`). Its event times
        are whole seconds, so an event of the same second as the last one applied that says otherwise cannot
        be ordered by them: the provider's current status decides it (Stripe: retrieve the object when the
        order matters, https://docs.stripe.com/webhooks#event-ordering; Razorpay's subscription entity carries
        its status), whatever the order the two arrived in. If the provider cannot be asked, the subscription
        is held active, unconfirmed, and PaymentError (502) leaves the event unrecorded: the provider delivers
        it again, and it asks again then."""
        subscription_id = subscription.id or 0
        for _ in range(STATUS_DECISION_ROUNDS):
            with self.database.session() as session:
                update = set_provider_subscription_status(
                    session, subscription_id, status, self.clock(), occurred_at=occurred_at
                )
            if not update.undecided:
                return update
            reference = subscription.provider_subscription_id or ""
            try:
                current = self._provider_status(provider, reference)
            except PaymentError as exc:
                with self.database.session() as session:
                    hold_unconfirmed_status(session, subscription_id, self.clock(), undecided=update)
                log.warning(
                    "%s subscription %s: %s and %s in the same second, and its status could not be read (%s): "
                    "held active until the event comes again",
                    provider,
                    reference,
                    update.found,
                    status,
                    exc,
                )
                raise PaymentError(messages.SUBSCRIPTION_STATUS_UNDECIDED) from exc
            with self.database.session() as session:
                decided = decide_subscription_status(session, subscription_id, current, self.clock(), undecided=update)
            if decided is not None:
                log.info(
                    "%s subscription %s: %s and %s in the same second; %s says it is %s now",
                    provider,
                    reference,
                    update.found,
                    status,
                    provider,
                    current,
                )
                return decided
        raise PaymentError(messages.SUBSCRIPTION_STATUS_BUSY)

    def _provider_status(self, provider: str, provider_subscription_id: str) -> str:
        """The subscription's status at the provider now, as ours (PaymentError when it cannot say)."""
        gateway = self.gateways.get(provider)
        if isinstance(gateway, SandboxGateway):  # its events carry no time, so they never tie: not reached
            raise PaymentsUnavailable(messages.sandbox_sends_no_webhooks(provider))
        current = gateway.subscription_status(provider_subscription_id)
        if current is None:
            raise PaymentError(messages.SUBSCRIPTION_STATUS_UNDECIDED)
        return current

    def _payment_reversed(self, provider: str, change: PaymentReversed) -> Outcome:
        """A refund or a dispute: unused tokens of that payment revoked, on a dispute its subscription
        suspended; a replay (or a second refund of the same payment) changes nothing."""
        what = "dispute" if change.dispute else "refund"
        with self.database.session() as session:
            reversal = reverse_payment(session, provider, change.payment_ids, dispute=change.dispute, now=self.clock())
        paid_by = "/".join(change.payment_ids)
        if reversal.pending:
            log.warning(
                "%s %s of %s before its payment was settled here: kept for the settlement", provider, what, paid_by
            )
            return Outcome(REVERSAL_PENDING, f"{what} of {paid_by}: no settled payment yet, kept for its settlement")
        if reversal.payments == 0:
            return Outcome(IGNORED, f"{what} of {paid_by}: not a payment made here")
        if reversal.subscriptions_suspended:
            log.warning("%s %s of %s: subscription suspended", provider, what, paid_by)
            return Outcome(SUSPENDED, f"{what} of {paid_by}: subscription suspended")
        if reversal.tokens_revoked:
            log.warning("%s %s of %s: %d unused token(s) revoked", provider, what, paid_by, reversal.tokens_revoked)
            return Outcome(REVOKED, f"{what} of {paid_by}: {reversal.tokens_revoked} unused token(s) revoked")
        return Outcome(UNCHANGED, f"{what} of {paid_by}: nothing unused to take back")

    def _subscription_status(self, provider: str, change: SubscriptionStatusChanged) -> Outcome:
        with self.database.session() as session:
            subscription = find_provider_subscription(session, provider, change.subscription_id)
        if subscription is None or subscription.id is None:
            return Outcome(IGNORED, f"subscription {change.subscription_id} is not known here")
        update = self._set_status(provider, subscription, change.status, change.occurred_at)
        if update.decided:
            return Outcome(
                STATUS_CHANGED if update.changed else UNCHANGED,
                f"{change.status} of subscription {change.subscription_id} in the same second as {update.found}: "
                f"{provider} says it is {update.decided} now",
            )
        if update.changed:
            return Outcome(STATUS_CHANGED, f"subscription {change.subscription_id} is now {change.status}")
        if update.stale:
            return Outcome(
                UNCHANGED,
                f"{change.status} of subscription {change.subscription_id} is older than its last status event: "
                f"it stays {subscription.status}",
            )
        return Outcome(UNCHANGED, f"subscription {change.subscription_id} stays {subscription.status}")


__all__ = [
    "ALREADY_FULFILLED",
    "AMOUNT_MISMATCH",
    "DUPLICATE",
    "FULFILLED",
    "IGNORED",
    "RENEWED",
    "REVERSAL_PENDING",
    "REVERSED_BEFORE",
    "REVOKED",
    "STATUS_CHANGED",
    "SUSPENDED",
    "UNCHANGED",
    "Confirmation",
    "Fulfilment",
    "Outcome",
]
