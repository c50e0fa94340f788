"""Which gateway serves a provider: an injected one (tests), the sandbox (development without keys), or the
real SDK-backed gateway, built once on first use."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from websec_app.settings import Settings
from websec_app.store import Database

from . import messages
from .errors import PaymentNotVerified, PaymentsUnavailable
from .providers import PROVIDER_A, PROVIDER_B, PROVIDERS
from .sandbox import SandboxGateway

if TYPE_CHECKING:  # the SDKs take ~0.5 s to import: loaded when a real provider is first used
    from .razorpay_gateway import RazorpayGateway
    from .stripe_gateway import StripeGateway

    Gateway = RazorpayGateway | StripeGateway | SandboxGateway

log = logging.getLogger(__name__)


class Gateways:
    """The gateway of each provider for one PaymentService; `injected` is shared and filled as they are built."""

    def __init__(self, settings: Settings, injected: dict[str, Gateway], database: Database | None = None) -> None:
        self._settings = settings
        self._database = database
        self._gateways = injected
        self._lock = threading.Lock()

    def get(self, provider: str) -> Gateway:
        if provider not in PROVIDERS:
            raise PaymentNotVerified(messages.unknown_provider(provider, PROVIDERS))
        with self._lock:
            gateway = self._gateways.get(provider)
            if gateway is None:
                gateway = self._gateways[provider] = self._build(provider)
            return gateway

    def razorpay(self) -> RazorpayGateway | SandboxGateway:
        """What answers the calls only Razorpay can answer (signatures, fetching payments and an order's
        payments): Razorpay, or the sandbox playing it (it answers them from the payments it captured)."""
        return self.get(PROVIDER_A)  # type: ignore[return-value]

    def razorpay_api(self) -> RazorpayGateway:
        """The real Razorpay gateway, for creating orders and subscriptions."""
        gateway = self.get(PROVIDER_A)
        if isinstance(gateway, SandboxGateway):
            raise PaymentsUnavailable(messages.RAZORPAY_IN_SANDBOX)
        return gateway  # type: ignore[return-value]

    def _build(self, provider: str) -> Gateway:
        if self._settings.sandbox_serves(provider):
            log.warning("payments: %s is served by the SANDBOX (no real money; development only)", provider)
            return SandboxGateway(provider, self._settings.base_url, self._database)
        payments = self._settings.payments
        if provider == PROVIDER_A and payments.razorpay_configured:
            from .razorpay_gateway import RazorpayGateway

            return RazorpayGateway(payments)
        if provider == PROVIDER_B and payments.stripe_configured:
            from .stripe_gateway import StripeGateway

            return StripeGateway(payments)
        raise PaymentsUnavailable(messages.provider_unavailable(provider))


__all__ = ["Gateways"]
