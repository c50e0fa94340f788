"""The sandbox: a stand-in for a provider that has no keys, in development only.

A newcomer without Razorpay or Stripe accounts can still click through every purchase: checkouts
get a reference `sbx_...` and a local page (`/api/sandbox/checkout/<ref>`, clearly labelled
SANDBOX) whose Pay button produces the same events a real webhook would, so everything after the
payment (tokens, keys, outbox emails, renewals, cancellations) runs the production code. The
settings refuse it in production (`Settings.sandbox_serves`).
"""

from __future__ import annotations

import secrets

from ..prices import Price

#: References of sandbox checkouts start with this, so no real provider id can be mistaken for one.
SANDBOX_PREFIX = "sbx_"
#: The publishable "key" shown where Razorpay's would be.
SANDBOX_KEY = "rzp_sandbox_no_real_money"


class SandboxGateway:
    """Makes up references; `checkout.PaymentService.complete_sandbox_checkout` plays the provider."""

    sandbox = True

    def __init__(self, provider: str, base_url: str) -> None:
        self.provider = provider
        self.key_id = SANDBOX_KEY
        self._base_url = base_url.rstrip("/")

    def new_reference(self, price: Price) -> str:
        kind = "sub" if price.interval else "order"
        return f"{SANDBOX_PREFIX}{self.provider[:3]}_{kind}_{secrets.token_urlsafe(12)}"

    def checkout_url(self, reference: str) -> str:
        return f"{self._base_url}/api/sandbox/checkout/{reference}"

    @staticmethod
    def new_payment_id() -> str:
        return f"{SANDBOX_PREFIX}pay_{secrets.token_urlsafe(12)}"


def is_sandbox_reference(reference: str) -> bool:
    return reference.startswith(SANDBOX_PREFIX)


__all__ = ["SANDBOX_KEY", "SANDBOX_PREFIX", "SandboxGateway", "is_sandbox_reference"]
