"""`PaymentService`: the one object the paid API endpoints (`api_routes/routes/purchases.py`, `webhooks.py`,
`sandbox.py`), the use cases and the web UI call for buying things, composed of one part per job:

- `Checkouts` (`checkout.py`): start a checkout;
- `Confirmations` (`confirmation.py`): confirm a payment the buyer returns with;
- `Fulfilment` (`fulfilment.py`): webhooks, and the one place every confirmed payment takes effect;
- `ComplianceReports` (`compliance_report.py`): generate and email the report for a paid token;
- `SandboxCheckouts` (`sandbox_checkouts.py`): the development sandbox's page and buttons.

Tests build their own service with injected gateways and outbox; production builds one per Runtime with
`build_payment_service`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from websec_app.clock import clock_for
from websec_app.settings import Settings
from websec_app.store import Database, database_for
from websec_app.store.purchases import CheckoutRecord
from websec_app.store.tokens import Reservation

from ..email import outbox_for
from ..email.outbox import Outbox
from ..prices import Product
from . import messages
from .checkout import Checkouts, CheckoutStart
from .compliance_report import ComplianceReports, GeneratedReport, QueuedReport
from .confirmation import Confirmations
from .errors import TooManyRequests
from .events import Change
from .fulfilment import Confirmation, Fulfilment, Outcome
from .gateways import Gateways
from .limits import PaymentLimits
from .sandbox_checkouts import SandboxCheckouts

if TYPE_CHECKING:
    from .gateways import Gateway

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class PaymentService:
    settings: Settings
    database: Database
    outbox: Outbox
    clock: Clock = field(default=lambda: _utc_now())
    #: Injected gateways (tests); otherwise built from the settings on first use.
    gateways: dict[str, Gateway] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._gateways = Gateways(self.settings, self.gateways, self.database)
        self._fulfilment = Fulfilment(self.settings, self.database, self._gateways, self.clock)
        self._checkouts = Checkouts(self.settings, self.database, self._gateways, self.clock)
        self._confirmations = Confirmations(self.database, self._gateways, self._fulfilment)
        self.limits = PaymentLimits()
        self._compliance = ComplianceReports(
            self.settings.mail.sender,
            self.database,
            self.outbox,
            self._gateways,
            self._fulfilment,
            self.clock,
            self.limits,
        )
        self._sandbox = SandboxCheckouts(self.settings, self.database, self._fulfilment, self.limits)

    def gateway(self, provider: str) -> Gateway:
        return self._gateways.get(provider)

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
        return self._checkouts.start(product, provider, email, url, success_url=success_url, cancel_url=cancel_url)

    def admit_checkout(self, client: str) -> None:
        """Count one payment start for a client address; TooManyRequests (429) past the limit (limits.py)."""
        wait = self.limits.checkouts.hit(client, self.clock())
        if wait is not None:
            raise TooManyRequests(messages.too_many_requests(wait), wait)

    # --- confirmations from the browser ---------------------------------------------------------------------

    def confirm_razorpay_payment(self, *, order_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for an order: signature, then the payment itself, then fulfilment."""
        return self._confirmations.razorpay_payment(order_id=order_id, payment_id=payment_id, signature=signature)

    def confirm_razorpay_subscription(self, *, subscription_id: str, payment_id: str, signature: str) -> Confirmation:
        """Checkout.js success handler for a subscription: the key is issued now (or by the webhook, first wins)."""
        return self._confirmations.razorpay_subscription(
            subscription_id=subscription_id, payment_id=payment_id, signature=signature
        )

    def confirm_stripe_return(self, session_id: str) -> Confirmation | None:
        """The success page's Checkout Session, read from Stripe and fulfilled if paid (None: not paid yet)."""
        return self._confirmations.stripe_return(session_id)

    def verify_one_time_payment(self, payment_id: str, email: str) -> Confirmation:
        """Spec 4.7: a Razorpay payment id -> a one-time scan token (PaymentNotVerified, TokenAlreadyIssued)."""
        return self._confirmations.one_time_payment(payment_id, email)

    # --- webhooks and fulfilment ----------------------------------------------------------------------------

    def handle_webhook(self, provider: str, body: bytes, headers: Mapping[str, str]) -> Outcome:
        """Verify, de-duplicate, apply and record one webhook delivery (InvalidWebhook -> 400)."""
        return self._fulfilment.handle_webhook(provider, body, headers)

    def apply(self, provider: str, change: Change, *, recipient: str | None = None) -> Outcome:
        return self._fulfilment.apply(provider, change, recipient=recipient)

    # --- compliance reports ---------------------------------------------------------------------------------

    def ensure_compliance_paid(self, token: str, client: str | None = None) -> None:
        """The token exists, is unused and is paid (asking Razorpay if need be, within the client's limit);
        raises TokenRejected or TooManyRequests."""
        self._compliance.ensure_paid(token, client)

    async def generate_compliance_report(
        self,
        token: str,
        *,
        url: str,
        email: str,
        scan: Callable[[str], Awaitable[Mapping[str, Any]]],
        client: str | None = None,
    ) -> GeneratedReport:
        """Spec 4.8: check the token is paid, reserve it, scan (`scan` returns the spec 2.2 body), render, use the
        token and queue the email, try to send it."""
        return await self._compliance.generate(token, url=url, email=email, scan=scan, client=client)

    def queue_compliance_report(
        self, reservation: Reservation, *, email: str, report: Mapping[str, Any]
    ) -> QueuedReport:
        return self._compliance.queue(reservation, email=email, report=report)

    # --- the sandbox ----------------------------------------------------------------------------------------

    def sandbox_checkout(self, reference: str) -> tuple[CheckoutRecord, str | None]:
        """The sandbox checkout behind a reference, and its subscription status if it is one."""
        return self._sandbox.checkout(reference)

    def complete_sandbox_checkout(self, reference: str, action: str = "pay") -> Outcome:
        """What the sandbox page's buttons do: pay, renew, fail_renewal, cancel (as a provider webhook would)."""
        return self._sandbox.complete(reference, action)

    def sandbox_return_url(self, reference: str) -> str | None:
        """Where the provider would send the buyer back after paying this sandbox checkout (None: not paid)."""
        return self._sandbox.return_url(reference)


def build_payment_service(
    settings: Settings, database: Database | None = None, *, clock: Clock | None = None, **outbox_options: Any
) -> PaymentService:
    database = database or database_for(settings.resolved_database_url)
    clock = clock or clock_for(settings)
    outbox = outbox_for(settings, database, clock=clock, **outbox_options)
    return PaymentService(settings, database, outbox, clock=clock)


__all__ = ["PaymentService", "build_payment_service"]
