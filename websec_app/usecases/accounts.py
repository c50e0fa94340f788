"""A Pro subscriber: from an API key to the account, its month's usage and its recent scans.

One key lookup for every interface: the prebuilt query on the database's hot reader
(`store.look_up_api_key`, see store/hot_rows for why it bypasses the ORM), awaited on the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from websec_app.store import (
    PLAN_LABELS,
    KeyCheck,
    KeyStatus,
    look_up_api_key,
    month_resets_at,
    monthly_scan_limit,
    monthly_scans_used,
    recent_scans,
    report_ids_for_scans,
)
from websec_app.store.models import SUBSCRIPTION_CANCELLED, SUBSCRIPTION_DISPUTED, SUBSCRIPTION_PAST_DUE

from .errors import KeyRefused
from .runtime import Runtime


@dataclass(frozen=True)
class Subscriber:
    """An authenticated Pro subscriber (the one result of a key lookup)."""

    key_id: int
    subscription_id: int
    email: str
    plan: str
    monthly_limit: int

    @property
    def plan_label(self) -> str:
        return PLAN_LABELS.get(self.plan, self.plan)


@dataclass(frozen=True)
class Usage:
    used: int
    limit: int
    resets_at: datetime

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


@dataclass(frozen=True)
class RecentScan:
    scanned_at: datetime
    url: str
    grade: str
    score: int
    kind: str
    report_id: str  # "" when no report body was kept (API scans)


#: Why a key of a subscription that is not active is refused, and what its owner can do (docs/payments.md): the
#: API's 403 and the web UI say the same. A failed renewal is retried by the provider and its payment brings the
#: same key back; a cancellation is final, and buying Pro again starts a new subscription with a new key; no
#: provider event lifts a dispute: an operator settles it.
_INACTIVE_SUBSCRIPTION = {
    SUBSCRIPTION_PAST_DUE: "The Pro subscription for this API key is on hold: its renewal has not been paid. "
    "The same key works again as soon as the payment provider collects the renewal, so check the card or "
    "account the subscription is paid with.",
    SUBSCRIPTION_CANCELLED: "The Pro subscription for this API key was cancelled, and a cancelled subscription "
    "cannot be renewed. To scan with Pro again, subscribe again: the new subscription comes with a new key.",
    SUBSCRIPTION_DISPUTED: "A payment of the Pro subscription for this API key is disputed, so the key is "
    "suspended until the dispute is settled; paying again does not lift it. Contact support to settle it.",
}
_NOT_ACTIVE = "The Pro subscription for this API key is not active."


def inactive_subscription_sentence(status: str | None) -> str:
    """What the owner of a key refused for its subscription's `status` is told, in the API and the UI."""
    return _INACTIVE_SUBSCRIPTION.get(status or "", _NOT_ACTIVE)


def presented(key: str | None) -> str | None:
    """The key as sent, or None when absent or blank."""
    if key is None:
        return None
    key = key.strip()
    return key or None


def subscriber_of(check: KeyCheck, runtime: Runtime) -> Subscriber:
    """The subscriber of a looked-up key. Raises KeyRefused for anything but a valid key of a plan with scans."""
    if not check.valid or check.key_id is None or check.subscription_id is None:
        raise KeyRefused(check.status.value if not check.valid else KeyStatus.UNKNOWN.value, check.subscription_status)
    plan = check.plan or ""
    limit = monthly_scan_limit(plan, runtime.settings)
    if limit <= 0:
        raise KeyRefused("no_plan")
    return Subscriber(check.key_id, check.subscription_id, check.email or "", plan, limit)


async def authenticate(runtime: Runtime, key: str) -> Subscriber:
    """The subscriber a key belongs to. Raises KeyRefused."""
    check, _ = await look_up_api_key(runtime.hot_rows(), key.strip())
    return subscriber_of(check, runtime)


async def usage(runtime: Runtime, subscriber: Subscriber) -> Usage:
    now = runtime.now()
    used = await runtime.db(monthly_scans_used, subscriber.subscription_id, now)
    return Usage(used, subscriber.monthly_limit, month_resets_at(now))


def _recent(session: Session, subscription_id: int, limit: int) -> list[RecentScan]:
    records = recent_scans(session, subscription_id=subscription_id, limit=limit)
    links = report_ids_for_scans(session, [r.id for r in records if r.id is not None])
    return [
        RecentScan(r.created_at, r.final_url or r.url, r.grade, r.score, r.kind, links.get(r.id or 0, ""))
        for r in records
    ]


async def recent(runtime: Runtime, subscriber: Subscriber, limit: int = 10) -> list[RecentScan]:
    """The subscription's latest scans (UI and API alike), newest first."""
    return await runtime.db(_recent, subscriber.subscription_id, limit)


__all__ = ["RecentScan", "Subscriber", "Usage", "authenticate", "presented", "recent", "subscriber_of", "usage"]
