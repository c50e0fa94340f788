"""How often one client may start a payment or make us ask a provider about one (issue 12).

Starting a checkout creates an order at the provider and a token row here, and a generate request for a
Razorpay token whose payment is not confirmed yet asks Razorpay; both are free to call, so both are
bounded per client address, and the provider's answer for a token is cached for a moment.

Process-local on purpose: the counters live in this process's memory, bounded in size (the least
recently seen clients are forgotten first). With several processes each enforces its own limits, so a
client may get up to N times the allowance (docs/deploy.md).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from datetime import datetime, timedelta

#: Payment starts (`POST /api/compliance-report/pay`) per client address.
CHECKOUTS_PER_CLIENT = (30, timedelta(hours=1))
#: Provider status checks (a generate for an unconfirmed Razorpay token) per client address.
STATUS_CHECKS_PER_CLIENT = (12, timedelta(minutes=10))
#: How long Razorpay's "not paid yet" for one order is believed before it is asked again.
STATUS_CACHE_SECONDS = 15.0
#: Clients (or orders) remembered at most; the least recently seen are dropped first.
MAX_KEYS = 10_000


class RateLimiter:
    """At most `limit` hits per `window` for each key (a sliding window), for `max_keys` keys at most."""

    def __init__(self, limit: int, window: timedelta, max_keys: int = MAX_KEYS) -> None:
        self.limit, self.window, self.max_keys = limit, window, max_keys
        self._hits: OrderedDict[str, deque[datetime]] = OrderedDict()
        self._lock = threading.Lock()

    def hit(self, key: str, now: datetime) -> int | None:
        """Count one hit; None when allowed, else the seconds until the next one would be."""
        with self._lock:
            hits = self._hits.pop(key, None) or deque()
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            self._hits[key] = hits
            if len(self._hits) > self.max_keys:
                self._hits.popitem(last=False)
            if len(hits) >= self.limit:
                return max(1, math.ceil((hits[0] + self.window - now).total_seconds()))
            hits.append(now)
            return None


class RecentAnswers:
    """Keys answered "no" a moment ago (Razorpay: this order is not paid yet), for `seconds`."""

    def __init__(self, seconds: float = STATUS_CACHE_SECONDS, max_keys: int = MAX_KEYS) -> None:
        self.ttl, self.max_keys = timedelta(seconds=seconds), max_keys
        self._seen: OrderedDict[str, datetime] = OrderedDict()
        self._lock = threading.Lock()

    def fresh(self, key: str, now: datetime) -> bool:
        with self._lock:
            at = self._seen.get(key)
            return at is not None and now - at < self.ttl

    def forget(self, key: str) -> None:
        """The answer changed (the sandbox captured this order's payment): ask again next time."""
        with self._lock:
            self._seen.pop(key, None)

    def remember(self, key: str, now: datetime) -> None:
        with self._lock:
            self._seen.pop(key, None)
            self._seen[key] = now
            if len(self._seen) > self.max_keys:
                self._seen.popitem(last=False)


class PaymentLimits:
    """The limits of one PaymentService (one per process)."""

    def __init__(self) -> None:
        self.checkouts = RateLimiter(*CHECKOUTS_PER_CLIENT)
        self.status_checks = RateLimiter(*STATUS_CHECKS_PER_CLIENT)
        self.not_paid_yet = RecentAnswers()


__all__ = ["CHECKOUTS_PER_CLIENT", "STATUS_CHECKS_PER_CLIENT", "PaymentLimits", "RateLimiter", "RecentAnswers"]
