"""The service's clock (websec_app/clock.py): the system clock unless WEBSEC_CLOCK_START says otherwise."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.clock import TEST_NOW
from websec_app.clock import StartedClock, clock_for, system_clock
from websec_app.settings import Settings, SettingsError, get_settings


def test_without_a_start_the_service_reads_the_system_clock() -> None:
    assert clock_for(Settings()) is system_clock


def test_a_started_clock_reads_its_start_and_runs_on_at_the_real_rate() -> None:
    clock = StartedClock(TEST_NOW)
    first = clock()
    time.sleep(0.05)
    second = clock()
    assert TEST_NOW <= first < second < TEST_NOW + timedelta(seconds=5)
    assert second - first >= timedelta(seconds=0.04)


def test_every_part_of_a_process_reads_the_same_running_clock() -> None:
    settings = Settings(clock_start=TEST_NOW)
    assert clock_for(settings) is clock_for(Settings(clock_start=TEST_NOW, base_url="https://other.test"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-22T12:00:00Z", TEST_NOW),
        ("2026-11-22T17:30:00+05:30", TEST_NOW),
        ("2026-11-22 12:00", TEST_NOW),  # no zone: UTC
    ],
)
def test_websec_clock_start_is_an_iso_instant(raw: str, expected: datetime) -> None:
    assert Settings.from_env({"WEBSEC_CLOCK_START": raw}).clock_start == expected


def test_a_clock_start_that_is_not_a_date_is_refused_with_the_variable_named() -> None:
    with pytest.raises(SettingsError, match="WEBSEC_CLOCK_START"):
        Settings.from_env({"WEBSEC_CLOCK_START": "yesterday"})


def test_production_refuses_a_moved_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBSEC_ENV", "production")
    monkeypatch.setenv("WEBSEC_CLOCK_START", "2026-11-22T12:00:00Z")
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError, match="WEBSEC_CLOCK_START must not be set"):
            get_settings()
    finally:
        get_settings.cache_clear()


def test_a_started_clock_needs_a_zone() -> None:
    with pytest.raises(ValueError):
        StartedClock(datetime(2026, 11, 22, 12, 0))
    assert StartedClock(datetime(2026, 11, 22, 12, 0, tzinfo=UTC)).start == TEST_NOW
