"""The scan use cases against a real store and a fake scanner: quotas, tokens, refunds and the scan line, and
one runtime shared by the API and the web UI of a process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import reflex as rx
from fastapi import FastAPI
from reflex_base.registry import RegistrationContext

from api_routes import create_api
from api_routes.errors import OVERLOADED_MESSAGE
from tests import db_fixtures
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.runtime import build_runtime
from websec_app.scanner import ScanReport, TargetUnreachable
from websec_app.services.admission import ScannerBusy
from websec_app.services.pdf import PdfRenderError
from websec_app.settings import Settings, get_settings
from websec_app.store import (
    Database,
    TokenProblem,
    TokenRejected,
    create_subscription,
    find_compliance_token,
    free_scans_used,
    issue_api_key,
    issue_compliance_token,
    issue_scan_token,
    mark_compliance_token_paid,
    monthly_scans_used,
    revoke_api_key,
)
from websec_app.store.clients import parse_networks
from websec_app.ui import messages
from websec_app.ui.runtime import current_runtime
from websec_app.usecases import (
    FreeQuotaUsed,
    KeyRefused,
    MonthlyQuotaUsed,
    authenticate,
    jobs,
    purchases,
    recent,
    scans,
    usage,
)
from websec_app.usecases.runtime import Runtime

database = db_fixtures.database
NOON = datetime(2026, 11, 22, 12, tzinfo=UTC)
CLIENT = "192.0.2.7"


@pytest.fixture
def scanner() -> FakeScanner:
    return FakeScanner(errors={"down.example": TargetUnreachable("Connection refused by down.example")})


@pytest.fixture
def backend(database: Database, scanner: FakeScanner, tmp_path: Path) -> Runtime:
    # Its engine's workers and ticker are stopped when the test's body ends (tests/conftest.py).
    settings = Settings(free_scans_per_day=2, pro_scans_per_month=3, data_dir=tmp_path)
    return build_runtime(
        settings,
        database=database,
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
    shown = await jobs.free_scan(backend, "example.com", CLIENT, keep=True)

    assert shown.body["pro_locked"] is True and "cookies" not in shown.body
    assert shown.body["headers"]["Content-Security-Policy"]["fix"] is None
    assert await scans.load_report(backend, shown.report_id) == shown.body
    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 1


async def test_the_free_quota_ends_with_its_reset_time(backend) -> None:
    await jobs.free_scan(backend, "a.example", CLIENT, keep=True)
    await jobs.free_scan(backend, "b.example", CLIENT, keep=True)

    with pytest.raises(FreeQuotaUsed) as used:
        await jobs.free_scan(backend, "c.example", CLIENT, keep=True)

    assert used.value.limit == 2
    assert used.value.resets_at == datetime(2026, 11, 23, tzinfo=UTC)


async def test_an_unreachable_site_costs_no_free_scan(backend, database) -> None:
    with pytest.raises(TargetUnreachable):
        await jobs.free_scan(backend, "down.example", CLIENT, keep=True)

    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 0


def test_the_client_key_is_the_apis(backend: Runtime) -> None:
    proxied = replace(backend, trusted_proxies=parse_networks(["10.0.0.0/8"]))
    assert scans.client_key("10.0.0.2", ["198.51.100.4"], proxied) == "198.51.100.4"
    assert scans.client_key("203.0.113.1", ["198.51.100.4"], proxied) == "203.0.113.1"


async def test_a_one_time_token_gives_one_full_scan(backend, database) -> None:
    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token

    shown = await jobs.token_scan(backend, "example.com", token, keep=True)

    assert shown.body["pro_locked"] is False and "cookies" in shown.body
    assert shown.body["headers"]["Content-Security-Policy"]["fix"]
    with pytest.raises(TokenRejected) as again:
        await jobs.token_scan(backend, "example.com", token, keep=True)
    assert again.value.problem is TokenProblem.USED


async def test_a_failed_one_time_scan_keeps_the_token(backend, database) -> None:
    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token

    with pytest.raises(TargetUnreachable):
        await jobs.token_scan(backend, "down.example", token, keep=True)

    assert (await jobs.token_scan(backend, "example.com", token, keep=True)).report_id


async def test_pro_key_usage_scan_pdf_and_history(backend, database, pro_key) -> None:
    account = await authenticate(backend, pro_key)

    shown = await jobs.pro_scan(backend, account, "example.com", keep=True)
    pdf = await jobs.pro_pdf(backend, account, "https://www.example.org/x", "  ACME Ltd  ", keep=True)
    used = await usage(backend, account)
    history = await recent(backend, account)

    assert account.email == "pro@example.com" and account.plan_label == "Pro"
    assert shown.body["pro_locked"] is False
    assert pdf.filename == "www.example.org-websec-report.pdf" and pdf.data == b"%PDF ACME Ltd"
    assert (used.used, used.limit, used.resets_at) == (2, 3, datetime(2026, 12, 1, tzinfo=UTC))
    assert [(h.kind, h.report_id) for h in history] == [("pdf", pdf.report_id), ("pro", shown.report_id)]


async def test_the_monthly_quota_ends_with_its_reset_date(backend, database, pro_key) -> None:
    account = await authenticate(backend, pro_key)
    for _ in range(3):
        await jobs.pro_scan(backend, account, "example.com", keep=True)

    with pytest.raises(MonthlyQuotaUsed) as used:
        await jobs.pro_scan(backend, account, "example.com", keep=True)

    assert used.value.resets_at == datetime(2026, 12, 1, tzinfo=UTC)
    with database.session() as session:
        assert monthly_scans_used(session, account.subscription_id, NOON) == 3


async def test_a_failed_pdf_gives_the_scan_back(backend, database, scanner, pro_key) -> None:
    account = await authenticate(backend, pro_key)

    def broken(body: object, name: object) -> bytes:
        raise RuntimeError("renderer down")

    # The worker renders the PDF: a runtime whose renderer is broken, on the same store
    broken_pdfs = build_runtime(
        backend.settings, database=database, scanner=scanner, render_pdf=broken, clock=backend.clock
    )
    with pytest.raises(PdfRenderError):
        await jobs.pro_pdf(broken_pdfs, account, "example.com", "", keep=True)

    assert (await usage(backend, account)).used == 0


async def test_unknown_and_revoked_keys_are_refused(backend, database, pro_key) -> None:
    with pytest.raises(KeyRefused) as unknown:
        await authenticate(backend, "wsk_not-a-key")
    await authenticate(backend, pro_key)
    with database.session() as session:
        revoke_api_key(session, pro_key, NOON)
    with pytest.raises(KeyRefused) as revoked:
        await authenticate(backend, pro_key)

    assert (unknown.value.reason, revoked.value.reason) == ("unknown", "revoked")


async def test_progress_is_told_each_step_in_order(small: Runtime, gated: GatedScanner) -> None:
    # Given a scan the worker holds until the page has been told it is fetching
    steps: list[str] = []
    scanning = asyncio.create_task(jobs.free_scan(small, "example.com", CLIENT, keep=True, progress=steps.append))
    await _until(lambda: gated.started == 1 and scans.STEPS[1] in steps)
    gated.gate.set()
    await scanning

    assert steps == list(scans.STEPS)  # a free slot: no WAITING


# --- the process's scan slots (services/admission.py, shared with the API) ------------------------


class GatedScanner(FakeScanner):
    """A FakeScanner whose scans wait until `gate` is set, so a test can keep scan slots taken."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.started = 0

    async def __call__(self, url: str, settings: Settings) -> ScanReport:
        self.started += 1
        await self.gate.wait()
        return await super().__call__(url, settings)


@pytest.fixture
def gated() -> GatedScanner:
    return GatedScanner()


@pytest.fixture
def small(backend: Runtime, database: Database, gated: GatedScanner) -> Runtime:
    """A process with one scan slot and one place in the wait queue."""
    settings = backend.settings.with_overrides(max_concurrent_scans=1, scan_queue=1, free_scans_per_day=5)
    return build_runtime(settings, database=database, scanner=gated, render_pdf=backend.render_pdf, clock=backend.clock)


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never became true")


async def test_a_ui_scan_past_the_slots_and_the_queue_is_refused_and_costs_nothing(
    small: Runtime, gated: GatedScanner, database: Database, pro_key: str
) -> None:
    # Given the process's one slot taken by a scan and its one queue place taken by the next
    account = await authenticate(small, pro_key)
    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token
        paid = issue_compliance_token(
            session, provider="stripe", email="buyer@example.com", url="https://c.example/", now=NOON
        )
        mark_compliance_token_paid(session, paid.token_id, NOON)
    running = asyncio.create_task(jobs.free_scan(small, "a.example", CLIENT, keep=True))
    await _until(lambda: gated.started == 1)
    queued = asyncio.create_task(jobs.pro_scan(small, account, "b.example", keep=True))
    await _until(lambda: small.admission.waiting == 1)

    # When more scans come from the scan form, the token page and the Pro dashboard
    refusals = []
    for attempt in (
        jobs.free_scan(small, "c.example", CLIENT, keep=True),
        jobs.token_scan(small, "c.example", token, keep=True),
        jobs.pro_scan(small, account, "c.example", keep=True),
        jobs.pro_pdf(small, account, "c.example", "ACME", keep=True),
        purchases.compliance_report(small, paid.token, "c.example", "buyer@example.com"),
    ):
        with pytest.raises(ScannerBusy) as refused:
            await asyncio.wait_for(attempt, timeout=1)  # refused at once, not queued
        refusals.append(refused.value)

    # Then each is told the scanner is busy and when to come back ...
    problem = messages.describe(refusals[0], NOON)
    assert problem.kind == "busy" and problem.title == "The scanner is busy"
    assert problem.text.startswith("The scanner is busy right now. Please try again in 5 seconds.")
    assert "Nothing was counted" in problem.text

    # ... and nothing was counted for them: only the two admitted scans used a unit, the token is unused
    gated.gate.set()
    await asyncio.gather(running, queued)
    assert gated.started == 2
    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 1
        assert monthly_scans_used(session, account.subscription_id, NOON) == 1
    assert (await jobs.token_scan(small, "example.com", token, keep=True)).report_id
    assert small.admission.active == 0 and small.admission.refused == 5
    with database.session() as session:  # the compliance token was reserved, then released at once
        row = find_compliance_token(session, paid.token)
        assert row is not None and row.used_at is None and row.reserved_by is None


async def test_a_queued_ui_scan_waits_for_its_slot_before_taking_its_unit(
    small: Runtime, gated: GatedScanner, database: Database
) -> None:
    steps: list[str] = []
    running = asyncio.create_task(jobs.free_scan(small, "a.example", CLIENT, keep=True))
    await _until(lambda: gated.started == 1)

    queued = asyncio.create_task(jobs.free_scan(small, "b.example", "198.51.100.9", progress=steps.append, keep=True))
    await _until(lambda: small.admission.waiting == 1)

    # While it waits, the page is told so, and it has reserved nothing
    assert steps == [scans.WAITING]
    with database.session() as session:
        assert free_scans_used(session, "198.51.100.9", NOON) == 0
    gated.gate.set()
    await asyncio.gather(running, queued)
    # then its unit, and its end ("fetch" only when the scan outlasts a look at the job: it does not wait here)
    assert steps[:2] == [scans.WAITING, scans.STEPS[0]] and steps[-1] == scans.STEPS[2]


async def test_a_failed_or_abandoned_ui_scan_frees_its_slot(small: Runtime, gated: GatedScanner) -> None:
    gated.errors["down.example"] = TargetUnreachable("Connection refused by down.example")
    gated.gate.set()
    with pytest.raises(TargetUnreachable):
        await jobs.free_scan(small, "down.example", CLIENT, keep=True)
    assert small.admission.active == 0

    gated.gate.clear()
    tab = asyncio.create_task(jobs.free_scan(small, "a.example", CLIENT, keep=True))
    await _until(lambda: gated.started == 2)
    tab.cancel()  # the browser tab went away (ui/state/scan.py cancels the job)
    with pytest.raises(asyncio.CancelledError):
        await tab
    assert small.admission.active == 0


# --- one admission for the API and the UI of a process ----------------------------------------------

API_CLIENT = "203.0.113.50"


def _client(api: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=api, client=(API_CLIENT, 50000), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def test_while_api_scans_hold_the_slots_a_ui_scan_is_refused(
    small: Runtime, gated: GatedScanner, database: Database
) -> None:
    # Given the API of this process (over the same runtime), its slot and queue place taken by API scans
    api = create_api(runtime=small)
    assert api.state.runtime is small
    async with _client(api) as client:
        first = asyncio.create_task(client.post("/api/scan", json={"url": "a.example"}))
        second = asyncio.create_task(client.post("/api/scan", json={"url": "b.example"}))
        await _until(lambda: small.admission.active == 1 and small.admission.waiting == 1)

        # When a browser starts a scan, it is refused and nothing is counted for it
        with pytest.raises(ScannerBusy):
            await asyncio.wait_for(jobs.free_scan(small, "c.example", CLIENT, keep=True), timeout=1)

        gated.gate.set()
        assert [r.status_code for r in await asyncio.gather(first, second)] == [200, 200]
    with database.session() as session:
        assert free_scans_used(session, CLIENT, NOON) == 0
        assert free_scans_used(session, API_CLIENT, NOON) == 2
    assert small.admission.active == 0


async def test_while_ui_scans_hold_the_slots_the_api_answers_503(
    small: Runtime, gated: GatedScanner, database: Database
) -> None:
    api = create_api(runtime=small)
    running = asyncio.create_task(jobs.free_scan(small, "a.example", CLIENT, keep=True))
    queued = asyncio.create_task(jobs.free_scan(small, "b.example", CLIENT, keep=True))
    await _until(lambda: small.admission.active == 1 and small.admission.waiting == 1)

    async with _client(api) as client:
        response = await asyncio.wait_for(client.post("/api/scan", json={"url": "c.example"}), timeout=1)

    assert response.status_code == 503
    assert response.json() == {"error": OVERLOADED_MESSAGE} and response.headers["Retry-After"] == "5"
    gated.gate.set()
    await asyncio.gather(running, queued)
    with database.session() as session:
        assert free_scans_used(session, API_CLIENT, NOON) == 0


async def test_as_make_run_wires_them_the_api_and_the_ui_share_one_runtime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gated: GatedScanner
) -> None:
    # Given the settings of the environment, as websec_app.py builds the one runtime, mounts the API over it in
    # the Reflex app, and the UI's state handlers find it (`ui/runtime.current_runtime`): one slot, no queue
    monkeypatch.setenv("WEBSEC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("WEBSEC_DATABASE_URL", raising=False)
    monkeypatch.setenv("WEBSEC_MAX_CONCURRENT_SCANS", "1")
    monkeypatch.setenv("WEBSEC_SCAN_QUEUE", "0")
    get_settings.cache_clear()
    context = RegistrationContext.ensure_context().fork()
    token = RegistrationContext.set(context)  # a Reflex app of its own, beside any other in this process
    try:
        runtime = build_runtime(get_settings(), scanner=gated, clock=FrozenClock(NOON))
        api = create_api(runtime=runtime)
        rx.App(api_transformer=api)
        ui = current_runtime()
        assert ui is runtime and api.state.runtime is runtime

        # When an API scan is running, a UI scan is refused without touching the quota
        async with _client(api) as client:
            scanning = asyncio.create_task(client.post("/api/scan", json={"url": "a.example"}))
            await _until(lambda: gated.started == 1)
            with pytest.raises(ScannerBusy):
                await asyncio.wait_for(jobs.free_scan(ui, "c.example", CLIENT, keep=True), timeout=1)
            gated.gate.set()
            assert (await scanning).status_code == 200
        with ui.database.session() as session:
            assert free_scans_used(session, CLIENT, NOON) == 0
        runtime.database.dispose()
    finally:
        RegistrationContext.reset(token)
        get_settings.cache_clear()


async def test_a_crash_before_the_job_row_is_written_keeps_the_token_and_the_units(
    backend, database, pro_key, monkeypatch
) -> None:
    """A token claimed or a unit taken is committed with the job row that holds it, in one transaction: a crash
    (here the connection lost at the job's insert) between two commits used to keep the token used or the
    unit taken with no job to scan it, and the retry answered 'already used'."""
    from sqlalchemy.exc import OperationalError

    import websec_app.usecases.jobs as jobs_module

    with database.session() as session:
        token = issue_scan_token(session, email="buyer@example.com", now=NOON).token
    account = await authenticate(backend, pro_key)

    def connection_lost(*args: object, **kwargs: object) -> None:
        raise OperationalError("INSERT INTO scan_jobs", {}, Exception("server closed the connection unexpectedly"))

    with monkeypatch.context() as patch:
        patch.setattr(jobs_module, "add_job", connection_lost)
        with pytest.raises(OperationalError):
            await jobs.token_scan(backend, "example.com", token)
        with pytest.raises(OperationalError):
            await jobs.pro_scan(backend, account, "example.com")
    with monkeypatch.context() as patch:  # a batch of two, lost at its second job
        made = []
        real_new_job = jobs_module.new_job

        def lost_at_the_second(**fields: object) -> object:
            made.append(fields)
            if len(made) == 2:
                connection_lost()
            return real_new_job(**fields)  # type: ignore[arg-type]

        patch.setattr(jobs_module, "new_job", lost_at_the_second)
        with pytest.raises(OperationalError):
            await jobs.submit_scans(backend, account, ["a.example", "b.example"])

    assert (await usage(backend, account)).used == 0
    assert (await jobs.token_scan(backend, "example.com", token)).body["pro_locked"] is False
