"""What a use case refuses with, besides the scanner's ScanError, the store's TokenRejected and the admission's
ScannerBusy: each interface turns these into its own words (API: status + `{"error"}`; UI: ui/messages.py)."""

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
    """The API key cannot be used for Pro scans: `reason` is a store.KeyStatus value, or "no_plan"."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"API key refused: {reason}")
        self.reason = reason


__all__ = ["FreeQuotaUsed", "KeyRefused", "MonthlyQuotaUsed", "QuotaUsed"]
