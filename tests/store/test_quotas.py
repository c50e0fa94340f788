"""Monthly and daily counters: reserve up to the limit, refund to the period the unit came from."""

from __future__ import annotations

from datetime import UTC, datetime

from websec_app.store import (
    Database,
    create_subscription,
    free_scans_used,
    monthly_scans_used,
    refund,
    reserve_free_scan,
    reserve_monthly_scan,
)

NOV_30_LATE = datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
DEC_1 = datetime(2026, 12, 1, tzinfo=UTC)


def subscription_id(database: Database) -> int:
    with database.session() as session:
        subscription = create_subscription(session, email="q@example.com", now=NOV_30_LATE)
    assert subscription.id is not None
    return subscription.id


def test_monthly_reservations_stop_at_the_limit(any_database: Database) -> None:
    sub = subscription_id(any_database)
    with any_database.session() as session:
        taken = [reserve_monthly_scan(session, sub, NOV_30_LATE, 3) for _ in range(4)]

    assert [r.used if r else None for r in taken] == [1, 2, 3, None]
    assert [r.remaining if r else None for r in taken] == [2, 1, 0, None]


def test_a_new_month_starts_from_zero(any_database: Database) -> None:
    sub = subscription_id(any_database)
    with any_database.session() as session:
        for _ in range(3):
            reserve_monthly_scan(session, sub, NOV_30_LATE, 3)

        assert reserve_monthly_scan(session, sub, NOV_30_LATE, 3) is None
        assert reserve_monthly_scan(session, sub, DEC_1, 3) is not None
        assert monthly_scans_used(session, sub, NOV_30_LATE) == 3
        assert monthly_scans_used(session, sub, DEC_1) == 1


def test_a_refund_goes_back_to_the_month_it_came_from(any_database: Database) -> None:
    sub = subscription_id(any_database)
    with any_database.session() as session:
        reservation = reserve_monthly_scan(session, sub, NOV_30_LATE, 3)
        assert reservation is not None
        reserve_monthly_scan(session, sub, DEC_1, 3)

        refund(session, reservation)  # the scan ran over midnight and failed

        assert monthly_scans_used(session, sub, NOV_30_LATE) == 0
        assert monthly_scans_used(session, sub, DEC_1) == 1


def test_a_refund_never_goes_below_zero(any_database: Database) -> None:
    with any_database.session() as session:
        reservation = reserve_free_scan(session, "192.0.2.1", NOV_30_LATE, 1)
        assert reservation is not None
        refund(session, reservation)
        refund(session, reservation)

        assert free_scans_used(session, "192.0.2.1", NOV_30_LATE) == 0


def test_free_counters_are_per_client_and_day(any_database: Database) -> None:
    with any_database.session() as session:
        assert reserve_free_scan(session, "192.0.2.1", NOV_30_LATE, 1) is not None
        assert reserve_free_scan(session, "192.0.2.1", NOV_30_LATE, 1) is None
        assert reserve_free_scan(session, "192.0.2.2", NOV_30_LATE, 1) is not None
        assert reserve_free_scan(session, "192.0.2.1", DEC_1, 1) is not None
