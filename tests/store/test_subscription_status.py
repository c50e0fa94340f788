"""A provider's subscription status events apply in the order they happened, not the order they arrived; two of
the same second that disagree are left to the provider to decide."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from websec_app.store import Database
from websec_app.store.keys import set_subscription_status
from websec_app.store.models import (
    SUBSCRIPTION_ACTIVE,
    SUBSCRIPTION_CANCELLED,
    SUBSCRIPTION_PAST_DUE,
    Subscription,
)
from websec_app.store.purchases import (
    StatusUpdate,
    decide_subscription_status,
    hold_unconfirmed_status,
    open_subscription,
    set_provider_subscription_status,
)

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


def _found(database: Database, subscription_id: int) -> tuple[str, bool, int]:
    with database.session() as session:
        row = session.get(Subscription, subscription_id)
        assert row is not None
        return row.status, row.status_unconfirmed, row.status_version


def test_an_event_of_the_same_second_that_disagrees_is_left_to_the_provider(any_database: Database) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)  # invoice.paid of the retry

    failure = _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)  # its failure, same second
    agreeing = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)
    with any_database.session() as session:  # the provider says: active
        decided = decide_subscription_status(session, subscription_id, SUBSCRIPTION_ACTIVE, NOW, undecided=failure)

    assert failure.undecided and (failure.changed, failure.stale, failure.found) == (False, False, SUBSCRIPTION_ACTIVE)
    assert agreeing == StatusUpdate(changed=False)  # the same second saying the same: nothing to ask
    assert decided == StatusUpdate(changed=False, found=SUBSCRIPTION_ACTIVE, decided=SUBSCRIPTION_ACTIVE)
    assert _status(any_database, subscription_id) == (SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)


def test_a_decision_is_not_written_over_a_status_written_while_the_provider_was_asked(any_database: Database) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)
    charge = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)  # undecided: ask the provider

    newer = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 60 * DAY)  # meanwhile, a newer event
    with any_database.session() as session:  # the answer read before it
        late_answer = decide_subscription_status(session, subscription_id, SUBSCRIPTION_PAST_DUE, NOW, undecided=charge)
    with any_database.session() as session:
        late_hold = hold_unconfirmed_status(session, subscription_id, NOW, undecided=charge)

    assert charge.undecided and newer == StatusUpdate(changed=True)
    assert late_answer is None and late_hold is False
    assert _status(any_database, subscription_id) == (SUBSCRIPTION_ACTIVE, NOW + 60 * DAY)
    assert _found(any_database, subscription_id)[1] is False


def test_a_held_status_is_asked_about_by_the_next_event_of_its_second_and_settled_by_a_newer_one(
    any_database: Database,
) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)
    charge = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)
    with any_database.session() as session:  # the provider cannot be asked
        held = hold_unconfirmed_status(session, subscription_id, NOW, undecided=charge)
    after_hold = _found(any_database, subscription_id)

    same_charge_again = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)
    newer = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 31 * DAY)

    assert held and after_hold[:2] == (SUBSCRIPTION_ACTIVE, True)  # the payer keeps the key meanwhile
    assert same_charge_again.undecided  # it says the same, but that second's status is not confirmed
    assert newer == StatusUpdate(changed=False)
    assert _found(any_database, subscription_id)[:2] == (SUBSCRIPTION_ACTIVE, False)
    assert _found(any_database, subscription_id)[2] > after_hold[2]


def test_a_cancellation_or_a_dispute_is_not_undone_by_a_decision(any_database: Database) -> None:
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)
    charge = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)
    with any_database.session() as session:  # an operator's direct write, which counts no version
        row = session.get(Subscription, subscription_id)
        assert row is not None
        row.status = SUBSCRIPTION_CANCELLED
        session.add(row)
        session.commit()

    with any_database.session() as session:
        decided = decide_subscription_status(session, subscription_id, SUBSCRIPTION_ACTIVE, NOW, undecided=charge)

    assert decided is None and _status(any_database, subscription_id)[0] == SUBSCRIPTION_CANCELLED


def test_a_decision_is_not_written_over_a_status_an_operator_set_while_the_provider_was_asked(
    any_database: Database,
) -> None:
    # Given a charge of the same second as a failure, left to the provider to decide
    subscription_id = _active(any_database)
    _set(any_database, subscription_id, SUBSCRIPTION_PAST_DUE, NOW + 30 * DAY)
    charge = _set(any_database, subscription_id, SUBSCRIPTION_ACTIVE, NOW + 30 * DAY)

    # When an operator reactivates it meanwhile (store.keys.set_subscription_status), then the answer read before
    # that comes: past due
    with any_database.session() as session:
        set_subscription_status(session, subscription_id, SUBSCRIPTION_ACTIVE, NOW)
    with any_database.session() as session:
        late_answer = decide_subscription_status(session, subscription_id, SUBSCRIPTION_PAST_DUE, NOW, undecided=charge)

    # Then the operator's status stands
    assert charge.undecided and late_answer is None
    assert _status(any_database, subscription_id)[0] == SUBSCRIPTION_ACTIVE
