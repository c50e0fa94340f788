"""API test fixtures: the app with a fake scanner, a frozen clock and a temporary database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from api_routes import create_api
from tests import db_fixtures, payment_fixtures
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.settings import Settings
from websec_app.store import Database, IssuedKey, create_subscription, issue_api_key

# The shared database fixtures (tests/db_fixtures.py), registered for this directory.
database = db_fixtures.database
postgres_database = db_fixtures.postgres_database
any_database = db_fixtures.any_database

# Provider stand-ins, the SMTP server and the payment service (tests/payment_fixtures.py), for test_payments_*.py.
razorpay_api = payment_fixtures.razorpay_api
stripe_api = payment_fixtures.stripe_api
smtp_server = payment_fixtures.smtp_server
mailbox = payment_fixtures.mailbox
paid_settings = payment_fixtures.paid_settings
service = payment_fixtures.service
worker = payment_fixtures.worker

CLIENT_IP = "203.0.113.7"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def scanner() -> FakeScanner:
    return FakeScanner()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The spec's limits: 10 free scans a day (the default), 50 Pro scans a month.
    return Settings(data_dir=tmp_path, free_scans_per_day=10, pro_scans_per_month=50)


@pytest.fixture
def make_api(
    settings: Settings, scanner: FakeScanner, clock: FrozenClock, database: Database
) -> Callable[..., FastAPI]:
    def make(**overrides: object) -> FastAPI:
        options: dict[str, object] = {"scanner": scanner, "clock": clock, "database": database}
        options.update(overrides)
        return create_api(options.pop("settings", settings), **options)  # type: ignore[arg-type]

    return make


@pytest.fixture
def api(make_api: Callable[..., FastAPI]) -> FastAPI:
    return make_api()


def client_for(app: FastAPI, ip: str = CLIENT_IP) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(ip, 50000), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@pytest.fixture
async def client(api: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(api) as http:
        yield http


def new_key(database: Database, clock: FrozenClock, email: str = "pro@example.com") -> IssuedKey:
    with database.session() as session:
        subscription = create_subscription(session, email=email, now=clock())
        assert subscription.id is not None
        return issue_api_key(session, subscription.id, clock())


@pytest.fixture
def pro_key(database: Database, clock: FrozenClock) -> IssuedKey:
    return new_key(database, clock)
