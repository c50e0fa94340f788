"""A monitor's webhook goes through the scanner's guard at every delivery, not only when the monitor is made
(websec_app/jobs/callbacks.py, shared with async scans' callbacks): a callback name that pointed at a public
address then, and at an internal one when an alert is sent (DNS rebinding over days), is refused at each
attempt and never reached. The receiver is a loopback site; the guard is at its production default."""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from tests import db_fixtures
from tests.api.fakes import NOON, FakeScanner, FrozenClock
from tests.fixtures import catalog
from tests.fixtures.dns_server import AuthDnsServer
from tests.fixtures.sites import Site, SiteFactory, text
from tests.usecases.test_monitors import _runs, _runtime, _sub, _tick_and_run
from websec_app.scanner import TargetUnreachable
from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.usecases import monitors as monitor_cases

database = db_fixtures.database

DOWN = "Could not connect to site.example: connection refused."


async def test_a_webhook_whose_name_now_resolves_inward_is_refused_at_every_delivery(
    database: Database,
    tmp_path: Path,
    site_factory: SiteFactory,
    dns_server: AuthDnsServer,
    scan_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given a receiver on loopback, and a callback name that answers a public address when the monitor is made
    receiver = site_factory(Site(names=(site_factory.unique_host("hook-inner"),), routes={"/hook": text("", 204)}))
    hook_name = site_factory.unique_host("hook-rebound")
    dns_server.set(hook_name, "A", catalog.REBIND_PUBLIC_IP)  # only ever an answer: nothing connects to it
    settings = dataclasses.replace(
        scan_settings, allow_private_targets=False, data_dir=tmp_path, callback_secret="server-secret"
    )
    clock = FrozenClock(NOON)
    scanner = FakeScanner(errors={"site.example": TargetUnreachable(DOWN)})  # no scan touches the network
    runtime = _runtime(database, clock, scanner, settings)
    owner = await _sub(runtime, database)
    await monitor_cases.add(runtime, owner, "https://site.example", "daily", callback_url=f"https://{hook_name}/hook")
    asked_when_made = len(dns_server.queries_for(hook_name))
    # When the name is moved to the receiver's loopback address, and two unreachable runs in a row alert
    dns_server.set(hook_name, "A", receiver.ip)
    monkeypatch.setattr(monitor_cases, "WEBHOOK_FIRST_PAUSE", 0.01)
    with caplog.at_level(logging.WARNING, logger=monitor_cases.log.name):
        for day in range(2):
            clock.set(NOON + timedelta(days=day, minutes=1))
            assert await _tick_and_run(runtime) == ["unreachable"]
    # Then the alert was made, its webhook tried at each attempt, each refused by the guard, and the receiver
    # never got a connection
    assert _runs(database)[-1].alerts == [f"The site could not be reached in 2 runs in a row: {DOWN}"]
    refusals = [r.getMessage() for r in caplog.records if "resolves to a private or reserved address" in r.getMessage()]
    assert len(refusals) == monitor_cases.WEBHOOK_ATTEMPTS, caplog.text
    assert receiver.accepted == {"https": 0, "http": 0}
    assert receiver.requests == []
    # (the name was looked up again at each attempt: A and AAAA each time)
    assert len(dns_server.queries_for(hook_name)) - asked_when_made == 2 * monitor_cases.WEBHOOK_ATTEMPTS
