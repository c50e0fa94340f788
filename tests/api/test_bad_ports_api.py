"""A URL on a port browsers refuse (the Fetch Standard's bad ports) is refused at once where it waits before its
scan, as a private address written as such is: a monitor, its callback_url, a paid compliance report. Before,
the monitor was made (its every run then refused) and the report was paid for; a scan refuses the port too
(tests/scanner/test_bad_ports_e2e.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi import FastAPI
from sqlmodel import select

from tests.api.conftest import client_for, new_key
from tests.api.fakes import FrozenClock
from websec_app.settings import Settings
from websec_app.store import Database
from websec_app.store.models import Payment

REFUSED = "Refusing to scan: browsers refuse to connect to port"


@pytest.mark.parametrize("url", ["https://example.com:25/", "http://example.com:5060/", "example.com:6667"])
async def test_a_monitor_of_a_url_on_a_bad_port_is_refused(
    url: str, make_api: Callable[..., FastAPI], database: Database, clock: FrozenClock
) -> None:
    owner = new_key(database, clock)
    async with client_for(make_api()) as http:
        mine = {"X-API-Key": owner.key}
        refused = await http.post("/api/monitors", json={"url": url, "interval": "daily"}, headers=mine)
        assert refused.status_code == 400 and refused.json()["error"].startswith(REFUSED), refused.text
        assert (await http.get("/api/monitors", headers=mine)).json()["monitors"] == []


async def test_a_monitors_callback_url_on_a_bad_port_is_refused(
    make_api: Callable[..., FastAPI], database: Database, clock: FrozenClock, settings: Settings
) -> None:
    # A public address written as such: nothing is looked up, and registering a callback sends nothing
    owner = new_key(database, clock)
    async with client_for(make_api(settings=settings.with_overrides(callback_secret="server-secret"))) as http:
        mine = {"X-API-Key": owner.key}
        body = {"url": "example.com", "interval": "daily", "callback_url": "https://93.184.216.34:25/hook"}
        refused = await http.post("/api/monitors", json=body, headers=mine)
        assert refused.status_code == 400 and refused.json()["error"].startswith(f"{REFUSED} 25"), refused.text
        assert (await http.get("/api/monitors", headers=mine)).json()["monitors"] == []


async def test_a_compliance_report_of_a_url_on_a_bad_port_is_refused_before_anything_is_bought(
    make_api: Callable[..., FastAPI], database: Database
) -> None:
    async with client_for(make_api()) as http:
        body = {"provider": "razorpay", "email": "buyer@example.com", "url": "https://example.com:587/"}
        response = await http.post("/api/compliance-report/pay", json=body)
    assert response.status_code == 400 and response.json()["error"].startswith(f"{REFUSED} 587"), response.text
    with database.session() as session:
        assert session.exec(select(Payment)).first() is None
