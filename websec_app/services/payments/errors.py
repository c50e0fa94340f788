"""What can go wrong with a payment. Each exception carries the HTTP status the API answers with, like
the scanner's errors; its text (from `messages.py`) is what the API and the UI show."""

from __future__ import annotations


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


class InvalidPaymentId(PaymentError):
    """A payment or order id that is not shaped like the provider's: refused before any provider call."""

    http_status = 400


class TooManyRequests(PaymentError):
    """A client asked too often (payment starts, provider status checks): retry after `retry_after` seconds."""

    http_status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownCheckout(PaymentError):
    """No checkout with that reference was started here."""

    http_status = 404


__all__ = [
    "InvalidPaymentId",
    "InvalidWebhook",
    "PaymentError",
    "PaymentNotVerified",
    "PaymentsUnavailable",
    "TooManyRequests",
    "UnknownCheckout",
]
