"""API keys and the subscriptions they belong to.

The monthly quota belongs to the subscription, not the key: rotating a compromised key
(spec 5: "regenerated through support") keeps the month's usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import and_, bindparam
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select, update

from ._secrets import hash_secret, hashes_match, new_secret, plausible
from ._sql import HotRows, Reader, first_row
from .models import PLAN_PRO, SUBSCRIPTION_ACTIVE, ApiKey, MonthlyUsage, Subscription
from .periods import month_period

KEY_PREFIX = "wsk_"
#: How many characters of a key `keys list` shows ("wsk_" plus four).
_SHOWN_PREFIX = len(KEY_PREFIX) + 4


class KeyStatus(StrEnum):
    VALID = "valid"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    SUBSCRIPTION_INACTIVE = "subscription_inactive"


@dataclass(frozen=True)
class KeyCheck:
    """What a presented key is worth. Only `VALID` keys may use key-required endpoints."""

    status: KeyStatus
    key_id: int | None = None
    subscription_id: int | None = None
    email: str | None = None
    plan: str | None = None
    #: The subscription's status (models.SUBSCRIPTION_*) when it is why the key is refused, else None.
    subscription_status: str | None = None

    @property
    def valid(self) -> bool:
        return self.status is KeyStatus.VALID


@dataclass(frozen=True)
class IssuedKey:
    """A new key. `key` is the only copy of the plain key: show it once, then forget it."""

    key: str
    key_id: int
    prefix: str
    subscription_id: int
    email: str
    plan: str


@dataclass(frozen=True)
class KeyListing:
    key_id: int
    prefix: str
    email: str
    plan: str
    active: bool
    subscription_status: str
    created_at: datetime
    revoked_at: datetime | None


class ActiveKeyExists(Exception):
    """The subscription already has an active key (use rotation to replace it)."""

    def __init__(self, prefix: str) -> None:
        super().__init__(f"an active key ({prefix}…) already exists")
        self.prefix = prefix


class NoSubscription(LookupError):
    """No active subscription for that email address."""


def normalise_email(email: str) -> str:
    return email.strip().lower()


#: The hottest query of the API (every key-authenticated request), built once: a Core statement on the
#: session's connection, with no ORM objects, costs a fifth of building and running it per call.
_KEY_LOOKUP = (
    sa_select(
        col(ApiKey.id),
        col(ApiKey.key_hash),
        col(ApiKey.active),
        col(Subscription.id),
        col(Subscription.email),
        col(Subscription.plan),
        col(Subscription.status),
    )
    .join(Subscription, col(Subscription.id) == col(ApiKey.subscription_id))
    .where(col(ApiKey.key_hash) == bindparam("digest"))
)
#: The same lookup plus the subscription's counter for one month (`GET /api/usage`, polled by clients):
#: one round trip instead of two.
_KEY_AND_USAGE_LOOKUP = _KEY_LOOKUP.add_columns(col(MonthlyUsage.used)).outerjoin(
    MonthlyUsage,
    and_(col(MonthlyUsage.subscription_id) == col(Subscription.id), col(MonthlyUsage.period) == bindparam("period")),
)


def check_api_key(session: Reader, key: str) -> KeyCheck:
    """Look a presented key up by its hash (one indexed query)."""
    digest = _digest_of(key)
    if digest is None:
        return KeyCheck(KeyStatus.UNKNOWN)
    return _check_of(first_row(session, _KEY_LOOKUP, {"digest": digest}), digest)[0]


async def look_up_api_key(rows: HotRows, key: str, now: datetime | None = None) -> tuple[KeyCheck, int]:
    """`check_api_key` through the database's hot reader (`Database.hot_rows()`), for the API's event loop.

    With `now`, the same query also returns the scans used this month (UTC) by the key's subscription
    (`GET /api/usage`: one round trip instead of two); without it the count is 0.
    """
    digest = _digest_of(key)
    if digest is None:
        return KeyCheck(KeyStatus.UNKNOWN), 0
    if now is None:
        row = await rows.first(_KEY_LOOKUP, {"digest": digest})
    else:
        row = await rows.first(_KEY_AND_USAGE_LOOKUP, {"digest": digest, "period": month_period(now)})
    return _check_of(row, digest)


def _digest_of(key: str) -> str | None:
    return hash_secret(key) if plausible(key) else None


def _check_of(row: Sequence[Any] | None, digest: str) -> tuple[KeyCheck, int]:
    """What a lookup row says (None: no such key); the 8th column, when selected, is the month's usage."""
    if row is None or not hashes_match(row[1], digest):
        return KeyCheck(KeyStatus.UNKNOWN), 0
    key_id, _, active, subscription_id, email, plan, subscription_status = row[:7]  # active: bool, or 0/1 raw
    inactive = None
    if not active:
        status = KeyStatus.REVOKED
    elif subscription_status != SUBSCRIPTION_ACTIVE:
        status, inactive = KeyStatus.SUBSCRIPTION_INACTIVE, str(subscription_status)
    else:
        status = KeyStatus.VALID
    used = int(row[7] or 0) if len(row) > 7 else 0
    return KeyCheck(status, key_id, subscription_id, email, plan, inactive), used


def create_subscription(
    session: Session,
    *,
    email: str,
    now: datetime,
    plan: str = PLAN_PRO,
    provider: str = "manual",
    provider_subscription_id: str | None = None,
) -> Subscription:
    subscription = Subscription(
        email=normalise_email(email),
        plan=plan,
        provider=provider,
        provider_subscription_id=provider_subscription_id,
        created_at=now,
        updated_at=now,
    )
    session.add(subscription)
    session.commit()
    session.refresh(subscription)
    return subscription


def find_active_subscription(session: Session, email: str) -> Subscription | None:
    """The newest active subscription of an email address."""
    return session.exec(
        select(Subscription)
        .where(Subscription.email == normalise_email(email), Subscription.status == SUBSCRIPTION_ACTIVE)
        .order_by(col(Subscription.id).desc())
    ).first()


def set_subscription_status(session: Session, subscription_id: int, status: str, now: datetime) -> None:
    """Activate or cancel a subscription (its keys stop working at once when it is not active). Counted in
    `status_version` as every status write is, so a provider's answer read before it cannot undo it."""
    session.exec(
        update(Subscription)
        .where(col(Subscription.id) == subscription_id)
        .values(status=status, updated_at=now, status_version=col(Subscription.status_version) + 1)
    )
    session.commit()


def _insert_key(session: Session, subscription: Subscription, now: datetime) -> IssuedKey:
    if subscription.id is None:
        raise NoSubscription("the subscription has not been saved")
    plain = new_secret(KEY_PREFIX)
    row = ApiKey(
        key_hash=hash_secret(plain), prefix=plain[:_SHOWN_PREFIX], subscription_id=subscription.id, created_at=now
    )
    session.add(row)
    session.flush()
    if row.id is None:  # pragma: no cover - the flush assigns it
        raise RuntimeError("api key row has no id after flush")
    return IssuedKey(plain, row.id, row.prefix, subscription.id, subscription.email, subscription.plan)


def issue_api_key(session: Session, subscription_id: int, now: datetime) -> IssuedKey:
    """A first key for a subscription. Raises ActiveKeyExists if it already has one."""
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        raise NoSubscription(f"no subscription with id {subscription_id}")
    existing = session.exec(
        select(ApiKey.prefix).where(ApiKey.subscription_id == subscription_id, col(ApiKey.active).is_(True))
    ).first()
    if existing is not None:
        raise ActiveKeyExists(existing)
    try:
        issued = _insert_key(session, subscription, now)
        session.commit()
    except IntegrityError:  # another request issued one at the same moment (partial unique index)
        session.rollback()
        raise ActiveKeyExists("?") from None
    return issued


def rotate_api_key(session: Session, subscription_id: int, now: datetime) -> IssuedKey:
    """Deactivate the subscription's active key(s) and issue a new one, in one transaction."""
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        raise NoSubscription(f"no subscription with id {subscription_id}")
    session.exec(
        update(ApiKey)
        .where(col(ApiKey.subscription_id) == subscription_id, col(ApiKey.active).is_(True))
        .values(active=False, revoked_at=now)
    )
    issued = _insert_key(session, subscription, now)
    session.commit()
    return issued


def revoke_api_key(session: Session, key: str, now: datetime) -> bool:
    """Deactivate one key; False when no active key matches."""
    if not plausible(key):
        return False
    result = session.exec(
        update(ApiKey)
        .where(col(ApiKey.key_hash) == hash_secret(key), col(ApiKey.active).is_(True))
        .values(active=False, revoked_at=now)
    )
    session.commit()
    return result.rowcount == 1


def list_api_keys(session: Session) -> list[KeyListing]:
    rows = session.exec(
        select(ApiKey, Subscription)
        .join(Subscription, col(Subscription.id) == col(ApiKey.subscription_id))
        .order_by(col(ApiKey.id))
    ).all()
    return [
        KeyListing(
            key_id=key.id or 0,
            prefix=key.prefix,
            email=subscription.email,
            plan=subscription.plan,
            active=key.active,
            subscription_status=subscription.status,
            created_at=key.created_at,
            revoked_at=key.revoked_at,
        )
        for key, subscription in rows
    ]
