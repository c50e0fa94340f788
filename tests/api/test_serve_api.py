"""`python -m websec_app serve-api` and `keys ...` as an operator runs them: real processes, real HTTP, real scans."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

import api_routes
from tests.fixtures.ports import free_port
from tests.fixtures.processes import log_tail, serve_api, wait_until_healthy
from tests.fixtures.sites import RunningSite
from tests.job_rows import registered_workers
from tests.pg_server import get_server
from websec_app.cli import main
from websec_app.cli.serve_api_cmd import SHUTDOWN_GRACE_SECONDS
from websec_app.settings import Settings, get_settings
from websec_app.store import Database, database_for

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def operator_env(tmp_path: Path, scan_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
    env.update(scan_env)
    env.update({"WEBSEC_DATA_DIR": str(tmp_path), "PYTHONPATH": str(REPO)})
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "websec_app", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def server(operator_env: dict[str, str]) -> Iterator[str]:
    with serve_api(operator_env, free_port(), seconds=20) as (base, _):
        yield base


def test_an_operator_creates_a_key_and_a_customer_uses_it(
    server: str, operator_env: dict[str, str], best_site: RunningSite
) -> None:
    # Given a key made by an operator
    created = cli(operator_env, "keys", "create", "--email", "customer@example.com")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    assert key.startswith("wsk_")

    with httpx.Client(base_url=server, timeout=30) as http:
        # When the customer checks it, looks at the usage and scans
        verify = http.get("/api/verify-key", headers={"X-API-Key": key})
        scanned = http.post("/api/scan/pro", json={"url": best_site.url}, headers={"X-API-Key": key})
        usage = http.get("/api/usage", params={"key": key})

        # Then it works at once, and one scan is counted
        assert verify.json() == {"valid": True, "plan": "pro"}
        assert scanned.status_code == 200 and scanned.headers["X-Scans-Remaining"] == "49"
        assert usage.json() == {
            "valid": True,
            "email": "customer@example.com",
            "plan": "pro",
            "scans_used": 1,
            "scans_limit": 50,
        }

        # When support rotates the key, the old one stops and the new one keeps the month's usage
        rotated = cli(operator_env, "keys", "rotate", "--email", "customer@example.com")
        new_key = rotated.stdout.strip().splitlines()[-1]
        assert http.get("/api/verify-key", headers={"X-API-Key": key}).status_code == 403
        assert http.get("/api/usage", params={"key": new_key}).json()["scans_used"] == 1

        # When the new key is revoked, it stops at once
        assert cli(operator_env, "keys", "revoke", new_key).returncode == 0
        assert http.get("/api/verify-key", headers={"X-API-Key": new_key}).status_code == 403

        # And the server speaks JSON errors and serves its docs
        assert http.get("/api/nope").json() == {
            "error": "There is no endpoint at /api/nope. The API is described at /docs."
        }
        assert http.get("/docs").status_code == 200

    listing = cli(operator_env, "keys", "list")
    assert listing.returncode == 0
    assert listing.stdout.count("customer@example.com") == 2 and "revoked" in listing.stdout
    assert key not in listing.stdout and new_key not in listing.stdout  # only prefixes are shown


def test_keys_commands_explain_what_is_wrong(
    operator_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process (the story above runs the real processes): the same entry point, much faster.
    for name, value in operator_env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        assert main(["keys", "create", "--email", "a@example.com"]) == 0
        created = capsys.readouterr()

        again = main(["keys", "create", "--email", "A@example.com"]), capsys.readouterr()
        rotate_unknown = main(["keys", "rotate", "--email", "nobody@example.com"]), capsys.readouterr()
        revoke_unknown = main(["keys", "revoke", "wsk_not-a-key"]), capsys.readouterr()
    finally:
        database_for(get_settings().resolved_database_url).dispose()
        get_settings.cache_clear()

    assert created.out.splitlines()[-1].startswith("wsk_")
    assert again[0] == 1
    assert again[1].err == (
        "error: a@example.com already has an active key "
        f"({created.out.splitlines()[-1][:8]}…); use `keys rotate --email a@example.com` to replace it\n"
    )
    assert rotate_unknown[0] == 1 and "no active subscription for nobody@example.com" in rotate_unknown[1].err
    assert revoke_unknown[0] == 1 and "no active key matches" in revoke_unknown[1].err


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_serve_api_stops_gracefully_on_sigterm(
    operator_env: dict[str, str], tmp_path: Path, best_site: RunningSite, backend: str
) -> None:
    # Given serve-api whose in-process scan worker has run a scan (and so used the thread pool), embedded on
    # SQLite or with procrastinate's queue on PostgreSQL
    url = f"sqlite:///{tmp_path / 'websec.db'}"
    if backend == "postgresql":
        url = get_server().migrated_database()
        operator_env = {**operator_env, "WEBSEC_DATABASE_URL": url}
    port, log = free_port(), tmp_path / "serve-api.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "websec_app", "serve-api", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=operator_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, process, what="serve-api", seconds=30, output=lambda: log_tail(log))
        assert httpx.post(f"{base}/api/scan", json={"url": best_site.url}, timeout=60).status_code == 200
        assert _scan_workers(url) == 1  # the worker says it is alive
        # When it is asked to stop, as systemd, Docker and Kubernetes ask
        process.terminate()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # Then it stops by itself: its worker ran the app's shutdown (and unregistered from the cluster), and
    # granian did not have to kill it (a left-over thread-pool thread used to keep it alive until then)
    text = log.read_text(errors="replace")
    assert "refused to gracefully stop" not in text, log_tail(log)
    assert process.returncode == 0, log_tail(log)
    assert _scan_workers(url) == 0


def _scan_workers(url: str) -> int:
    """The workers registered as the cluster's capacity (its database closed again, whatever the outcome)."""
    database = Database(url)
    try:
        return registered_workers(database)
    finally:
        database.dispose()


def _quick_api(tmp_path: Path) -> FastAPI:
    return api_routes.create_api(Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'websec.db'}"))


async def test_a_stop_that_overruns_leaves_every_threads_stack_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given the API's lifespan, as serve-api's worker runs it, whose engine takes too long to stop
    api = _quick_api(tmp_path)

    async def slow_stop() -> None:
        await asyncio.to_thread(time.sleep, 1.0)  # stuck in a thread, as a blocking call would be

    monkeypatch.setattr(api.state.runtime.jobs, "stop", slow_stop)
    monkeypatch.setattr(api_routes, "STOP_STACKS_AFTER_SECONDS", 0.3)
    # When it is stopped
    async with api.router.lifespan_context(api):
        pass

    # Then the log shows where the stop was, before serve-api would have been killed
    err = capfd.readouterr().err
    assert err.startswith("The API's stop is still running after 0.3 s. Every thread's stack:"), err[:300]
    assert "concurrent/futures/thread.py" in err  # the thread that holds the stop up, in its call
    assert api_routes.STOP_STACKS_AFTER_SECONDS < SHUTDOWN_GRACE_SECONDS


async def test_a_stop_that_ends_in_time_leaves_nothing_armed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given the API's lifespan in a process that goes on after it (the tests' own, where schemathesis runs it)
    api = _quick_api(tmp_path)
    monkeypatch.setattr(api_routes, "STOP_STACKS_AFTER_SECONDS", 0.2)
    # When it stops at once, and the process goes on past the overrun's delay
    async with api.router.lifespan_context(api):
        pass
    await asyncio.sleep(0.6)

    # Then nothing wrote stacks afterwards (faulthandler's timer, left armed here, read the busy threads of
    # a later test without the GIL and crashed the process) and no timer is left waiting
    err = capfd.readouterr().err
    assert "Every thread's stack" not in err and "Timeout (" not in err, err[:300]
    assert not [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)]
