"""Monthly and daily counters: reserve up to the limit, refund to the period the unit came from."""

from __future__ import annotations

import dataclasses
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


def test_past_days_counters_are_pruned_once_a_day(any_database: Database) -> None:
    from sqlmodel import select

    from websec_app.store.models import FreeScanCounter

    def days() -> list[tuple[str, str]]:
        with any_database.session() as session:
            rows = session.exec(select(FreeScanCounter.client, FreeScanCounter.day)).all()
        return sorted((client, day) for client, day in rows)

    # Given counters of two clients on Nov 30
    with any_database.session() as session:
        reserve_free_scan(session, "192.0.2.1", NOV_30_LATE, 10)
        reserve_free_scan(session, "192.0.2.2", NOV_30_LATE, 10)

    # When the first client of Dec 1 scans, Nov 30's counters go
    with any_database.session() as session:
        reserve_free_scan(session, "192.0.2.3", DEC_1, 10)
    assert days() == [("192.0.2.3", "2026-12-01")]

    # And a refund of a Nov 30 reservation finds nothing to give back, which is right: that day is over
    with any_database.session() as session:
        late = reserve_free_scan(session, "192.0.2.4", DEC_1, 10)
        assert late is not None
        refund(session, dataclasses.replace(late, period="2026-11-30"))
        assert free_scans_used(session, "192.0.2.4", DEC_1) == 1

    # But the same day's further new clients do not delete again (once per day per process)
    with any_database.engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO free_scan_counters (client, day, used) VALUES ('192.0.2.9', '2026-11-29', 1)"
        )
    with any_database.session() as session:
        reserve_free_scan(session, "192.0.2.5", DEC_1, 10)
    assert ("192.0.2.9", "2026-11-29") in days()
