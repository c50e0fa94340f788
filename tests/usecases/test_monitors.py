"""Monitoring (issue 17) driven by an injected clock: a month of daily runs in seconds, each run once across
two processes, none lost across a restart; alerts through the outbox to a real SMTP server (aiosmtpd) for a
fixture site whose headers change between runs; the month's quota; the API."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import re
from collections import Counter
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from tests import db_fixtures, payment_fixtures
from tests.api.fakes import NOON, FakeScanner, FrozenClock
from tests.fixtures import catalog
from tests.fixtures.sites import Response, SiteFactory, html
from tests.payment_fixtures import Mailbox
from websec_app.runtime import build_runtime
from websec_app.scanner import scan
from websec_app.settings import Settings
from websec_app.store import Database, create_subscription, issue_api_key, monthly_scans_used
from websec_app.store.history import history_page
from websec_app.store.monitors import MonitorRun
from websec_app.usecases import Subscriber, authenticate
from websec_app.usecases import monitors as monitor_cases
from websec_app.usecases.runtime import Runtime

database = db_fixtures.database
postgres_database = db_fixtures.postgres_database
# The SMTP server, the outbox worker and the settings that send mail to it (tests/payment_fixtures.py).
razorpay_api = payment_fixtures.razorpay_api
stripe_api = payment_fixtures.stripe_api
smtp_server = payment_fixtures.smtp_server
mailbox = payment_fixtures.mailbox
paid_settings = payment_fixtures.paid_settings
service = payment_fixtures.service
worker = payment_fixtures.worker
clock = payment_fixtures.clock


def _subscriber(database: Database, email: str = "owner@example.com") -> tuple[Subscriber, str]:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=NOON)
        assert subscription.id is not None
        issued = issue_api_key(session, subscription.id, NOON)
    return issued, issued.key  # type: ignore[return-value]


async def _sub(runtime: Runtime, database: Database, email: str = "owner@example.com") -> Subscriber:
    _, key = _subscriber(database, email)
    return await authenticate(runtime, key)


def _runtime(database: Database, clock: FrozenClock, scanner: Any, settings: Settings) -> Runtime:
    return build_runtime(settings, database=database, scanner=scanner, clock=clock, bounded=False)


async def _tick_and_run(runtime: Runtime) -> list[str | None]:
    """One tick, each scheduled run executed at once (what the engine's workers do)."""
    ran: list[str | None] = []

    async def submit(run_id: int) -> None:
        ran.append(await monitor_cases.execute_run(runtime, run_id))

    await monitor_cases.tick(runtime, submit)
    return ran


def _runs(database: Database) -> list[MonitorRun]:
    from sqlmodel import select

    with database.session() as session:
        return list(session.exec(select(MonitorRun).order_by(MonitorRun.due_at)))


async def test_a_month_of_daily_and_weekly_runs_each_happen_once(database: Database, tmp_path: Path) -> None:
    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path, pro_scans_per_month=50))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://daily.example", "daily")
    await monitor_cases.add(runtime, owner, "https://weekly.example", "weekly")

    # When thirty days pass, the scheduler ticking every six hours (and twice at each tick)
    for quarter in range(30 * 4):
        clock.set(NOON + timedelta(hours=6 * quarter, minutes=1))
        await _tick_and_run(runtime)
        await _tick_and_run(runtime)

    # Then the daily site ran once a day and the weekly one once a week, each run scanned once
    assert Counter(scanner.calls) == {"https://daily.example/": 30, "https://weekly.example/": 5}
    runs = _runs(database)
    assert len(runs) == 35 and {r.status for r in runs} == {"done"}
    assert len({(r.monitor_id, r.due_at) for r in runs}) == 35
    # and every run used one of its month's scans (the month changed on December 1st) and is in the history
    with database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, NOON) == 9 + 2  # Nov 22-30 daily, Nov 22 + 29 weekly
        assert monthly_scans_used(session, owner.subscription_id, NOON + timedelta(days=20)) == 21 + 3
        _, total = history_page(
            session, subscription_id=owner.subscription_id, url="https://daily.example/", offset=0, limit=1
        )
    assert total == 30


async def test_a_missed_week_becomes_one_catch_up_run_not_a_burst(database: Database, tmp_path: Path) -> None:
    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://daily.example", "daily")
    await _tick_and_run(runtime)
    clock.advance(days=7, minutes=1)  # the whole cluster was down for a week
    assert await _tick_and_run(runtime) == ["done"]
    assert len(scanner.calls) == 2


async def test_a_late_catch_up_run_is_not_followed_by_the_grids_next_run_minutes_later(
    database: Database, tmp_path: Path
) -> None:
    clock, scanner = FrozenClock(NOON), FakeScanner()
    runtime = _runtime(database, clock, scanner, Settings(data_dir=tmp_path))
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://daily.example", "daily")  # its grid: noon
    assert await _tick_and_run(runtime) == ["done"]

    # Given a cluster down from before the next day's noon until a minute before the noon after
    clock.set(NOON + timedelta(days=2, minutes=-1))
    # When it ticks again, every minute for the next hour
    ran = await _tick_and_run(runtime)
    for _ in range(60):
        clock.advance(minutes=1)
        ran += await _tick_and_run(runtime)

    # Then the missed day is one catch-up run at 11:59, and the grid's noon a minute later is not a second one
    assert ran == ["done"]
    with database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, clock()) == 2
    # and the monitor stays on its grid: the next run is at noon the day after
    clock.set(NOON + timedelta(days=3, seconds=-1))
    assert await _tick_and_run(runtime) == []
    clock.set(NOON + timedelta(days=3, seconds=30))
    assert await _tick_and_run(runtime) == ["done"]
    assert _runs(database)[-1].due_at == NOON + timedelta(days=3)
    assert len(scanner.calls) == 3


@pytest.mark.postgres
async def test_two_processes_never_run_a_monitor_twice(postgres_database: Database, tmp_path: Path) -> None:
    # Given two processes (each its own runtime and connection pool) on one PostgreSQL database
    clock, scanner = FrozenClock(NOON), FakeScanner()
    settings = Settings(data_dir=tmp_path, pro_scans_per_month=500)
    first = _runtime(postgres_database, clock, scanner, settings)
    other_process = Database(postgres_database.url)
    second = _runtime(other_process, clock, scanner, settings)
    owner = await _sub(first, postgres_database)
    for number in range(8):
        await monitor_cases.add(first, owner, f"https://site{number}.example", "daily")

    # When both tick at the same moments for ten days, and each runs whatever its tick handed out
    for day in range(10):
        clock.set(NOON + timedelta(days=day, minutes=1))
        await asyncio.gather(_tick_and_run(first), _tick_and_run(second), _tick_and_run(first))

    # Then each monitor ran once a day: 80 runs, 80 scans, 80 units
    runs = _runs(postgres_database)
    assert len(runs) == 80 and {r.status for r in runs} == {"done"}
    assert len(scanner.calls) == 80
    with postgres_database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, NOON) == 9 * 8  # Nov 22-30
    # and running a run that already ended does nothing
    assert await monitor_cases.execute_run(second, runs[0].id or 0) is None
    other_process.dispose()


async def test_a_run_scheduled_by_a_process_that_stopped_is_not_lost(database: Database, tmp_path: Path) -> None:
    clock, scanner = FrozenClock(NOON), FakeScanner()
    settings = Settings(data_dir=tmp_path)
    before = _runtime(database, clock, scanner, settings)
    owner = await _sub(before, database)
    await monitor_cases.add(before, owner, "https://kept.example", "daily")

    # Given a process that scheduled the run and stopped before running it
    async def dropped(run_id: int) -> None:
        return None

    assert len(await monitor_cases.tick(before, dropped)) == 1
    assert scanner.calls == []

    # When a new process ticks a minute later
    restarted = Database(database.url)
    after = _runtime(restarted, clock, scanner, settings)
    clock.advance(minutes=1)
    # Then the run is handed out again and runs, once
    assert await _tick_and_run(after) == ["done"]
    assert await _tick_and_run(after) == []
    assert scanner.calls == ["https://kept.example/"]
    restarted.dispose()


async def test_when_the_months_scans_are_used_up_runs_are_skipped_and_the_owner_told_once(
    database: Database, paid_settings: Settings, clock: FrozenClock, worker, mailbox: Mailbox
) -> None:
    scanner = FakeScanner()  # `clock` is the outbox worker's too: mail queued at the runtime's time is due
    settings = dataclasses.replace(paid_settings, pro_scans_per_month=3)
    runtime = _runtime(database, clock, scanner, settings)
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://one.example", "daily")
    await monitor_cases.add(runtime, owner, "https://two.example", "daily")

    statuses: list[str | None] = []
    for day in range(3):
        clock.set(NOON + timedelta(days=day, minutes=1))
        statuses += await _tick_and_run(runtime)

    assert statuses == ["done", "done", "done", "skipped_quota", "skipped_quota", "skipped_quota"]
    assert len(scanner.calls) == 3
    notices = await _mails(mailbox, 1)
    assert str(notices[0]["Subject"]).strip() == "websec monitoring paused: this month's scans are used up"
    assert "2026-12-01 00:00 UTC" in notices[0].get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    await asyncio.sleep(0.3)
    assert len(mailbox.messages) == 1  # once, however many runs were skipped


async def _mails(mailbox: Mailbox, count: int, timeout: float = 10.0) -> list[EmailMessage]:
    for _ in range(int(timeout / 0.05)):
        if len(mailbox.messages) >= count:
            break
        await asyncio.sleep(0.05)
    return [delivered.message for delivered in mailbox.messages]


@pytest.fixture
def changing_site(site_factory: SiteFactory) -> tuple[Any, dict[str, list[tuple[str, str]]]]:
    site = catalog.best_practices(site_factory.unique_host("monitored"))
    home = site.routes["/"]
    assert isinstance(home, Response)
    state = {"headers": list(home.headers)}
    site.routes["/"] = lambda request: html(catalog.BEST_PAGE, headers=state["headers"])
    return site_factory(site), state


async def test_alerts_when_the_site_gets_worse_and_when_it_cannot_be_reached_twice(
    database: Database,
    scan_settings: Settings,
    paid_settings: Settings,
    changing_site,
    clock: FrozenClock,
    worker,
    mailbox: Mailbox,
) -> None:
    site, state = changing_site
    settings = dataclasses.replace(
        scan_settings, mail=paid_settings.mail, base_url="https://websec.test", data_dir=paid_settings.data_dir
    )
    runtime = _runtime(database, clock, scan, settings)
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, site.url, "daily")

    # Day 1: the first run is the baseline: nothing to compare, no alert
    assert await _tick_and_run(runtime) == ["done"]
    # Day 2: a deploy dropped the CSP and added a session cookie without Secure
    clock.advance(days=1, minutes=1)
    state["headers"] = [(k, v) for k, v in state["headers"] if k.lower() != "content-security-policy"]
    state["headers"].append(("Set-Cookie", "sessionid=abc; Path=/; HttpOnly"))
    assert await _tick_and_run(runtime) == ["done"]
    # Day 3: nothing changed: no alert
    clock.advance(days=1)
    assert await _tick_and_run(runtime) == ["done"]

    alerts = await _mails(mailbox, 1)
    await asyncio.sleep(0.3)
    assert len(mailbox.messages) == 1
    alert = alerts[0]
    assert alert["To"] == "owner@example.com"
    assert str(alert["Subject"]).strip().startswith("websec alert: The grade dropped from A+ to ")
    text = alert.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "New critical or important finding" in text
    assert "Content-Security-Policy header" in text  # the diff names what changed
    assert "How to fix the new findings:" in text and "Content-Security-Policy" in text
    assert "https://websec.test/site?url=" in text
    runs = _runs(database)
    assert [bool(r.alerts) for r in runs] == [False, True, False]

    # Days 4 and 5: the site is down; the second unreachable run alerts, and neither used a scan
    with database.session() as session:
        used_before = monthly_scans_used(session, owner.subscription_id, clock())
    site.stop()
    for _ in range(3):
        clock.advance(days=1)
        assert await _tick_and_run(runtime) == ["unreachable"]
    down = await _mails(mailbox, 2)
    await asyncio.sleep(0.3)
    assert len(mailbox.messages) == 2  # the second unreachable run only, not the third
    assert "could not be reached in 2 runs in a row" in str(down[1]["Subject"])
    with database.session() as session:
        assert monthly_scans_used(session, owner.subscription_id, clock()) == used_before


async def test_a_certificate_expiring_soon_alerts_once_per_threshold(
    database: Database,
    scan_settings: Settings,
    paid_settings: Settings,
    site_factory: SiteFactory,
    clock: FrozenClock,
    worker,
    mailbox: Mailbox,
) -> None:
    site = site_factory(catalog.best_practices(site_factory.unique_host("expiring"), cert="expiring_soon"))
    settings = dataclasses.replace(scan_settings, mail=paid_settings.mail, data_dir=paid_settings.data_dir)
    runtime = _runtime(database, clock, scan, settings)
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, site.url, "daily")
    for _ in range(2):
        await _tick_and_run(runtime)
        clock.advance(days=1, minutes=1)
    mails = await _mails(mailbox, 1)
    await asyncio.sleep(0.3)
    assert len(mailbox.messages) == 1  # the 14-day warning once; 10 days left is not yet the 3-day one
    # (the certificate ends ten days after the fixtures' clock, which the scan reads; minutes may have passed)
    assert re.search(r"The certificate expires in (9|10) days", str(mails[0]["Subject"]))


async def test_an_alert_is_also_posted_to_the_monitors_callback_signed_like_async_scans(
    database: Database,
    scan_settings: Settings,
    paid_settings: Settings,
    changing_site,
    site_factory: SiteFactory,
    clock: FrozenClock,
    worker,
    mailbox: Mailbox,
) -> None:
    from tests.fixtures.sites import Site, TlsConfig, text
    from websec_app.jobs.callbacks import SIGNATURE_HEADER, callback_secret

    site, state = changing_site
    # the "service" certificate: the callback's client checks it at the real time, as any HTTPS client must
    receiver = site_factory(
        Site(
            names=(site_factory.unique_host("hooks"),),
            routes={"/hook": text("", status=204)},
            tls=TlsConfig(cert="service"),
        )
    )
    settings = dataclasses.replace(
        scan_settings, mail=paid_settings.mail, data_dir=paid_settings.data_dir, callback_secret="server-secret"
    )
    runtime = _runtime(database, clock, scan, settings)
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, site.url, "daily", callback_url=f"https://{receiver.host}/hook")

    await _tick_and_run(runtime)  # the baseline: nothing posted
    assert receiver.requests_to("/hook") == []
    clock.advance(days=1, minutes=1)
    state["headers"] = [(k, v) for k, v in state["headers"] if k.lower() != "content-security-policy"]
    await _tick_and_run(runtime)

    [posted] = receiver.requests_to("/hook")
    expected = (
        "sha256=" + hmac.new(callback_secret(settings, owner.key_id).encode(), posted.body, hashlib.sha256).hexdigest()
    )
    assert hmac.compare_digest(posted.header(SIGNATURE_HEADER) or "", expected)
    payload = json.loads(posted.body)
    assert payload["event"] == "monitor.alert" and payload["url"] == site.url
    assert [c["name"] for c in payload["diff"]["new"]] == ["Content-Security-Policy"]
    assert payload["reasons"][0].startswith("The grade dropped from A+ to ")
