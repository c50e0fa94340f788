"""The API with the real scanner against the fixture sites (tests/fixtures): real TLS, DNS and HTTP on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FrozenClock
from tests.fixtures.sites import RunningSite, Site, SiteFactory
from websec_app.scanner import scan
from websec_app.settings import Settings
from websec_app.store import Database, IssuedKey, free_scans_used, monthly_scans_used


@pytest.fixture
async def real_client(
    make_api: Callable[..., FastAPI], scan_settings: Settings, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    real = scan_settings.with_overrides(data_dir=settings.data_dir)
    async with client_for(make_api(settings=real, scanner=scan)) as client:
        yield client


@pytest.fixture
async def guarded_client(
    make_api: Callable[..., FastAPI], scan_settings: Settings, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    """Production behaviour: private and loopback targets are refused."""
    real = scan_settings.with_overrides(data_dir=settings.data_dir, allow_private_targets=False)
    async with client_for(make_api(settings=real, scanner=scan)) as client:
        yield client


async def test_free_scan_of_the_worst_site(real_client: httpx.AsyncClient, worst_site: RunningSite) -> None:
    response = await real_client.post("/api/scan", json={"url": worst_site.host})

    assert response.status_code == 200
    body = response.json()
    assert body["url"] == "https://worst.test/"
    assert body["pro_locked"] is True and "cookies" not in body and "cross_origin" not in body
    assert body["grade"] in ("D", "F")
    assert body["issue_counts"]["total"] > 0
    missing = [h for h in body["headers"].values() if h["status"] != "good"]
    assert missing and all(h["fix"] is None for h in missing)

    full = (await real_client.post("/api/scan?full=1", json={"url": worst_site.host})).json()
    assert any(h["fix"] for h in full["headers"].values() if h["status"] != "good")


async def test_pro_scan_and_pdf_of_the_best_site(
    real_client: httpx.AsyncClient, best_site: RunningSite, pro_key: IssuedKey
) -> None:
    headers = {"X-API-Key": pro_key.key}

    scan_response = await real_client.post("/api/scan/pro", json={"url": best_site.url}, headers=headers)
    pdf_response = await real_client.post(
        "/api/report/pdf", json={"url": best_site.url, "name": "Best Ltd"}, headers=headers
    )

    assert scan_response.status_code == 200
    body = scan_response.json()
    assert body["pro_locked"] is False and body["grade"] in ("A+", "A")
    assert "cookies" in body and "cross_origin" in body
    assert scan_response.headers["X-Scans-Remaining"] == "49"
    assert pdf_response.status_code == 200
    assert pdf_response.content.startswith(b"%PDF-")
    assert pdf_response.headers["content-disposition"] == 'attachment; filename="best.test-websec-report.pdf"'
    assert pdf_response.headers["X-Scans-Remaining"] == "48"


@pytest.mark.parametrize(
    "url", ["loopback.ssrf.test", "private.ssrf.test", "http://127.0.0.1/", "https://[::1]/", "http://2130706433/"]
)
async def test_private_and_loopback_targets_are_400_and_free(
    guarded_client: httpx.AsyncClient, url: str, database: Database, clock: FrozenClock
) -> None:
    response = await guarded_client.post("/api/scan", json={"url": url})

    assert response.status_code == 400
    assert set(response.json()) == {"error"} and response.json()["error"]
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 0


async def test_an_unreachable_site_is_502_and_free(
    real_client: httpx.AsyncClient,
    site_factory: SiteFactory,
    pro_key: IssuedKey,
    database: Database,
    clock: FrozenClock,
) -> None:
    closed = site_factory(Site(names=(site_factory.unique_host("closed"),), tls=None, http=None))
    headers = {"X-API-Key": pro_key.key}

    refused = await real_client.post("/api/scan/pro", json={"url": closed.host}, headers=headers)
    no_such_name = await real_client.post("/api/scan/pro", json={"url": "no-such-name.test"}, headers=headers)

    assert refused.status_code == 502, refused.text
    assert no_such_name.status_code == 502, no_such_name.text
    assert refused.json()["error"] and no_such_name.json()["error"]
    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0
