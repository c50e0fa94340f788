"""Column types shared by the tables."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in Python, naive UTC in the database.

    SQLite has no time zones and compares timestamps as text, so every value is stored
    in one form (naive UTC) on every backend; comparisons in SQL (`expires_at > :now`)
    then mean the same thing on SQLite and PostgreSQL. Naive input is refused: a naive
    `now` is almost always a local-time bug.
    """

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError(f"UTCDateTime needs an aware datetime, got {value!r}")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        stored: datetime = value  # the driver gives a naive datetime, UTC by construction (process_bind_param)
        return stored.replace(tzinfo=UTC)
