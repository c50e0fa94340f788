"""What a use case refuses with, besides the scanner's ScanError, the store's TokenRejected and the admission's
ScannerBusy: each interface turns these into its own words (API: status + `{"error"}`; UI: ui/messages.py), except
what the owner of a key whose subscription is not active can do, which both say alike (accounts.py)."""

from __future__ import annotations

from datetime import datetime


class QuotaUsed(Exception):
    """No scan left in the period; `resets_at` says when the counter starts again."""

    def __init__(self, limit: int, resets_at: datetime) -> None:
        super().__init__(f"quota of {limit} used up until {resets_at.isoformat()}")
        self.limit = limit
        self.resets_at = resets_at


class FreeQuotaUsed(QuotaUsed):
    """Today's free scans (per client address, UTC day) are used up."""


class MonthlyQuotaUsed(QuotaUsed):
    """The subscription's scans for this calendar month are used up."""


class KeyRefused(Exception):
    """The API key cannot be used for Pro scans: `reason` is a store.KeyStatus value, or "no_plan";
    `subscription_status` is the subscription's (past_due, cancelled, disputed) when it is not active."""

    def __init__(self, reason: str, subscription_status: str | None = None) -> None:
        super().__init__(f"API key refused: {reason}")
        self.reason = reason
        self.subscription_status = subscription_status


__all__ = ["FreeQuotaUsed", "KeyRefused", "MonthlyQuotaUsed", "QuotaUsed"]
