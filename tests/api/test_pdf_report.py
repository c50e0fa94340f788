"""POST /api/report/pdf: a Pro scan as a PDF; counts as one scan; a failed render counts nothing."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import pypdf
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetUnreachable
from websec_app.store import Database, IssuedKey, monthly_scans_used, recent_scans, reserve_monthly_scan


async def pdf(client: httpx.AsyncClient, key: str | None, body: Mapping[str, Any]) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return await client.post("/api/report/pdf", json=body, headers=headers)


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


async def test_the_pdf_is_a_named_attachment(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    response = await pdf(client, pro_key.key, {"url": "www.example.com", "name": "Acme <Corp> & Sons"})

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"] == 'attachment; filename="www.example.com-websec-report.pdf"'
    assert response.headers["X-Scans-Remaining"] == "49"
    assert response.content.startswith(b"%PDF-")
    text = pdf_text(response.content)
    assert "Acme <Corp> & Sons" in text
    assert "Grade C" in text and "64" in text
    assert "default-src 'self'" in text  # fixes are in the Pro PDF
    assert "Cookies" in text


async def test_the_pdf_counts_as_one_scan(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    await pdf(client, pro_key.key, {"url": "example.com"})

    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 1
        assert [r.kind for r in recent_scans(session, subscription_id=pro_key.subscription_id)] == ["pdf"]


async def test_a_name_over_80_characters_is_400(
    client: httpx.AsyncClient, pro_key: IssuedKey, scanner: FakeScanner
) -> None:
    response = await pdf(client, pro_key.key, {"url": "example.com", "name": "n" * 81})

    assert response.status_code == 400
    assert response.json() == {"error": "The field 'name' must be at most 80 characters."}
    assert scanner.calls == []


async def test_a_name_of_80_characters_is_fine(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    assert (await pdf(client, pro_key.key, {"url": "example.com", "name": "n" * 80})).status_code == 200


async def test_a_render_failure_is_500_and_counts_nothing(
    make_api: Callable[..., FastAPI], pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    def broken_renderer(report: Mapping[str, Any], name: str | None) -> bytes:
        raise ValueError("font missing")

    async with client_for(make_api(render_pdf=broken_renderer)) as client:
        response = await pdf(client, pro_key.key, {"url": "example.com"})

    assert response.status_code == 500
    assert response.json() == {
        "error": "The PDF report could not be generated, so no scan was counted. Please try again."
    }
    assert response.headers["X-Scans-Remaining"] == "50"
    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0


async def test_pdf_needs_a_key(client: httpx.AsyncClient) -> None:
    assert (await pdf(client, None, {"url": "example.com"})).status_code == 401
    assert (await pdf(client, "wsk_unknown", {"url": "example.com"})).status_code == 403


async def test_pdf_is_429_when_the_quota_is_used_up(
    client: httpx.AsyncClient, pro_key: IssuedKey, database: Database, clock: FrozenClock
) -> None:
    with database.session() as session:
        for _ in range(50):
            reserve_monthly_scan(session, pro_key.subscription_id, clock(), 50)

    response = await pdf(client, pro_key.key, {"url": "example.com"})

    assert response.status_code == 429
    assert response.headers["X-Scans-Remaining"] == "0"


async def test_pdf_of_an_unreachable_site_is_502_and_counts_nothing(
    client: httpx.AsyncClient, pro_key: IssuedKey, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    scanner.errors["down.example"] = TargetUnreachable("Connection to down.example timed out")

    response = await pdf(client, pro_key.key, {"url": "down.example"})

    assert response.status_code == 502
    with database.session() as session:
        assert monthly_scans_used(session, pro_key.subscription_id, clock()) == 0


async def test_an_ipv6_target_gives_a_safe_filename(client: httpx.AsyncClient, pro_key: IssuedKey) -> None:
    response = await pdf(client, pro_key.key, {"url": "https://[2001:db8::1]/"})

    assert response.headers["content-disposition"] == 'attachment; filename="2001-db8-1-websec-report.pdf"'
