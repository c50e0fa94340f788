"""Threads racing straight at the store, each with its own connection, released together by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TypeVar

from websec_app.store import (
    Database,
    TokenRejected,
    claim_compliance_token,
    claim_scan_token,
    create_subscription,
    issue_compliance_token,
    issue_scan_token,
    mark_compliance_token_paid,
    monthly_scans_used,
    reserve_free_scan,
    reserve_monthly_scan,
)

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
RACERS = 20
T = TypeVar("T")


def race(database: Database, work: Callable[..., T]) -> list[T | Exception]:
    barrier = threading.Barrier(RACERS)

    def one(_: int) -> T | Exception:
        with database.session() as session:
            session.connection()  # check a connection out before the start signal
            barrier.wait()
            try:
                return work(session)
            except Exception as exc:  # noqa: BLE001 - counted by the test
                return exc

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(one, range(RACERS)))


def test_one_monthly_unit_left_one_winner(any_database: Database) -> None:
    with any_database.session() as session:
        sub = create_subscription(session, email="r@example.com", now=NOW).id
        assert sub is not None
        for _ in range(49):
            reserve_monthly_scan(session, sub, NOW, 50)

    results = race(any_database, lambda s: reserve_monthly_scan(s, sub, NOW, 50))

    assert sum(r is not None and not isinstance(r, Exception) for r in results) == 1
    assert not [r for r in results if isinstance(r, Exception)]
    with any_database.session() as session:
        assert monthly_scans_used(session, sub, NOW) == 50


def test_first_use_of_a_counter_by_20_racers_counts_each_once(any_database: Database) -> None:
    # The row does not exist yet: every racer inserts it "first"; the limit still holds exactly.
    results = race(any_database, lambda s: reserve_free_scan(s, "198.51.100.1", NOW, 7))

    assert not [r for r in results if isinstance(r, Exception)]
    assert sorted(r.used for r in results if r is not None and not isinstance(r, Exception)) == list(range(1, 8))


def test_one_scan_token_one_winner(any_database: Database) -> None:
    with any_database.session() as session:
        token = issue_scan_token(session, email="t@example.com", now=NOW).token

    results = race(any_database, lambda s: claim_scan_token(s, token, NOW))

    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, TokenRejected) and r.problem == "used" for r in results if isinstance(r, Exception))


def test_one_compliance_token_one_winner(any_database: Database) -> None:
    with any_database.session() as session:
        issued = issue_compliance_token(session, provider="razorpay", email="c@example.com", url="https://a/", now=NOW)
        mark_compliance_token_paid(session, issued.token_id, NOW)

    results = race(any_database, lambda s: claim_compliance_token(s, issued.token, NOW))

    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, TokenRejected) for r in results if isinstance(r, Exception))
