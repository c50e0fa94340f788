"""The UI's flows against a real store and a fake scanner: the same quotas, tokens and refunds as the API."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests import db_fixtures
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetUnreachable
from websec_app.settings import Settings
from websec_app.store import (
    Database,
    TokenProblem,
    TokenRejected,
    create_subscription,
    free_scans_used,
    issue_api_key,
    issue_scan_token,
    monthly_scans_used,
    revoke_api_key,
)
from websec_app.ui import flows

database = db_fixtures.database
NOON = datetime(2026, 11, 22, 12, tzinfo=UTC)
CLIENT = "192.0.2.7"


@pytest.fixture
def scanner() -> FakeScanner:
    return FakeScanner(errors={"down.example": TargetUnreachable("Connection refused by down.example")})


@pytest.fixture
def backend(database: Database, scanner: FakeScanner) -> flows.Backend:
    settings = Settings(free_scans_per_day=2, pro_scans_per_month=3)
    return flows.Backend(
        settings,
        database,
        scanner=scanner,
        render_pdf=lambda body, name: b"%PDF " + (name or "").encode(),
        clock=FrozenClock(NOON),
    )


@pytest.fixture
def pro_key(database: Database) -> str:
    with database.session() as session:
        subscription = create_subscription(session, email="pro@example.com", now=NOON)
        assert subscription.id is not None
        return issue_api_key(session, subscription.id, NOON).key


async def test_a_free_scan_is_stored_without_fixes_and_counts_against_the_client(backend, database) -> None:
    shown = await flows.free_scan(backend, "example.com", CLIENT)

    assert shown.body["pro_locked"] is True and "cookies" not in shown.body
    assert shown.body["headers"]["Content-Security-Policy"]["fix"] is None
    assert await flows.load_report(backend, shown.report_id) == shown.body
    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 1


async def test_the_free_quota_ends_with_its_reset_time(backend) -> None:
    await flows.free_scan(backend, "a.example", CLIENT)
    await flows.free_scan(backend, "b.example", CLIENT)

    with pytest.raises(flows.FreeQuotaUsed) as used:
        await flows.free_scan(backend, "c.example", CLIENT)

    assert used.value.limit == 2
    assert used.value.resets_at == datetime(2026, 11, 23, tzinfo=UTC)


async def test_an_unreachable_site_costs_no_free_scan(backend, database) -> None:
    with pytest.raises(TargetUnreachable):
        await flows.free_scan(backend, "down.example", CLIENT)

    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 0


def test_the_client_key_is_the_apis() -> None:
    settings = Settings(trusted_proxies=("10.0.0.0/8",))
    assert flows.client_key("10.0.0.2", ["198.51.100.4"], settings) == "198.51.100.4"
    assert flows.client_key("203.0.113.1", ["198.51.100.4"], settings) == "203.0.113.1"


async def test_a_one_time_token_gives_one_full_scan(backend, database) -> None:
    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token

    shown = await flows.token_scan(backend, "example.com", token)

    assert shown.body["pro_locked"] is False and "cookies" in shown.body
    assert shown.body["headers"]["Content-Security-Policy"]["fix"]
    with pytest.raises(TokenRejected) as again:
        await flows.token_scan(backend, "example.com", token)
    assert again.value.problem is TokenProblem.USED


async def test_a_failed_one_time_scan_keeps_the_token(backend, database) -> None:
    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token

    with pytest.raises(TargetUnreachable):
        await flows.token_scan(backend, "down.example", token)

    assert (await flows.token_scan(backend, "example.com", token)).report_id


async def test_pro_key_usage_scan_pdf_and_history(backend, database, pro_key) -> None:
    account = await flows.pro_account(backend, pro_key)

    shown = await flows.pro_scan(backend, account, "example.com")
    pdf = await flows.pro_pdf(backend, account, "https://www.example.org/x", "  ACME Ltd  ")
    used = await flows.usage(backend, account)
    history = await flows.recent(backend, account)

    assert account.email == "pro@example.com" and account.plan_label == "Pro"
    assert shown.body["pro_locked"] is False
    assert pdf.filename == "www.example.org-websec-report.pdf" and pdf.data == b"%PDF ACME Ltd"
    assert (used.used, used.limit, used.resets_at) == (2, 3, datetime(2026, 12, 1, tzinfo=UTC))
    assert [(h.kind, h.report_id) for h in history] == [("pdf", pdf.report_id), ("pro", shown.report_id)]


async def test_the_monthly_quota_ends_with_its_reset_date(backend, database, pro_key) -> None:
    account = await flows.pro_account(backend, pro_key)
    for _ in range(3):
        await flows.pro_scan(backend, account, "example.com")

    with pytest.raises(flows.MonthlyQuotaUsed) as used:
        await flows.pro_scan(backend, account, "example.com")

    assert used.value.resets_at == datetime(2026, 12, 1, tzinfo=UTC)
    with database.session() as session:
        assert monthly_scans_used(session, account.subscription_id, NOON) == 3


async def test_a_failed_pdf_gives_the_scan_back(backend, database, pro_key) -> None:
    account = await flows.pro_account(backend, pro_key)

    def broken(body: object, name: object) -> bytes:
        raise RuntimeError("renderer down")

    with pytest.raises(RuntimeError):
        await flows.pro_pdf(
            flows.Backend(backend.settings, database, backend.scanner, broken, backend.clock),
            account,
            "example.com",
            "",
        )

    assert (await flows.usage(backend, account)).used == 0


async def test_unknown_and_revoked_keys_are_refused(backend, database, pro_key) -> None:
    with pytest.raises(flows.KeyRefused) as unknown:
        await flows.pro_account(backend, "wsk_not-a-key")
    await flows.pro_account(backend, pro_key)
    with database.session() as session:
        revoke_api_key(session, pro_key, NOON)
    with pytest.raises(flows.KeyRefused) as revoked:
        await flows.pro_account(backend, pro_key)

    assert (unknown.value.reason, revoked.value.reason) == ("unknown", "revoked")


async def test_progress_is_told_each_step_in_order(backend) -> None:
    steps: list[str] = []

    await flows.free_scan(backend, "example.com", CLIENT, steps.append)

    assert steps == list(flows.STEPS)
