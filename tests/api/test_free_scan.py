"""POST /api/scan without a token: spec 2.1 shape, `full=1`, and the per-IP daily quota."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for
from tests.api.fakes import FakeScanner, FrozenClock
from websec_app.scanner import TargetRefused, TargetUnreachable
from websec_app.settings import Settings
from websec_app.store import Database, free_scans_used, recent_scans


async def use_free_scans(client: httpx.AsyncClient, count: int) -> None:
    for _ in range(count):
        response = await client.post("/api/scan", json={"url": "example.com"})
        assert response.status_code == 200, response.text


async def test_free_scan_has_the_free_shape(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan", json={"url": "example.com"})

    assert response.status_code == 200
    body = response.json()
    assert body["pro_locked"] is True
    assert body["url"] == "https://example.com/"  # https:// prepended
    assert body["final_url"] == "https://example.com/"
    assert body["status_code"] == 200
    assert body["grade"] == "C" and body["score"] == 64
    # Counted over what is shown; the cookie finding of the hidden Pro sections is `locked`
    assert body["issue_counts"] == {"critical": 1, "important": 5, "minor": 0, "total": 6, "locked": 1}
    assert "cookies" not in body and "cross_origin" not in body
    for section in ("headers", "tls", "dns", "security_txt", "cors", "server_fingerprint", "page_analysis"):
        assert isinstance(body[section], dict), section
    csp = body["headers"]["Content-Security-Policy"]
    assert set(csp) == {"present", "value", "status", "severity", "deduction", "explanation", "fix", "note"}
    assert csp["fix"] is None
    assert all(f["fix"] is None for f in body["dns"]["findings"])
    assert all(f["fix"] is None for f in body["page_analysis"]["findings"])


async def test_full_1_includes_fix_values_but_stays_free(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan?full=1", json={"url": "https://example.com"})

    body = response.json()
    assert response.status_code == 200
    assert body["pro_locked"] is True
    assert "cookies" not in body
    assert body["headers"]["Content-Security-Policy"]["fix"] == "default-src 'self'"
    assert body["dns"]["findings"][0]["fix"].startswith("example.com. CAA")


async def test_full_0_strips_fixes(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/scan?full=0", json={"url": "example.com"})

    assert response.json()["headers"]["Content-Security-Policy"]["fix"] is None


async def test_an_http_url_is_scanned_as_given(client: httpx.AsyncClient, scanner: FakeScanner) -> None:
    response = await client.post("/api/scan", json={"url": "http://example.com/path?q=1"})

    assert response.status_code == 200
    assert scanner.calls == ["http://example.com/path?q=1"]


@pytest.mark.parametrize(
    "url", ["https://a_b.example.com/", "https://r3---sn-4g5e6nsz.googlevideo.com/", "https://-edge-.example.com/"]
)
async def test_a_name_browsers_accept_is_scanned(client: httpx.AsyncClient, scanner: FakeScanner, url: str) -> None:
    """WHATWG URL host parsing (UTS #46 without CheckHyphens or STD3 rules): an underscore or a hyphen at a
    label's edges or in its 3rd and 4th places is part of a name, not a 400."""
    response = await client.post("/api/scan", json={"url": url})

    assert response.status_code == 200
    assert response.json()["url"] == url
    assert scanner.calls == [url]


async def test_the_eleventh_scan_of_the_day_is_refused_with_the_reset_time(client: httpx.AsyncClient) -> None:
    await use_free_scans(client, 10)

    response = await client.post("/api/scan", json={"url": "example.com"})

    assert response.status_code == 429
    message = response.json()["error"]
    assert "10 scans per day" in message
    assert "2026-11-23T00:00:00Z" in message and "midnight UTC" in message
    assert response.headers["Retry-After"] == str(12 * 3600)


async def test_the_quota_resets_at_midnight_utc(client: httpx.AsyncClient, clock: FrozenClock) -> None:
    clock.set(datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC))
    await use_free_scans(client, 10)
    assert (await client.post("/api/scan", json={"url": "example.com"})).status_code == 429

    clock.set(datetime(2026, 11, 23, 0, 0, 0, tzinfo=UTC))

    assert (await client.post("/api/scan", json={"url": "example.com"})).status_code == 200


async def test_each_ip_has_its_own_quota(api: FastAPI, client: httpx.AsyncClient) -> None:
    await use_free_scans(client, 10)

    async with client_for(api, "198.51.100.20") as other:
        response = await other.post("/api/scan", json={"url": "example.com"})

    assert response.status_code == 200


async def test_ipv6_clients_are_counted_per_64(api: FastAPI) -> None:
    async with client_for(api, "2001:db8:1:2::1") as first:
        await use_free_scans(first, 10)
    async with client_for(api, "2001:db8:1:2:ffff::9") as same_64, client_for(api, "2001:db8:1:3::1") as other_64:
        assert (await same_64.post("/api/scan", json={"url": "example.com"})).status_code == 429
        assert (await other_64.post("/api/scan", json={"url": "example.com"})).status_code == 200


async def test_x_forwarded_for_is_ignored_from_an_untrusted_peer(
    client: httpx.AsyncClient, database: Database, clock: FrozenClock
) -> None:
    response = await client.post("/api/scan", json={"url": "example.com"}, headers={"X-Forwarded-For": "192.0.2.1"})

    assert response.status_code == 200
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 1
        assert free_scans_used(session, "192.0.2.1", clock()) == 0


async def test_x_forwarded_for_is_used_behind_a_trusted_proxy(
    make_api: object, settings: Settings, database: Database, clock: FrozenClock
) -> None:
    app = make_api(settings=settings.with_overrides(trusted_proxies=("10.0.0.0/8",)))  # type: ignore[operator]
    async with client_for(app, "10.1.2.3") as via_proxy:
        for spoofed_left in ("1.1.1.1", "8.8.8.8"):  # what the client itself claims is ignored
            headers = {"X-Forwarded-For": f"{spoofed_left}, 192.0.2.55, 10.9.9.9"}
            assert (await via_proxy.post("/api/scan", json={"url": "a.com"}, headers=headers)).status_code == 200
        direct = await via_proxy.post("/api/scan", json={"url": "a.com"})  # no header: the proxy itself

    assert direct.status_code == 200
    with database.session() as session:
        assert free_scans_used(session, "192.0.2.55", clock()) == 2
        assert free_scans_used(session, "1.1.1.1", clock()) == 0
        assert free_scans_used(session, "10.1.2.3", clock()) == 1


async def test_a_refused_target_is_400_and_consumes_nothing(
    client: httpx.AsyncClient, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    scanner.errors["internal.example"] = TargetRefused("internal.example resolves to 10.0.0.5, a private address")

    response = await client.post("/api/scan", json={"url": "internal.example"})

    assert response.status_code == 400
    assert response.json() == {"error": "internal.example resolves to 10.0.0.5, a private address"}
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 0


async def test_an_unreachable_target_is_502_and_consumes_nothing(
    client: httpx.AsyncClient, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    scanner.errors["down.example"] = TargetUnreachable("Connection refused by down.example:443")
    await use_free_scans(client, 9)

    response = await client.post("/api/scan", json={"url": "down.example"})

    assert response.status_code == 502
    assert response.json() == {"error": "Connection refused by down.example:443"}
    assert (await client.post("/api/scan", json={"url": "example.com"})).status_code == 200  # the 10th is still there


async def test_an_invalid_scheme_is_400_before_anything_is_counted(
    client: httpx.AsyncClient, scanner: FakeScanner, database: Database, clock: FrozenClock
) -> None:
    response = await client.post("/api/scan", json={"url": "ftp://example.com/"})

    assert response.status_code == 400
    assert "scheme" in response.json()["error"]
    assert scanner.calls == []
    with database.session() as session:
        assert free_scans_used(session, "203.0.113.7", clock()) == 0


async def test_a_free_scan_is_recorded_with_its_client(client: httpx.AsyncClient, database: Database) -> None:
    await client.post("/api/scan", json={"url": "example.com"})

    with database.session() as session:
        [record] = recent_scans(session, client="203.0.113.7")
    assert (record.kind, record.url, record.grade, record.score, record.algorithm_version) == (
        "free",
        "https://example.com/",
        "C",
        64,
        "test.1",
    )


async def test_zero_free_scans_per_day_refuses_every_free_scan(make_api: object, settings: Settings) -> None:
    app = make_api(settings=settings.with_overrides(free_scans_per_day=0))  # type: ignore[operator]
    async with client_for(app) as http:
        response = await http.post("/api/scan", json={"url": "example.com"})

    assert response.status_code == 429
