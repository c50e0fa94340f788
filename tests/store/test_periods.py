"""Quota periods are UTC calendar months and UTC days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from websec_app.store import day_period, day_resets_at, month_period, month_resets_at

IST = timezone(timedelta(hours=5, minutes=30))


def test_the_month_is_the_utc_month() -> None:
    # 1 Dec 2026 02:00 in India is still 30 Nov in UTC
    assert month_period(datetime(2026, 12, 1, 2, 0, tzinfo=IST)) == "2026-11"
    assert month_resets_at(datetime(2026, 12, 1, 2, 0, tzinfo=IST)) == datetime(2026, 12, 1, tzinfo=UTC)


def test_december_resets_on_the_first_of_january() -> None:
    assert month_resets_at(datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)


def test_the_day_is_the_utc_day() -> None:
    assert day_period(datetime(2026, 11, 23, 1, 0, tzinfo=IST)) == "2026-11-22"
    assert day_resets_at(datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC)) == datetime(2026, 11, 23, tzinfo=UTC)
    assert day_resets_at(datetime(2028, 2, 28, 12, tzinfo=UTC)) == datetime(2028, 2, 29, tzinfo=UTC)


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        month_period(datetime(2026, 11, 22))
