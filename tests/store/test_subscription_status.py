"""A provider's subscription status events apply in the order they happened, not the order they arrived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from websec_app.store import Database
from websec_app.store.models import (
    SUBSCRIPTION_ACTIVE,
    SUBSCRIPTION_CANCELLED,
    SUBSCRIPTION_PAST_DUE,
    Subscription,
)
from websec_app.store.purchases import StatusUpdate, open_subscription, set_provider_subscription_status

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
DAY = timedelta(days=1)


def _active(database: Database) -> int:
    with database.session() as session:
        subscription = open_subscription(
            session, provider="stripe", provider_subscription_id="sub_1", email="pro@example.com", now=NOW
        )
        assert subscription.id is not None
    with database.session() as session:  # pending -> active happens at settlement; set it directly here
        row = session.get(Subscription, subscription.id)
        assert row is not None
        row.status = SUBSCRIPTION_ACTIVE
        session.add(row)
        session.commit()
    return subscription.id


def _status(database: Database, subscription_id: int) -> tuple[str, datetime | None]:
    with database.session() as session:
        row = session.get(Subscription, subscription_id)
        assert row is not None
        return row.status, row.status_event_at


def _set(database: Database, subscription_id: int, status: str, at: datetime | None) -> StatusUpdate:
    with database.session() as session:
        return set_provider_subscription_status(session, subscription_id, status, NOW, occurred_at=at)


def test_an_event_older_than_the_last_applied_one_changes_nothing(any_database: Database) -> None:
    subscription_id = _active(any_database)

    renewed = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 3 * DAY)  # same status, newer
    late_failure = _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + DAY)
    after_late = _status(any_database, subscription_id)
    newer_failure = _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)
    late_charge = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 3 * DAY)

    assert renewed == StatusUpdate(changed=False)
    assert late_failure == StatusUpdate(changed=False, stale=True)
    assert after_late == (SUBSCRIPTION_ACTIVE, NOW + 3 * DAY)  # the renewal's time was kept
    assert newer_failure == StatusUpdate(changed=True)
    assert late_charge == StatusUpdate(changed=False, stale=True)
    assert _status(any_database, subscription_id) == (SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)


def test_a_cancellation_applies_whatever_its_time_and_stays_final(any_database: Database) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 10 * DAY)

    cancelled = _set(any_database, subscription_id, SUBSCRIPTION_CANCELLED, NOW + DAY)
    revived = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 40 * DAY)

    assert cancelled == StatusUpdate(changed=True)
    assert revived.changed is False
    assert _status(any_database, subscription_id)[0] == SUBSCRIPTION_CANCELLED


def test_an_event_without_a_time_applies_and_keeps_the_time_of_the_last_one(any_database: Database) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 5 * DAY)

    untimed = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, None)

    assert untimed == StatusUpdate(changed=True)
    assert _status(any_database, subscription_id) == (SUBSCRIPTION_ACTIVE, NOW + 5 * DAY)
