"""A monitor run after one that could not check something (websec_app/scanner/diff.py, `earlier`): a scan that
read a bot challenge, or whose SPF and DMARC lookups failed, says nothing of those findings, so the next run
compares them with the last kept report that did check them. A CSP removed behind the block, or SPF turned to
+all while the lookups failed, is new there and alerted; the retried run's alert (the diff rebuilt from the
kept reports) says the same. The clock is injected (FrozenClock); SQLite, and PostgreSQL for the query plan."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import select

from tests import db_fixtures
from tests.api.fakes import NOON, FrozenClock
from tests.factories import dns_answer, make_dns, make_snapshot
from tests.fixtures import catalog
from tests.fixtures.sites import SiteFactory
from tests.usecases.test_monitor_crashes import WorkerKilled
from tests.usecases.test_monitors import _runs, _runtime, _sub, _tick_and_run
from websec_app.scanner import ScanReport, scan
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.diff import ReportDiff
from websec_app.scanner.grading import grade
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.rules.titles import plain_title
from websec_app.scanner.snapshot import DnsAnswer
from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.history import kept_report_ids_before
from websec_app.store.models import OutboxEmail, ScanRecord
from websec_app.store.monitors import RUN_CLAIM_SECONDS, RUN_DONE
from websec_app.store.reports import find_report
from websec_app.usecases import monitors as monitor_cases

database = db_fixtures.database
postgres_database = db_fixtures.postgres_database

CSP = "Content-Security-Policy header"


def _alert_text(database: Database, run_id: int | None) -> str:
    """The plain text of the run's alert email, as queued in the outbox."""
    with database.session() as session:
        [queued] = session.exec(select(OutboxEmail).where(OutboxEmail.dedupe_key == f"monitor-run:{run_id}")).all()
    assert queued.message is not None
    part = email.message_from_bytes(queued.message, policy=email.policy.default).get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def _new_section(alert: str) -> str:
    """The email's list of new findings, up to what follows it."""
    start = alert.index("\nNew (")
    ends = [alert.find(t, start + 1) for t in ("\nChanged (", "\nFixed (", "\nHow to fix", "\nThe site's history")]
    return alert[start : min(i for i in ends if i > 0)]


async def test_a_csp_removed_behind_a_blocked_run_is_alerted_on_the_next_run(
    database: Database, scan_settings: Settings, site_factory: SiteFactory, tmp_path: Path
) -> None:
    # Given a monitored site with a CSP, whose second run reads a Cloudflare challenge
    site = catalog.best_practices(site_factory.unique_host("blocked-then-regressed"))
    site, switch = catalog.behind_a_challenge(site)
    running = site_factory(site)
    clock = FrozenClock(NOON)
    runtime = _runtime(database, clock, scan, replace(scan_settings, data_dir=tmp_path, pro_scans_per_month=50))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, running.url, "daily")
    assert await _tick_and_run(runtime) == [RUN_DONE]
    clock.advance(days=1, minutes=1)
    switch.blocked = True
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # When the third run reaches the site again, its CSP removed meanwhile, and a fourth finds it the same
    switch.blocked = False
    switch.remove_header("Content-Security-Policy")
    for _ in range(2):
        clock.advance(days=1)
        assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then the second run read the challenge (so the look-back below is what finds the CSP gone: compared
    # with the second run alone, the third would have no CSP to lose)
    runs = _runs(database)
    with database.session() as session:
        blocked = find_report(session, str(runs[1].report_id))
    assert blocked is not None
    assert "scan.blocked" in [f["check"] for f in blocked.body["page_analysis"]["findings"]]
    assert runs[2].previous_report_id == runs[1].report_id
    # and the third run alerts the missing CSP (compared with the first run, the last to read the headers), in
    # its reasons and in its email's new findings
    assert any(CSP in reason for reason in runs[2].alerts), runs[2].alerts
    assert CSP in _new_section(_alert_text(database, runs[2].id))
    # and the fourth, compared with the third, says nothing of it
    assert not any(CSP in reason for reason in runs[3].alerts)


# -- DNS: the SPF and DMARC lookups failed in the middle run ------------------------------------------------

HOST = "example.com"
MX = dns_answer(HOST, "MX", "10 mail.example.com.")
STRICT = (
    MX,
    dns_answer(HOST, "TXT", '"v=spf1 mx -all"'),
    # the addresses of the MX host "mx" compares senders with (RFC 7208 5.4), which the SPF evaluation reads
    dns_answer("mail.example.com", "A", "192.0.2.25"),
    dns_answer("mail.example.com", "AAAA"),
    dns_answer(f"_dmarc.{HOST}", "TXT", '"v=DMARC1; p=reject; rua=mailto:d@example.com"'),
)
FAILED = (MX, dns_answer(HOST, "TXT", rcode="SERVFAIL"), dns_answer(f"_dmarc.{HOST}", "TXT", rcode="SERVFAIL"))
LOOSE = (MX, dns_answer(HOST, "TXT", '"v=spf1 +all"'), dns_answer(f"_dmarc.{HOST}", "TXT", rcode="NXDOMAIN"))


@dataclass
class DnsScanner:
    """Stands in for the scanner: each scan grades the next of `answers` (the dns section alone)."""

    answers: Sequence[Sequence[DnsAnswer]]
    calls: list[str] = field(default_factory=list)

    async def __call__(self, url: str, settings: Settings) -> ScanReport:
        answers = self.answers[min(len(self.calls), len(self.answers) - 1)]
        self.calls.append(url)
        snapshot = make_snapshot(url, dns=make_dns(HOST, *answers))
        graded = grade([check_dns(snapshot)], default_rulebook(), {"host": HOST, "domain": HOST})
        return ScanReport(
            url=url,
            final_url=url,
            status_code=200,
            score=graded.score,
            grade=graded.grade,
            algorithm_version="test",
            scanned_at="2026-11-22T12:00:00Z",
            duration_ms=1,
            issue_counts=graded.issue_counts,
            sections=graded.sections,
            caps=graded.caps,
            uncapped_score=graded.uncapped_score,
        )


async def _two_runs_then_due(database: Database, tmp_path: Path, scanner: DnsScanner) -> tuple[Any, FrozenClock]:
    """A monitor of example.com whose first run read SPF and DMARC and whose second run's lookups failed;
    the third run is due."""
    clock = FrozenClock(NOON)
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path, pro_scans_per_month=50))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, f"https://{HOST}", "daily")
    for _ in range(2):
        assert await _tick_and_run(runtime) == [RUN_DONE]
        clock.advance(days=1, minutes=1)
    return runtime, clock


SPF_PASS_ALL, DMARC_MISSING = plain_title("dns.spf_pass_all"), plain_title("dns.dmarc_missing")


async def test_spf_and_dmarc_weakened_while_their_lookups_failed_are_new_on_the_next_run(
    database: Database, tmp_path: Path
) -> None:
    # Given runs strict -> lookups failed, and a third run that finds SPF +all and no DMARC record
    runtime, _ = await _two_runs_then_due(database, tmp_path, DnsScanner([STRICT, FAILED, LOOSE]))

    # When the third run is made
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then it alerts the SPF record passing everyone (important), and its email lists DMARC missing (minor) too
    runs = _runs(database)
    assert any(SPF_PASS_ALL in reason for reason in runs[2].alerts), runs[2].alerts
    new = _new_section(_alert_text(database, runs[2].id))
    assert SPF_PASS_ALL in new and DMARC_MISSING in new


async def test_a_retried_run_rebuilds_the_same_diff_from_the_kept_reports(
    database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the third run of strict -> lookups failed -> SPF +all, whose worker dies after keeping its report
    runtime, clock = await _two_runs_then_due(database, tmp_path, DnsScanner([STRICT, FAILED, LOOSE]))
    diffs: list[ReportDiff | None] = []

    async def killed(runtime: Any, claimed: Any, reasons: list[str], diff: ReportDiff | None, body: Any) -> None:
        diffs.append(diff)
        raise WorkerKilled("the worker died after keeping the report, before its alert")

    with monkeypatch.context() as patch:
        patch.setattr(monitor_cases, "_send_alert", killed)
        with pytest.raises(WorkerKilled):
            await _tick_and_run(runtime)

    # When the run is handed out again
    send = monitor_cases._send_alert

    async def kept(runtime: Any, claimed: Any, reasons: list[str], diff: ReportDiff | None, body: Any) -> None:
        diffs.append(diff)
        await send(runtime, claimed, reasons, diff, body)

    monkeypatch.setattr(monitor_cases, "_send_alert", kept)
    clock.advance(seconds=RUN_CLAIM_SECONDS + 60)
    assert await _tick_and_run(runtime) == [RUN_DONE]

    # Then its alert carries the diff the dead attempt made: SPF +all and DMARC missing, new
    first, retried = diffs
    assert first is not None and retried is not None
    assert [c.name for c in first.new] == ["dns.spf_pass_all", "dns.dmarc_missing"]
    assert retried.to_dict() == first.to_dict()
    new = _new_section(_alert_text(database, _runs(database)[2].id))
    assert SPF_PASS_ALL in new and DMARC_MISSING in new


def _statements(database: Database) -> tuple[list[str], Callable[[], None]]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(database.engine, "before_cursor_execute", record)
    return seen, lambda: event.remove(database.engine, "before_cursor_execute", record)


async def test_the_earlier_reports_are_read_only_when_a_finding_needs_them(database: Database, tmp_path: Path) -> None:
    # Given runs strict -> lookups failed (SPF and DMARC unchecked)
    runtime, clock = await _two_runs_then_due(database, tmp_path, DnsScanner([STRICT, FAILED, FAILED, LOOSE, LOOSE]))

    # When the third run fails the same lookups again, then the fourth finds SPF +all, then the fifth the same
    reads: list[int] = []
    for _ in range(3):
        seen, stop = _statements(database)
        try:
            assert await _tick_and_run(runtime) == [RUN_DONE]
        finally:
            stop()
        reads.append(sum("stored_reports" in s and "scan_records" in s and "LIMIT" in s for s in seen))
        clock.advance(days=1)

    # Then only the fourth looked back (one query for the ids, at most LOOK_BACK_REPORTS of them), and found the
    # first run's SPF through the third's and the second's gaps
    assert reads == [1, 2, 1]  # each run's previous report (history_page), plus the fourth's look-back
    assert any(SPF_PASS_ALL in reason for reason in _runs(database)[3].alerts)


@pytest.mark.postgres
def test_the_look_back_reads_the_history_through_an_index(postgres_database: Database) -> None:
    # Given a subscription's history of one URL on PostgreSQL
    from websec_app.store import create_subscription

    with postgres_database.session() as session:
        subscription = create_subscription(session, email="owner@example.com", now=NOON)
        assert subscription.id is not None
        record = ScanRecord(
            kind="monitor",
            subscription_id=subscription.id,
            url="https://example.com/",
            final_url="https://example.com/",
            grade="A",
            score=90,
            algorithm_version="test",
            created_at=NOON + timedelta(days=1),
        )
        session.add(record)
        session.commit()
        session.refresh(record)
        statement: list[tuple[str, Any]] = []

        def keep(conn: Any, cursor: Any, sql: str, parameters: Any, *args: Any) -> None:
            statement.append((sql, parameters))

        event.listen(postgres_database.engine, "before_cursor_execute", keep)
        try:
            kept_report_ids_before(session, subscription_id=subscription.id, record=record, limit=10)
        finally:
            event.remove(postgres_database.engine, "before_cursor_execute", keep)
        # When PostgreSQL plans the look-back's query with sequential scans priced out
        connection = session.connection()
        connection.exec_driver_sql("SET enable_seqscan = off")
        sql, parameters = statement[-1]
        plan = "\n".join(row[0] for row in connection.exec_driver_sql("EXPLAIN " + sql, parameters))

    # Then scan_records is read through one of its indexes, and the rows are bounded by the LIMIT
    assert "ix_scan_records_" in plan, plan
    assert "Seq Scan" not in plan, plan
    assert plan.lstrip().startswith("Limit"), plan
