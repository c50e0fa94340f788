"""What the paid products need from the payment providers and from delivery (interface only).

The API routes for `/api/compliance-report/pay`, `/api/verify-one-time` and
`/api/compliance-report/generate` validate requests, keep tokens and payments in the store,
and call these protocols for everything that talks to a provider or sends email. Issue 5
implements them (provider A = razorpay in INR paise, provider B = stripe in USD cents) and
passes the implementations to `api_routes.create_api(payments=..., fulfilment=...)`. Until
then those routes answer 503.

Calls are synchronous (the provider SDKs are); routes run them in worker threads.
Exceptions carry the HTTP status the API answers with, like the scanner's errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class DeliveryFailed(PaymentError):
    """An email could not be sent."""

    http_status = 502


@dataclass(frozen=True)
class VerifiedPayment:
    """A payment the provider confirmed as paid."""

    provider: str
    amount: int  # minor units (paise, cents)
    currency: str
    provider_payment_id: str | None = None
    provider_order_id: str | None = None
    email: str | None = None


@dataclass(frozen=True)
class ComplianceCheckout:
    """A started checkout for a compliance report.

    `fields` go into the pay response as they are (spec 4.6, provider A: order_id, amount,
    key; provider B: the checkout URL). With `token_in_response` the API issues the
    compliance token now and adds it as `token` (provider A: the payment is confirmed when
    the token is used); otherwise the provider's webhook issues and emails it (provider B).
    """

    provider_order_id: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    token_in_response: bool = True


class PaymentGateway(Protocol):
    def start_compliance_checkout(self, *, provider: str, email: str, url: str) -> ComplianceCheckout:
        """Create the provider order / checkout session for one compliance report."""
        ...

    def verify_one_time_payment(self, payment_id: str) -> VerifiedPayment:
        """Confirm a provider A one-time scan payment (spec 4.7). Raises PaymentNotVerified."""
        ...

    def confirm_compliance_payment(self, *, provider: str, provider_order_id: str) -> VerifiedPayment | None:
        """The captured payment for a compliance order, or None if it is not paid (yet)."""
        ...


class Fulfilment(Protocol):
    def send_scan_token(self, *, email: str, token: str) -> None:
        """Email a one-time scan token / link. Raises DeliveryFailed."""
        ...

    def send_compliance_report(self, *, email: str, url: str, report: Mapping[str, Any]) -> None:
        """Render the compliance PDF from a Pro scan report (spec 2.2 dict) and email it. Raises DeliveryFailed."""
        ...


__all__ = [
    "PROVIDERS",
    "PROVIDER_A",
    "PROVIDER_B",
    "ComplianceCheckout",
    "DeliveryFailed",
    "Fulfilment",
    "PaymentError",
    "PaymentGateway",
    "PaymentNotVerified",
    "PaymentsUnavailable",
    "VerifiedPayment",
]
