"""Payment providers: the gateways that talk to them, and the events they report, in one vocabulary.

Provider A is Razorpay (INR, amounts in paise), provider B is Stripe (USD, cents); the
`provider` values are their lowercase names (spec 4.6). Each gateway turns its provider's API
and webhooks into the small frozen events of `events.py`; `websec_app.services.checkout`
decides what an event buys, with the store, and is what the API and the UI call.

Calls are synchronous (the provider SDKs are); async callers run them in worker threads.
Exceptions carry the HTTP status the API answers with, like the scanner's errors.
"""

from __future__ import annotations

#: Body value `provider` of `/api/compliance-report/pay` (spec 4.6: the lowercase provider names).
PROVIDER_A = "razorpay"
PROVIDER_B = "stripe"
PROVIDERS = (PROVIDER_A, PROVIDER_B)


class PaymentError(Exception):
    """A provider call failed (network, provider error)."""

    http_status = 502


class PaymentNotVerified(PaymentError):
    """The provider says the payment does not exist, is not captured, or is for another product."""

    http_status = 402


class PaymentsUnavailable(PaymentError):
    """Payments (or delivery) are not configured on this server."""

    http_status = 503


class InvalidWebhook(PaymentError):
    """A webhook whose signature does not verify, or that is not a provider event at all."""

    http_status = 400


class UnknownCheckout(PaymentError):
    """No checkout with that reference was started here."""

    http_status = 404


__all__ = [
    "PROVIDERS",
    "PROVIDER_A",
    "PROVIDER_B",
    "InvalidWebhook",
    "PaymentError",
    "PaymentNotVerified",
    "PaymentsUnavailable",
    "UnknownCheckout",
]
