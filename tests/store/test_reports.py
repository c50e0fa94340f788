"""Stored reports: a report the UI showed is found again by its link id, and scans know their report."""

from __future__ import annotations

from datetime import UTC, datetime

from websec_app.store import (
    SCAN_FREE,
    Database,
    find_report,
    record_scan,
    report_ids_for_scans,
    save_report,
)

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
BODY = {"url": "https://example.com/", "grade": "B", "score": 74, "headers": {"X-Frame-Options": {"status": "good"}}}


def test_a_saved_report_is_found_by_its_id(any_database: Database) -> None:
    with any_database.session() as session:
        saved = save_report(session, body=BODY, kind=SCAN_FREE, now=NOW)

    with any_database.session() as session:
        found = find_report(session, saved.id)

    assert found is not None
    assert found.body == BODY
    assert found.kind == SCAN_FREE
    assert found.created_at == NOW


def test_report_ids_are_unguessable_and_distinct(database: Database) -> None:
    with database.session() as session:
        ids = {save_report(session, body=BODY, kind=SCAN_FREE, now=NOW).id for _ in range(20)}

    assert len(ids) == 20
    assert all(len(i) >= 22 for i in ids)  # 128 random bits, URL-safe


def test_unknown_or_absurd_ids_find_nothing(database: Database) -> None:
    with database.session() as session:
        assert find_report(session, "nope") is None
        assert find_report(session, "") is None
        assert find_report(session, "x" * 5000) is None


def test_scans_map_to_their_reports(any_database: Database) -> None:
    with any_database.session() as session:
        with_report = record_scan(
            session,
            kind=SCAN_FREE,
            url="https://a.example/",
            final_url="https://a.example/",
            grade="A",
            score=85,
            algorithm_version="v",
            now=NOW,
            client="192.0.2.1",
        )
        without = record_scan(
            session,
            kind=SCAN_FREE,
            url="https://b.example/",
            final_url="https://b.example/",
            grade="F",
            score=10,
            algorithm_version="v",
            now=NOW,
            client="192.0.2.1",
        )
        assert with_report.id is not None and without.id is not None
        saved = save_report(session, body=BODY, kind=SCAN_FREE, now=NOW, scan_record_id=with_report.id)

        assert report_ids_for_scans(session, [with_report.id, without.id]) == {with_report.id: saved.id}
        assert report_ids_for_scans(session, []) == {}
