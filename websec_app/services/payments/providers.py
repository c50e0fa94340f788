"""The two payment providers, by the names the API uses for them.

Provider A is Razorpay (INR, amounts in paise), provider B is Stripe (USD, cents); the `provider` values
are their lowercase names (spec 4.6).
"""

from __future__ import annotations

#: Body value `provider` of `/api/compliance-report/pay` (spec 4.6: the lowercase provider names).
PROVIDER_A = "razorpay"
PROVIDER_B = "stripe"
PROVIDERS = (PROVIDER_A, PROVIDER_B)

__all__ = ["PROVIDERS", "PROVIDER_A", "PROVIDER_B"]
