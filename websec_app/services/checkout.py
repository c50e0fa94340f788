"""Buying things: start a checkout, confirm a payment, act on provider events, queue what was bought.

`PaymentService` is the one implementation behind the paid API endpoints (`api_routes/paid.py`,
`api_routes/webhooks.py`, `api_routes/sandbox.py`) and the web UI's checkout buttons. Every way a
payment can be confirmed (Razorpay's checkout callback, `POST /api/verify-one-time`, a Razorpay or
Stripe webhook, the generate endpoint asking Razorpay, the sandbox's Pay button) becomes an event of
`payments/events.py` and goes through `apply()`, which checks amount and currency against the price
table and settles it in the store (`store/purchases.py`): the first confirmation issues the token or
key and queues its email in one transaction; every later one changes nothing.

Module-level functions (`start_checkout`, `confirm_razorpay_payment`, ...) use the process-wide service
built from the settings; tests build their own `PaymentService` with injected gateways and outbox.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from websec_app.clock import clock_for
from websec_app.scanner import ScanReport, parse_target
from websec_app.settings import Settings, get_settings
from websec_app.store import (
    Database,
    IssuedKey,
    IssuedToken,
    TokenAlreadyIssued,
    TokenProblem,
    TokenRejected,
    database_for,
    find_compliance_token,
    find_compliance_token_by_order,
    issue_compliance_token,
    monthly_scan_limit,
)
from websec_app.store.models import (
    SUBSCRIPTION_ACTIVE,
    SUBSCRIPTION_CANCELLED,
    SUBSCRIPTION_PAST_DUE,
    SUBSCRIPTION_PENDING,
)
from websec_app.store.payments import STATUS_PAID, find_payment, find_webhook_event, record_webhook_event
from websec_app.store.purchases import (
    CheckoutRecord,
    claim_compliance_token_with_email,
    find_checkout,
    find_provider_subscription,
    open_checkout,
    open_subscription,
    record_subscription_charge,
    set_provider_subscription_status,
    settle_compliance,
    settle_one_time_scan,
    settle_subscription_start,
)

from .email import outbox_for
from .email.outbox import Outbox, notify_outbox
from .email.render import api_key_email, compliance_report_email, compliance_token_email, queued, scan_token_email
from .payments import (
    PROVIDER_A,
    PROVIDER_B,
    PROVIDERS,
    PaymentNotVerified,
    PaymentsUnavailable,
    UnknownCheckout,
)
from .payments.events import (
    Change,
    Ignored,
    PaymentCaptured,
    SubscriptionCharged,
    SubscriptionStatusChanged,
)
from .payments.sandbox import SandboxGateway, is_sandbox_reference
from .pdf import render_compliance_pdf, report_filename
from .prices import Price, Product, price_for

if TYPE_CHECKING:  # the SDKs take ~0.5 s to import: loaded when a real provider is first used
    from .payments.razorpay_gateway import RazorpayGateway
    from .payments.stripe_gateway import StripeGateway

    Gateway = RazorpayGateway | StripeGateway | SandboxGateway

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
#: Razorpay payment states that mean the money is there
#: (https://razorpay.com/docs/payments/payments/#payment-life-cycle); orders capture automatically.
PAID_STATES = ("captured", "authorized")
#: How long the compliance report email is left to the request that generates it (it sends the email at
#: once, then tells the buyer whether the mail server took it); after that the outbox workers retry it.
SENT_BY_THE_REQUEST = timedelta(minutes=1)


def _utc_now() -> datetime:
    return datetime.now(UTC)


#: `CheckoutStart.action` values.
ACTION_RAZORPAY = "razorpay_checkout"
ACTION_REDIRECT = "redirect"

#: Outcomes recorded with each webhook event (`webhook_events.outcome`).
FULFILLED = "fulfilled"
ALREADY_FULFILLED = "already_fulfilled"
RENEWED = "renewed"
STATUS_CHANGED = "status_changed"
UNCHANGED = "unchanged"
AMOUNT_MISMATCH = "amount_mismatch"
IGNORED = "ignored"
DUPLICATE = "duplicate"


@dataclass(frozen=True)
class CheckoutStart:
    """What the browser needs to pay (see services/README.md)."""

    provider: str
    product: str
    email: str
    amount: int  # minor units
    currency: str
    display_price: str
    reference: str  # provider order / checkout session / subscription id
    action: str  # ACTION_RAZORPAY or ACTION_REDIRECT
    sandbox: bool
    checkout_url: str | None = None
    #: Razorpay Checkout.js options (key, amount, currency, order_id or subscription_id, name, ...).
    razorpay_options: Mapping[str, Any] | None = None
    #: Compliance report via Razorpay: the payment token (usable once the payment is verified).
    token: str | None = None
    url: str | None = None


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
    name: str
    detail: str
    confirmation: Confirmation | None = None


@dataclass(frozen=True)
class QueuedReport:
    email_id: int
    delivered: bool


@dataclass(frozen=True)
class GeneratedReport:
    """A compliance report that was scanned, rendered and queued (the token is used)."""

    report: ScanReport
    delivered: bool  # False: the mail server did not take it yet; the outbox retries it
    message: str  # a sentence for the buyer


@dataclass
class PaymentService:
    settings: Settings
    database: Database
    outbox: Outbox
    clock: Clock = field(default=lambda: _utc_now())
    #: Injected gateways (tests); otherwise built from the settings on first use.
    gateways: dict[str, Gateway] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # --- gateways ---------------------------------------------------------------------------------------------

    def gateway(self, provider: str) -> Gateway:
        if provider not in PROVIDERS:
            raise PaymentNotVerified(f"Unknown payment provider {provider!r}: use {' or '.join(PROVIDERS)}.")
        with self._lock:
            gateway = self.gateways.get(provider)
            if gateway is None:
                gateway = self.gateways[provider] = self._build_gateway(provider)
            return gateway

    def _build_gateway(self, provider: str) -> Gateway:
        if self.settings.sandbox_serves(provider):
            log.warning("payments: %s is served by the SANDBOX (no real money; development only)", provider)
            return SandboxGateway(provider, self.settings.base_url)
        payments = self.settings.payments
        if provider == PROVIDER_A and payments.razorpay_configured:
            from .payments.razorpay_gateway import RazorpayGateway

            return RazorpayGateway(payments)
        if provider == PROVIDER_B and payments.stripe_configured:
            from .payments.stripe_gateway import StripeGateway

            return StripeGateway(payments)
        raise PaymentsUnavailable(f"Payments with {provider} are not available on this server.")

    def _razorpay(self) -> RazorpayGateway:
        gateway = self.gateway(PROVIDER_A)
        if isinstance(gateway, SandboxGateway):
            raise PaymentsUnavailable("Razorpay payments are served by the sandbox here: use its checkout page.")
        return gateway  # type: ignore[return-value]

    # --- starting a checkout ------------------------------------------------------------------------------

    def start_checkout(
        self,
        product: Product | str,
        provider: str,
        email: str,
        url: str | None = None,
        *,
        success_url: str | None = None,
        cancel_url: str | None = None,
    ) -> CheckoutStart:
        product = Product(product)
        target = None
        if product is Product.COMPLIANCE_REPORT:
            if not url:
                raise PaymentNotVerified("A compliance report needs the address of the website to scan.")
            target = parse_target(url).url  # InvalidTarget (400) for a bad or private address
        price = price_for(product, provider)
        gateway = self.gateway(provider)
        base = self.settings.base_url
        action, checkout_url, options = ACTION_REDIRECT, None, None
        notes = {"websec_product": product.value, **({"url": target} if target else {})}
        if isinstance(gateway, SandboxGateway):
            reference = gateway.new_reference(price)
            checkout_url = gateway.checkout_url(reference)
        elif provider == PROVIDER_A:
            gateway = self._razorpay()
            if product is Product.SUBSCRIPTION:
                reference = gateway.create_subscription(price, email=email)
            else:
                reference = gateway.create_order(price, email=email, receipt=f"websec-{product.value}", notes=notes)
            action = ACTION_RAZORPAY
        else:
            reference, checkout_url = gateway.create_checkout_session(  # type: ignore[union-attr]
                price,
                email=email,
                success_url=success_url or f"{base}/checkout/success?session_id={{CHECKOUT_SESSION_ID}}",
                cancel_url=cancel_url or f"{base}/checkout/cancelled",
                metadata={"email": email, **({"url": target} if target else {})},
            )
        if provider == PROVIDER_A:  # Checkout.js options (also shown by the sandbox, which then redirects)
            options = {
                "key": gateway.key_id,  # type: ignore[union-attr]
                "amount": price.amount,
                "currency": price.currency,
                "name": "websec",
                "description": price.name,
                ("subscription_id" if product is Product.SUBSCRIPTION else "order_id"): reference,
                "prefill": {"email": email},
                "notes": notes,
            }
        token = self._record_checkout(price, provider, email, reference, target, gateway)
        return CheckoutStart(
            provider=provider,
            product=product.value,
            email=email,
            amount=price.amount,
            currency=price.currency,
            display_price=price.display,
            reference=reference,
            action=action,
            sandbox=gateway.sandbox,
            checkout_url=checkout_url,
            razorpay_options=options,
            token=token,
            url=target,
        )

    def _record_checkout(
        self, price: Price, provider: str, email: str, reference: str, target: str | None, gateway: Gateway
    ) -> str | None:
        """The payment row (and subscription or compliance token row) of a new checkout; the token if shown."""
        now = self.clock()
        with self.database.session() as session:
            open_checkout(
                session,
                provider=provider,
                product=price.product.value,
                email=email,
                amount=price.amount,
                currency=price.currency,
                reference=reference,
                now=now,
            )
            if price.product is Product.SUBSCRIPTION and (gateway.sandbox or provider == PROVIDER_A):
                # Razorpay (and the sandbox) name the subscription up front; Stripe's exists once paid.
                open_subscription(session, provider=provider, provider_subscription_id=reference, email=email, now=now)
            if price.product is Product.COMPLIANCE_REPORT and target is not None:
                issued = issue_compliance_token(
                    session, provider=provider, email=email, url=target, now=now, provider_order_id=reference
                )
                # Razorpay (spec 4.6): the token is in the pay response, usable once paid. Stripe: the webhook
                # replaces it with a fresh one and emails that; this value is never shown.
                return issued.token if provider == PROVIDER_A else None
        return None

    # --- confirmations from the browser ---------------------------------------------------------------------

    def confirm_razorpay_payment(self, *, order_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for an order: signature, then the payment itself, then fulfilment."""
        gateway = self._razorpay()
        gateway.verify_payment_signature(order_id=order_id, payment_id=payment_id, signature=signature)
        payment = gateway.fetch_payment(payment_id)
        if payment.status not in PAID_STATES or payment.order_id != order_id:
            raise PaymentNotVerified(f"The payment {payment_id} is {payment.status}, not paid for this order.")
        change = PaymentCaptured(order_id, payment.payment_id, payment.amount, payment.currency, payment.email)
        return self._confirmation(self.apply(PROVIDER_A, change))

    def confirm_razorpay_subscription(self, *, subscription_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for a subscription: the key is issued now (or by the webhook, first wins)."""
        gateway = self._razorpay()
        gateway.verify_subscription_signature(
            subscription_id=subscription_id, payment_id=payment_id, signature=signature
        )
        payment = gateway.fetch_payment(payment_id)
        if payment.status not in PAID_STATES:
            raise PaymentNotVerified(f"The payment {payment_id} is {payment.status}, not paid.")
        change = SubscriptionCharged(
            subscription_id, payment.payment_id, payment.amount, payment.currency, subscription_id, payment.email
        )
        return self._confirmation(self.apply(PROVIDER_A, change))

    def verify_one_time_payment(self, payment_id: str, email: str) -> Confirmation:
        """Spec 4.7: a Razorpay payment id from the redirect -> a one-time scan token (emailed too).

        Raises PaymentNotVerified (402) and TokenAlreadyIssued (a token exists for this payment).
        """
        with self.database.session() as session:
            known = find_payment(session, PROVIDER_A, provider_payment_id=payment_id)
        if known is not None and known.status == STATUS_PAID:
            raise TokenAlreadyIssued(f"payment {payment_id} was fulfilled before")
        payment = self._razorpay().fetch_payment(payment_id)
        if payment.status not in PAID_STATES:
            raise PaymentNotVerified(f"The payment {payment_id} was not found or is not captured.")
        with self.database.session() as session:
            checkout = find_checkout(session, PROVIDER_A, payment.order_id) if payment.order_id else None
        if checkout is None or checkout.product != Product.ONE_TIME_SCAN:
            raise PaymentNotVerified(f"The payment {payment_id} is not for a one-time scan bought here.")
        change = PaymentCaptured(checkout.reference, payment.payment_id, payment.amount, payment.currency, email)
        outcome = self.apply(PROVIDER_A, change, recipient=email)
        if outcome.name == AMOUNT_MISMATCH:
            raise PaymentNotVerified(f"The payment {payment_id} does not match the price of a one-time scan.")
        if outcome.confirmation is None or outcome.confirmation.token is None:
            raise TokenAlreadyIssued(f"payment {payment_id} was fulfilled before")
        return outcome.confirmation

    def _confirmation(self, outcome: Outcome) -> Confirmation:
        if outcome.name == AMOUNT_MISMATCH:
            raise PaymentNotVerified("The payment does not match the price of what was bought.")
        if outcome.confirmation is None:
            raise PaymentNotVerified(f"The payment could not be matched to a purchase ({outcome.detail}).")
        return outcome.confirmation

    # --- webhooks -------------------------------------------------------------------------------------------

    def handle_webhook(self, provider: str, body: bytes, headers: Mapping[str, str]) -> Outcome:
        """Verify, de-duplicate, apply and record one webhook delivery (InvalidWebhook -> 400)."""
        gateway = self.gateway(provider)
        if isinstance(gateway, SandboxGateway):
            raise PaymentsUnavailable(f"{provider} is served by the sandbox here; it sends no webhooks.")
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

    # --- the one place events take effect -------------------------------------------------------------------

    def apply(self, provider: str, change: Change, *, recipient: str | None = None) -> Outcome:
        if isinstance(change, PaymentCaptured):
            return self._payment_captured(provider, change, recipient)
        if isinstance(change, SubscriptionCharged):
            return self._subscription_charged(provider, change)
        if isinstance(change, SubscriptionStatusChanged):
            return self._subscription_status(provider, change)
        return Outcome(IGNORED, change.reason if isinstance(change, Ignored) else repr(change))

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

    def _queue(self, rendered: Any, *, dedupe_key: str | None) -> Any:
        return queued(rendered, sender=self.settings.mail.sender, now=self.clock(), dedupe_key=dedupe_key)

    def _payment_captured(self, provider: str, change: PaymentCaptured, recipient: str | None) -> Outcome:
        with self.database.session() as session:
            checkout = find_checkout(session, provider, change.reference)
        if checkout is None:
            return Outcome(IGNORED, f"no checkout {change.reference} was started here")
        price = price_for(checkout.product, provider)
        if self._amount_mismatch(provider, checkout, price, change):
            return Outcome(AMOUNT_MISMATCH, f"{change.amount} {change.currency} for {checkout.reference}")
        now = self.clock()
        base = self.settings.base_url
        to = recipient or checkout.email
        if checkout.product == Product.ONE_TIME_SCAN:

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
                        f"This payment was confirmed before; its one-time scan token was emailed to {checkout.email}.",
                        newly_fulfilled=False,
                    ),
                )
            notify_outbox()
            return Outcome(
                FULFILLED,
                f"scan token issued for {checkout.reference}",
                Confirmation(checkout.product, to, f"Your one-time scan token was emailed to {to}.", issued.token),
            )
        if checkout.product == Product.COMPLIANCE_REPORT:
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
                        "This payment was confirmed before: the compliance report token can be used.",
                        newly_fulfilled=False,
                    ),
                )
            notify_outbox()
            message = (
                f"Your compliance report token was emailed to {to}."
                if emailed
                else "Payment confirmed: your compliance report token can be used now."
            )
            return Outcome(
                FULFILLED,
                f"compliance token of {checkout.reference} paid",
                Confirmation(checkout.product, to, message, settled.token),
            )
        return Outcome(IGNORED, f"{checkout.product} checkouts are not paid by a one-time payment")

    def _subscription_charged(self, provider: str, change: SubscriptionCharged) -> Outcome:
        price = price_for(Product.SUBSCRIPTION, provider)
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
                )
            if issued is not None:
                notify_outbox()
                return Outcome(
                    FULFILLED,
                    f"subscription {change.subscription_id} started, key {issued.prefix}… issued",
                    Confirmation(Product.SUBSCRIPTION.value, to, f"Your Pro API key was emailed to {to}."),
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
            reactivated = set_provider_subscription_status(session, subscription.id or 0, SUBSCRIPTION_ACTIVE, now)
        confirmation = Confirmation(
            Product.SUBSCRIPTION.value,
            subscription.email,
            "Your Pro subscription is active; the API key was emailed when you subscribed.",
            newly_fulfilled=False,
        )
        if not new_charge and not reactivated:
            return Outcome(ALREADY_FULFILLED, f"charge {change.payment_id} was recorded before", confirmation)
        return Outcome(RENEWED, f"subscription {change.subscription_id} charged ({change.payment_id})", confirmation)

    def _subscription_status(self, provider: str, change: SubscriptionStatusChanged) -> Outcome:
        with self.database.session() as session:
            subscription = find_provider_subscription(session, provider, change.subscription_id)
            if subscription is None or subscription.id is None:
                return Outcome(IGNORED, f"subscription {change.subscription_id} is not known here")
            changed = set_provider_subscription_status(session, subscription.id, change.status, self.clock())
        if changed:
            return Outcome(STATUS_CHANGED, f"subscription {change.subscription_id} is now {change.status}")
        return Outcome(UNCHANGED, f"subscription {change.subscription_id} stays {subscription.status}")

    # --- compliance reports ---------------------------------------------------------------------------------

    def ensure_compliance_paid(self, token: str) -> None:
        """Before scanning for a compliance token: it must exist, be unused, and be paid.

        A Razorpay token whose payment was not confirmed yet (the buyer closed the tab before the
        callback, the webhook is late) is checked with Razorpay here, so a paid buyer is never turned
        away. Raises TokenRejected.
        """
        with self.database.session() as session:
            row = find_compliance_token(session, token)
        if row is None:
            raise TokenRejected(TokenProblem.UNKNOWN)
        if row.used_at is not None:
            raise TokenRejected(TokenProblem.USED, row.used_at)
        if row.paid_at is not None:
            return
        try:
            gateway: Gateway | None = self.gateway(row.provider)
        except PaymentsUnavailable:
            gateway = None
        real_razorpay = row.provider == PROVIDER_A and not isinstance(gateway, SandboxGateway | None)
        if real_razorpay and row.provider_order_id:
            for payment in gateway.order_payments(row.provider_order_id):  # type: ignore[union-attr]
                if payment.status in PAID_STATES:
                    self.apply(
                        PROVIDER_A,
                        PaymentCaptured(
                            row.provider_order_id, payment.payment_id, payment.amount, payment.currency, payment.email
                        ),
                    )
                    break
            with self.database.session() as session:
                row = find_compliance_token(session, token)
            if row is not None and row.paid_at is not None:
                return
        raise TokenRejected(TokenProblem.UNPAID)

    async def generate_compliance_report(
        self, token: str, *, url: str, email: str, scan: Callable[[str], Awaitable[ScanReport]]
    ) -> GeneratedReport:
        """Spec 4.8 for the API and the UI alike: check the token, scan, render, use the token and queue the
        email in one transaction, try to send it. Raises TokenRejected, the scanner's errors (the token stays
        usable) and PdfRenderError (likewise)."""
        token = token.strip()
        target = parse_target(url)
        await anyio.to_thread.run_sync(self.ensure_compliance_paid, token)
        report = await scan(url)
        content = report.to_dict(pro=True, include_fix=True)
        queued = await anyio.to_thread.run_sync(
            lambda: self.queue_compliance_report(token, email=email, report=content)
        )
        if queued.delivered:
            message = f"The compliance report for {target.host} was emailed to {email}."
        else:
            message = (
                f"The compliance report for {target.host} is ready and queued for {email}; the mail server did not "
                "take it yet, so it is retried automatically until it is delivered."
            )
        return GeneratedReport(report, queued.delivered, message)

    def queue_compliance_report(self, token: str, *, email: str, report: Mapping[str, Any]) -> QueuedReport:
        """Render the PDF and its email, use the token and queue the email in one transaction, try to send.

        The PDF is rendered before the token is touched: a render failure leaves the token usable.
        Raises TokenRejected if the token was used meanwhile.
        """
        url = str(report.get("url", ""))
        host = parse_target(url).host if url else "website"
        pdf = render_compliance_pdf(report, now=self.clock())
        rendered = compliance_report_email(
            to=email,
            url=url,
            grade=str(report.get("grade", "")),
            score=int(report.get("score", 0)),
            pdf=pdf,
            filename=report_filename(host, kind="compliance"),
        )
        with self.database.session() as session:
            # Held for this request, which sends it right below (QueuedEmail.held_for).
            held = dataclasses.replace(self._queue(rendered, dedupe_key=None), held_for=SENT_BY_THE_REQUEST)
            token_id, email_id = claim_compliance_token_with_email(session, token, self.clock(), held)
        if token_id is None or email_id is None:
            with self.database.session() as session:
                row = find_compliance_token(session, token)
            if row is None:
                raise TokenRejected(TokenProblem.UNKNOWN)
            if row.used_at is not None:
                raise TokenRejected(TokenProblem.USED, row.used_at)
            raise TokenRejected(TokenProblem.UNPAID)
        delivered = self.outbox.deliver_now(email_id)
        if not delivered:
            notify_outbox()
        return QueuedReport(email_id, delivered)

    # --- the sandbox ----------------------------------------------------------------------------------------

    def sandbox_checkout(self, reference: str) -> tuple[CheckoutRecord, str | None]:
        """The sandbox checkout behind a reference, and its subscription status if it is one."""
        if not is_sandbox_reference(reference):
            raise UnknownCheckout("There is no sandbox checkout with that reference.")
        with self.database.session() as session:
            for provider in PROVIDERS:
                checkout = find_checkout(session, provider, reference)
                if checkout is not None:
                    if not self.settings.sandbox_serves(provider):
                        raise PaymentsUnavailable("The sandbox is not enabled on this server.")
                    subscription = find_provider_subscription(session, provider, reference)
                    return checkout, subscription.status if subscription is not None else None
        raise UnknownCheckout("There is no sandbox checkout with that reference.")

    def complete_sandbox_checkout(self, reference: str, action: str = "pay") -> Outcome:
        """What the sandbox page's buttons do: pay, renew, fail_renewal, cancel (as a provider webhook would)."""
        checkout, _ = self.sandbox_checkout(reference)
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
            raise PaymentNotVerified(f"Unknown sandbox action {action!r}.")
        outcome = self.apply(checkout.provider, change)
        log.warning("SANDBOX %s on %s: %s (%s)", action, reference, outcome.name, outcome.detail)
        return outcome


# --- the process-wide service -------------------------------------------------------------------------------

_service: PaymentService | None = None
_service_lock = threading.Lock()


def build_payment_service(
    settings: Settings, database: Database | None = None, *, clock: Clock | None = None, **outbox_options: Any
) -> PaymentService:
    database = database or database_for(settings.resolved_database_url)
    clock = clock or clock_for(settings)
    outbox = outbox_for(settings, database, clock=clock, **outbox_options)
    return PaymentService(settings, database, outbox, clock=clock)


def get_payment_service() -> PaymentService:
    """The service for this process (settings from the environment, the default database)."""
    global _service
    with _service_lock:
        if _service is None:
            _service = build_payment_service(get_settings())
        return _service


def start_checkout(
    product: Product | str, provider: str, email: str, url: str | None = None, **urls: str | None
) -> CheckoutStart:
    return get_payment_service().start_checkout(product, provider, email, url, **urls)


def confirm_razorpay_payment(*, order_id: str, payment_id: str, signature: str) -> Confirmation:
    return get_payment_service().confirm_razorpay_payment(order_id=order_id, payment_id=payment_id, signature=signature)


def confirm_razorpay_subscription(*, subscription_id: str, payment_id: str, signature: str) -> Confirmation:
    return get_payment_service().confirm_razorpay_subscription(
        subscription_id=subscription_id, payment_id=payment_id, signature=signature
    )


def complete_sandbox_checkout(reference: str, action: str = "pay") -> Outcome:
    return get_payment_service().complete_sandbox_checkout(reference, action)


__all__ = [
    "ACTION_RAZORPAY",
    "ACTION_REDIRECT",
    "CheckoutStart",
    "Confirmation",
    "Outcome",
    "PaymentService",
    "GeneratedReport",
    "QueuedReport",
    "build_payment_service",
    "complete_sandbox_checkout",
    "confirm_razorpay_payment",
    "confirm_razorpay_subscription",
    "get_payment_service",
    "start_checkout",
]
