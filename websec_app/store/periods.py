"""Quota periods: the calendar month and the day, both in UTC (spec 3 and 8)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("quota periods need an aware datetime")
    return now.astimezone(UTC)


def month_period(now: datetime) -> str:
    """The key of the calendar month (UTC) that `now` falls in, e.g. "2026-11"."""
    return _utc(now).strftime("%Y-%m")


def month_resets_at(now: datetime) -> datetime:
    """Midnight UTC on the 1st of the next month: when the monthly quota resets."""
    now = _utc(now)
    if now.month == 12:
        return datetime(now.year + 1, 1, 1, tzinfo=UTC)
    return datetime(now.year, now.month + 1, 1, tzinfo=UTC)


def day_period(now: datetime) -> str:
    """The key of the UTC day that `now` falls in, e.g. "2026-11-22"."""
    return _utc(now).strftime("%Y-%m-%d")


def day_resets_at(now: datetime) -> datetime:
    """The next midnight UTC: when the free daily quota resets."""
    now = _utc(now)
    return datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
