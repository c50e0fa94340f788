"""No secrets in logs, no operator endpoints over HTTP (issue 7, "The service's own security").

Keys are managed only with `python -m websec_app keys ...`; the HTTP surface is the spec's endpoints,
the docs, and (development only) the payment sandbox.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute

from api_routes import ROUTERS
from api_routes.middleware.log_redaction import RedactSecrets, redact
from tests.api.conftest import client_for
from tests.api.test_serve_api import REPO, cli, operator_env
from tests.fixtures.ports import free_port
from tests.fixtures.processes import stop, wait_until_healthy
from tests.fixtures.sites import RunningSite
from websec_app.settings import Settings

__all__ = ["operator_env"]  # the fixture, shared with test_serve_api.py

#: Every path the API serves over HTTP (spec section 4, webhooks, health, security.txt) and the docs.
PUBLIC_PATHS = {
    "/api/scan",
    "/api/scan/pro",
    "/api/report/pdf",
    "/api/scans",  # async and batch scans (issue 16)
    "/api/scans/{job_id}",
    "/api/history",  # a subscriber's kept scans, their diffs, and the public badge (issue 17)
    "/api/history/{report_id}",
    "/api/history/{report_id}/diff",
    "/api/badge",
    "/api/monitors",  # monitoring (issue 17)
    "/api/monitors/{monitor_id}",
    "/api/verify-key",
    "/api/usage",
    "/api/compliance-report/pay",
    "/api/verify-one-time",
    "/api/compliance-report/generate",
    "/api/webhooks/stripe",
    "/api/webhooks/razorpay",
    "/api/health",
    "/.well-known/security.txt",
}
_OPERATOR_WORDS = re.compile(r"admin|operator|internal|manage|debug|keys?(/|$)|rotate|revoke|issue", re.IGNORECASE)


def test_the_http_surface_has_no_operator_or_admin_endpoint(api: FastAPI) -> None:
    documented = set(api.openapi()["paths"])
    served = {route.path for router in ROUTERS for route in router.routes if isinstance(route, APIRoute)}

    assert documented == PUBLIC_PATHS
    undocumented = served - documented
    assert undocumented == {
        "/api/sandbox/checkout/{reference}",  # development only: 404 in production (below)
        "/api/{rest:path}",  # the JSON 404/405 catch-all
        "/security.txt",  # RFC 9116's legacy location: a redirect to /.well-known/security.txt
    }
    assert [path for path in served if _OPERATOR_WORDS.search(path.removeprefix("/api/verify-key"))] == []


def test_the_reflex_pages_are_no_operator_pages() -> None:
    from websec_app.ui import register_pages

    class Recorder:
        routes: list[str] = []

        def add_page(self, component: object, route: str = "", **options: object) -> None:
            self.routes.append(route)

    recorder = Recorder()
    register_pages(recorder)  # type: ignore[arg-type]

    assert "/" in recorder.routes and "/pro" in recorder.routes
    assert [r for r in recorder.routes if re.search(r"admin|operator|keys|internal", r, re.IGNORECASE)] == []


async def test_the_sandbox_is_404_in_production(make_api: Callable[..., FastAPI], settings: Settings) -> None:
    import dataclasses

    production = make_api(settings=dataclasses.replace(settings, environment="production"))
    async with client_for(production) as client:
        page = await client.get("/api/sandbox/checkout/anything")
        action = await client.post("/api/sandbox/checkout/anything", data={"action": "pay"})

    assert page.status_code == 404 and action.status_code == 404
    assert "error" in page.json()


def test_secret_query_values_are_redacted_from_access_log_records() -> None:
    key = "wsk_" + "A" * 43
    record = logging_record('%s - "%s %s HTTP/%s" %d', ("127.0.0.1:5", "GET", f"/api/usage?key={key}", "1.1", 200))

    RedactSecrets().filter(record)

    assert key not in record.getMessage() and "/api/usage?key=[redacted]" in record.getMessage()
    assert redact("/?one_time_token=ott_x&full=1") == "/?one_time_token=[redacted]&full=1"


def test_granians_separate_query_string_is_redacted_and_joined_into_the_target() -> None:
    # Granian logs with a dict of fields: the query string comes without its "?", the key first in it
    key = "wsk_" + "B" * 43
    fields = {"addr": "127.0.0.1", "method": "GET", "path": "/api/usage", "query_string": f"key={key}&x=1"}
    record = logging_record('%(addr)s - "%(method)s %(target)s"', (fields,))

    RedactSecrets().filter(record)

    assert record.getMessage() == '127.0.0.1 - "GET /api/usage?key=[redacted]&x=1"'
    assert key not in str(record.args)
    plain = logging_record("%(target)s", ({"path": "/api/health", "query_string": ""},))
    RedactSecrets().filter(plain)
    assert plain.getMessage() == "/api/health"


def logging_record(msg: str, args: tuple[object, ...]) -> object:
    import logging

    return logging.LogRecord("granian.access", logging.INFO, __file__, 1, msg, args, None)


def test_a_real_server_logs_no_key_at_debug_level(
    tmp_path: Path, operator_env: dict[str, str], best_site: RunningSite
) -> None:
    # Given serve-api at DEBUG with its access log, and keys made and rotated by an operator
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "websec_app", "serve-api", "--port", str(port), "--log-level", "debug"],
            cwd=REPO,
            env=operator_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base, process, what="serve-api", seconds=20)
        created = cli(operator_env, "keys", "create", "--email", "secret-test@example.com")
        key = created.stdout.strip().splitlines()[-1]
        rotated = cli(operator_env, "keys", "rotate", "--email", "secret-test@example.com")
        new_key = rotated.stdout.strip().splitlines()[-1]

        # When a customer uses them the ways the API allows (header and ?key= query)
        with httpx.Client(base_url=base, timeout=30) as http:
            assert http.get("/api/usage", params={"key": new_key}).status_code == 200
            assert http.get("/api/usage", params={"key": key}).status_code == 403
            assert http.get("/api/verify-key", headers={"X-API-Key": new_key}).status_code == 200
            scanned = http.post("/api/scan/pro", json={"url": best_site.url}, headers={"X-API-Key": new_key})
            assert scanned.status_code == 200
    finally:
        stop(process)

    # Then the log shows the requests but neither key
    text = log.read_text()
    assert "/api/usage?key=[redacted]" in text, text[-2000:]
    assert key not in text and new_key not in text
