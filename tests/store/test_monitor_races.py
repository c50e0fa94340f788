"""A subscription's monitor rules hold under concurrency (store/monitors.py add_monitor): at most
MAX_MONITORS, one active monitor per URL. Threads racing straight at the store (tests/store/test_races.py
`race`: each its own connection, released together), on SQLite and PostgreSQL.

The race is made certain, not left to scheduling: a monitor's INSERT waits until every racer has sent its
first statement (the lock it takes, or on the old code its unlocked count). Without a lock taken before the
count, all of them count before any inserts; with one, the others are waiting for it."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from tests.store.test_races import NOW, RACERS, race
from websec_app.store import Database, create_subscription
from websec_app.store.monitors import (
    MAX_MONITORS,
    AlreadyMonitored,
    Monitor,
    TooManyMonitors,
    add_monitor,
    remove_monitor,
)


@contextmanager
def _inserts_wait_for_every_racer(database: Database) -> Iterator[Callable[[], None]]:
    """A `started()` for each racer to call first; each INSERT INTO monitors then waits until every racer
    has sent a statement since it started."""
    arrived = threading.Condition()
    count = [0]
    local = threading.local()

    def started() -> None:
        local.racing, local.arrived = True, False

    def hook(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not getattr(local, "racing", False):
            return
        if not local.arrived:
            local.arrived = True
            with arrived:
                count[0] += 1
                arrived.notify_all()
        if statement.lstrip().upper().startswith("INSERT INTO MONITORS"):
            with arrived:
                arrived.wait_for(lambda: count[0] >= RACERS, timeout=60)

    event.listen(database.engine, "before_cursor_execute", hook)
    try:
        yield started
    finally:
        event.remove(database.engine, "before_cursor_execute", hook)


def _subscription(database: Database) -> int:
    with database.session() as session:
        subscription_id = create_subscription(session, email="racer@example.com", now=NOW).id
    assert subscription_id is not None
    return subscription_id


def _active(database: Database, subscription_id: int) -> list[str]:
    with database.session() as session:
        return list(
            session.exec(select(Monitor.url).where(Monitor.subscription_id == subscription_id, col(Monitor.active)))
        )


def test_twenty_concurrent_adds_make_ten_monitors(any_database: Database) -> None:
    subscription_id = _subscription(any_database)
    numbers = itertools.count()
    lock = threading.Lock()

    def add(session):  # type: ignore[no-untyped-def]
        started()
        with lock:
            url = f"https://site{next(numbers)}.example/"
        return add_monitor(
            session,
            subscription_id=subscription_id,
            api_key_id=None,
            url=url,
            interval="daily",
            callback_url=None,
            now=NOW,
        )

    with _inserts_wait_for_every_racer(any_database) as started:
        results = race(any_database, add)

    assert sum(isinstance(r, Monitor) for r in results) == MAX_MONITORS
    assert sum(isinstance(r, TooManyMonitors) for r in results) == RACERS - MAX_MONITORS
    assert len(_active(any_database, subscription_id)) == MAX_MONITORS


def test_concurrent_adds_of_one_url_make_one_monitor(any_database: Database) -> None:
    subscription_id = _subscription(any_database)

    def add(session):  # type: ignore[no-untyped-def]
        started()
        return add_monitor(
            session,
            subscription_id=subscription_id,
            api_key_id=None,
            url="https://same.example/",
            interval="daily",
            callback_url=None,
            now=NOW,
        )

    with _inserts_wait_for_every_racer(any_database) as started:
        results = race(any_database, add)

    assert sum(isinstance(r, Monitor) for r in results) == 1
    assert sum(isinstance(r, AlreadyMonitored) for r in results) == RACERS - 1
    assert _active(any_database, subscription_id) == ["https://same.example/"]


def test_the_database_holds_one_active_monitor_per_url(any_database: Database) -> None:
    # (the partial unique index, for a writer that does not go through add_monitor's lock)
    subscription_id = _subscription(any_database)
    with any_database.session() as session:
        first = add_monitor(
            session,
            subscription_id=subscription_id,
            api_key_id=None,
            url="https://one.example/",
            interval="daily",
            callback_url=None,
            now=NOW,
        )
        session.add(
            Monitor(subscription_id=subscription_id, url=first.url, interval="daily", created_at=NOW, next_run_at=NOW)
        )
        with pytest.raises(IntegrityError):
            session.commit()
        session.rollback()
        # a stopped monitor does not count: the URL can be monitored again
        assert first.id is not None
        assert remove_monitor(session, subscription_id=subscription_id, monitor_id=first.id)
        again = add_monitor(
            session,
            subscription_id=subscription_id,
            api_key_id=None,
            url=first.url,
            interval="weekly",
            callback_url=None,
            now=NOW,
        )
    assert again.id != first.id
