"""Buying things: start a checkout, confirm a payment, act on provider events, generate what was bought.

`PaymentService` (`service.py`) is what the API, the use cases and the web UI call; it is composed of
one module per job: `checkout.py` (starting a checkout), `confirmation.py` (the buyer returns with a
payment), `fulfilment.py` (webhooks, and the one place a payment takes effect), `compliance_report.py`
(the paid compliance report), `sandbox.py` and `sandbox_checkouts.py` (development without provider keys:
the gateway the sandbox plays, below fulfilment, and its page's buttons, above it). The gateways
(`razorpay_gateway.py`, `stripe_gateway.py`) turn each provider's API and webhooks into the small frozen
events of `events.py`; every sentence a buyer reads is in `messages.py`.

Provider A is Razorpay (INR, amounts in paise), provider B is Stripe (USD, cents). Calls are synchronous
(the provider SDKs are); async callers run them in worker threads. Exceptions carry the HTTP status the
API answers with, like the scanner's errors.
"""

from __future__ import annotations

from .checkout import ACTION_RAZORPAY, ACTION_REDIRECT, CheckoutStart
from .compliance_report import GeneratedReport, QueuedReport
from .errors import (
    InvalidPaymentId,
    InvalidWebhook,
    PaymentError,
    PaymentNotVerified,
    PaymentsUnavailable,
    TooManyRequests,
    UnknownCheckout,
)
from .fulfilment import Confirmation, Outcome
from .providers import PROVIDER_A, PROVIDER_B, PROVIDERS
from .service import PaymentService, build_payment_service

__all__ = [
    "ACTION_RAZORPAY",
    "ACTION_REDIRECT",
    "PROVIDERS",
    "PROVIDER_A",
    "PROVIDER_B",
    "CheckoutStart",
    "Confirmation",
    "GeneratedReport",
    "InvalidPaymentId",
    "InvalidWebhook",
    "Outcome",
    "PaymentError",
    "PaymentNotVerified",
    "PaymentService",
    "PaymentsUnavailable",
    "QueuedReport",
    "TooManyRequests",
    "UnknownCheckout",
    "build_payment_service",
]
