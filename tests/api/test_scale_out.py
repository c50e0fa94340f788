"""Scale-out: two `serve-api` processes on one PostgreSQL database (and Redis), raced against each other.

Real processes, real HTTP, real scans of fixture sites, a real SMTP server. What must hold across
processes: the last Pro unit goes to exactly one request, a one-time token works once, a webhook
replayed to both processes has one effect, and the two outbox workers send every email exactly once.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.api.payment_helpers import secret_in
from tests.clock import TEST_NOW
from tests.fixtures.pki import Pki
from tests.fixtures.ports import free_port
from tests.fixtures.processes import stop, wait_until_healthy
from tests.fixtures.providers import SmtpSink, StripeStandIn
from tests.fixtures.sites import RunningSite
from tests.payment_fixtures import Mailbox, make_service
from tests.pg_server import get_server
from tests.redis_server import get_redis_server
from websec_app.services.prices import Product
from websec_app.settings import MailSettings, PaymentSettings, Settings
from websec_app.store import Database, create_subscription, issue_api_key, monthly_scans_used, reserve_monthly_scan
from websec_app.store.outbox import QueuedEmail, enqueue_email

REPO = Path(__file__).resolve().parents[2]
RACERS = 20
QUEUED_EMAILS = 30


@pytest.fixture
def shared_database() -> Iterator[Database]:
    database = Database(get_server().migrated_database())
    yield database
    database.dispose()


@pytest.fixture
def cluster_settings(
    tmp_path: Path, shared_database: Database, stripe_api: StripeStandIn, smtp_server: SmtpSink
) -> Settings:
    return Settings(
        data_dir=tmp_path,
        database_url=str(shared_database.engine.url.render_as_string(hide_password=False)),
        base_url="https://websec.test",
        payments=PaymentSettings(
            stripe_secret_key=stripe_api.secret_key,
            stripe_webhook_secret=stripe_api.webhook_secret,
            stripe_api_base=stripe_api.base_url,
        ),
        mail=MailSettings(smtp_url=smtp_server.url, sender="websec <billing@websec.test>"),
        redis_url=get_redis_server().url,
    )


@pytest.fixture
def two_processes(
    tmp_path: Path,
    cluster_settings: Settings,
    scan_env: dict[str, str],
    pki: Pki,
    shared_database: Database,
    mailbox: Mailbox,  # cleared before the processes start sending
) -> Iterator[tuple[str, str]]:
    """Two serve-api processes on the same database. Emails queued before they start are raced for at once."""
    with shared_database.session() as session:
        for n in range(QUEUED_EMAILS):
            message = f"From: a@websec.test\r\nTo: queued{n}@example.com\r\nSubject: queued {n}\r\n\r\nhi\r\n"
            enqueue_email(
                session, QueuedEmail("test", f"queued{n}@example.com", f"queued {n}", message.encode()), _now()
            )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "RAZORPAY_", "STRIPE_", "REDIS_"))}
    env.update(scan_env)
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "WEBSEC_DATA_DIR": str(tmp_path),
            "WEBSEC_DATABASE_URL": cluster_settings.database_url,
            "REDIS_URL": cluster_settings.redis_url,
            "WEBSEC_BASE_URL": cluster_settings.base_url,
            "WEBSEC_SMTP_URL": cluster_settings.mail.smtp_url,
            # The SMTP server's certificate chains to the test root; OpenSSL's default context reads this.
            "SSL_CERT_FILE": str(pki.ca_bundle_path),
            "STRIPE_SECRET_KEY": cluster_settings.payments.stripe_secret_key,
            "STRIPE_WEBHOOK_SECRET": cluster_settings.payments.stripe_webhook_secret,
            "STRIPE_API_BASE": cluster_settings.payments.stripe_api_base,
        }
    )
    processes, bases = [], []
    for name in ("a", "b"):
        port = free_port()
        log = tmp_path / f"serve-api-{name}.log"
        with log.open("wb") as out:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "websec_app", "serve-api", "--port", str(port), "--no-access-log"],
                    cwd=REPO,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        bases.append((f"http://127.0.0.1:{port}", log))
    try:
        for process, (base, log) in zip(processes, bases, strict=True):
            wait_until_healthy(base, process, what="serve-api", seconds=30, output=lambda log=log: _tail(log))
        yield bases[0][0], bases[1][0]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            stop(process)


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def _now() -> datetime:
    return TEST_NOW  # the processes' clock starts there too (scan_env: WEBSEC_CLOCK_START)


async def _across(
    bases: tuple[str, str], method: str, path: str, count: int, **options: object
) -> list[httpx.Response]:
    """`count` identical requests at once, alternating between the two processes."""
    async with httpx.AsyncClient(timeout=60) as a, httpx.AsyncClient(timeout=60) as b:
        clients = ((a, bases[0]), (b, bases[1]))
        return await asyncio.gather(
            *(
                clients[i % 2][0].request(method, clients[i % 2][1] + path, **options)  # type: ignore[arg-type]
                for i in range(count)
            )
        )


def _wait_for_mail(mailbox: Mailbox, count: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while len(mailbox.messages) < count and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.postgres
async def test_two_processes_on_one_database_count_everything_exactly_once(
    two_processes: tuple[str, str],
    shared_database: Database,
    cluster_settings: Settings,
    stripe_api: StripeStandIn,
    smtp_server: SmtpSink,
    mailbox: Mailbox,
    best_site: RunningSite,
) -> None:
    # The emails queued before start are raced for by both outbox workers: each is sent exactly once
    _wait_for_mail(mailbox, QUEUED_EMAILS)
    queued = Counter(str(m.message["Subject"]) for m in mailbox.messages)
    assert queued == Counter({f"queued {n}": 1 for n in range(QUEUED_EMAILS)})

    # A Stripe payment whose webhook is delivered (and replayed) to both processes at once: one token, one email
    service = make_service(cluster_settings, shared_database, _now, smtp_server)  # type: ignore[arg-type]
    start = service.start_checkout(Product.ONE_TIME_SCAN, "stripe", "buyer@example.com")
    webhook = stripe_api.signed(stripe_api.complete_session(start.reference))
    deliveries = await _across(
        two_processes, "POST", "/api/webhooks/stripe", 10, content=webhook.body, headers=webhook.headers
    )
    # (a copy that arrives while the first is being processed finds the purchase fulfilled; a later one finds
    # the event itself recorded: either way, no second effect)
    outcomes = Counter(r.json()["outcome"] for r in deliveries)
    assert all(r.status_code == 200 for r in deliveries)
    assert outcomes["fulfilled"] == 1 and outcomes["already_fulfilled"] + outcomes["duplicate"] == 9
    _wait_for_mail(mailbox, QUEUED_EMAILS + 1)
    time.sleep(0.5)  # a second copy, if there were one, would arrive by now
    [token_mail] = [m for m in mailbox.messages if "buyer@example.com" in m.recipients]
    token = secret_in(token_mail, "wst_")

    # The one-time token used from both processes at once: exactly one scan
    used = await _across(two_processes, "POST", "/api/scan", 6, json={"url": best_site.url, "one_time_token": token})
    assert Counter(r.status_code for r in used) == Counter({200: 1, 403: 5})

    # 20 Pro scans race across both processes for the last unit of the month: exactly one 200
    with shared_database.session() as session:
        subscription = create_subscription(session, email="pro@example.com", now=_now())
        assert subscription.id is not None
        key = issue_api_key(session, subscription.id, _now())
        for _ in range(49):
            reserve_monthly_scan(session, subscription.id, _now(), 50)
    raced = await _across(
        two_processes, "POST", "/api/scan/pro", RACERS, json={"url": best_site.url}, headers={"X-API-Key": key.key}
    )
    assert Counter(r.status_code for r in raced) == Counter({200: 1, 429: RACERS - 1})
    with shared_database.session() as session:
        assert monthly_scans_used(session, subscription.id, _now()) == 50

    # Nothing was sent twice in the end either
    assert len(mailbox.messages) == QUEUED_EMAILS + 1


def test_reflex_uses_redis_for_ui_state_when_redis_url_is_set() -> None:
    # Given REDIS_URL, rxconfig.py hands it to Reflex, which then picks its Redis state manager and reaches Redis
    redis_url = get_redis_server().url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "REDIS_", "REFLEX_REDIS"))}
    env.update({"REDIS_URL": redis_url, "PYTHONPATH": str(REPO)})
    probe = (
        "import asyncio\n"
        "from reflex_base.config import get_config\n"
        "from reflex.utils import prerequisites\n"
        "print(get_config().redis_url)\n"
        "print(prerequisites.parse_redis_url())\n"
        "async def ping():\n"
        "    client = prerequisites.get_redis()\n"
        "    print(await client.ping())\n"
        "    await client.aclose()\n"
        "asyncio.run(ping())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [redis_url, redis_url, "True"]
