"""`serve-api` delivers the outbox: mail a previous process left is sent at start, and a newcomer can click
through a sandbox purchase over real HTTP and find the token in var/outbox/*.eml."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.clock import TEST_NOW
from tests.fixtures.ports import free_port
from tests.fixtures.processes import stop, wait_until_healthy
from websec_app.store import Database
from websec_app.store.outbox import QueuedEmail, enqueue_email

REPO = Path(__file__).resolve().parents[2]


def _wait(condition: Callable[[], bool], what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_serve_api_sends_left_over_mail_and_sandbox_purchases(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'websec.db'}")
    with database.session() as session:
        message = b"From: websec <a@websec.test>\r\nTo: old@example.com\r\nSubject: left over\r\n\r\nhi\r\n"
        enqueue_email(session, QueuedEmail("test", "old@example.com", "left over", message), TEST_NOW)
    database.dispose()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "RAZORPAY_", "STRIPE_"))}
    env.update(
        {
            "WEBSEC_DATA_DIR": str(tmp_path),
            "WEBSEC_BASE_URL": base,
            "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
            "PYTHONPATH": str(REPO),
        }
    )
    outbox = tmp_path / "outbox"
    process = subprocess.Popen(
        [sys.executable, "-m", "websec_app", "serve-api", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the outbox worker may deliver before the server listens (both start with the app): wait for both
        _wait(lambda: len(list(outbox.glob("*.eml"))) == 1, "the left-over email")
        wait_until_healthy(base, process, what="serve-api", seconds=60)
        pay = httpx.post(
            f"{base}/api/compliance-report/pay",
            json={"provider": "stripe", "email": "new@example.com", "url": "example.com"},
            timeout=10,
        )
        page = httpx.get(pay.json()["checkout_url"], timeout=10)
        clicked = httpx.post(pay.json()["checkout_url"], data={"action": "pay"}, timeout=10)
        _wait(lambda: len(list(outbox.glob("*.eml"))) == 2, "the token email")
    finally:
        stop(process)

    assert pay.json()["sandbox"] is True
    assert "SANDBOX: no real money moves" in page.text and "$3.00" in page.text
    # Stripe's part played: the webhook's effect, then the browser sent to the success URL (issue 15)
    assert clicked.status_code == 303
    reference = pay.json()["checkout_url"].rsplit("/", 1)[1]
    assert clicked.headers["location"] == f"{base}/checkout/success?session_id={reference}"
    mails = sorted(path.read_bytes() for path in outbox.glob("*.eml"))
    assert any(b"Subject: left over" in m for m in mails)
    assert any(b"Subject: Your websec compliance report token" in m and b"To: new@example.com" in m for m in mails)


def test_serve_api_without_keys_and_a_public_base_url_refuses_the_sandbox(tmp_path: Path) -> None:
    # Deployed without WEBSEC_ENV=production and without provider keys: no report is given away.
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBSEC_", "RAZORPAY_", "STRIPE_"))}
    env.update(
        {
            "WEBSEC_DATA_DIR": str(tmp_path),
            "WEBSEC_BASE_URL": "https://websec.example.com",
            "WEBSEC_CLOCK_START": TEST_NOW.isoformat(),
            "PYTHONPATH": str(REPO),
        }
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "websec_app", "serve-api", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait(lambda: _answers(f"{base}/api/compliance-report/pay"), "the server")
        pays = [
            httpx.post(
                f"{base}/api/compliance-report/pay",
                json={"provider": provider, "email": "new@example.com", "url": "example.com"},
                timeout=10,
            )
            for provider in ("razorpay", "stripe")
        ]
        page = httpx.get(f"{base}/api/sandbox/checkout/sbx_str_order_x", timeout=10)
    finally:
        stop(process)

    assert [p.status_code for p in pays] == [503, 503]
    assert page.status_code == 404


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.HTTPError:
        return False
    return True
