"""History, diff and badge (issue 17): every Pro scan is kept for its subscription; a diff tells what changed
between two scans of a site whose headers change between runs (real scans of a fixture site); the badge
shows the latest grade of a URL and never starts a scan."""

from __future__ import annotations

import asyncio
import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from tests.api.conftest import client_for, new_key
from tests.api.fakes import FakeScanner, FrozenClock
from tests.fixtures import catalog
from tests.fixtures.sites import Response, SiteFactory, html
from websec_app.scanner import scan
from websec_app.settings import Settings
from websec_app.store import Database, rotate_api_key

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def changing_site(site_factory: SiteFactory) -> tuple[Any, dict[str, list[tuple[str, str]]]]:
    """The best-practices site whose home page answers with whatever headers `state["headers"]` holds now."""
    site = catalog.best_practices(site_factory.unique_host("changing"))
    home = site.routes["/"]
    assert isinstance(home, Response)
    state = {"headers": list(home.headers)}
    site.routes["/"] = lambda request: html(catalog.BEST_PAGE, headers=state["headers"])
    return site_factory(site), state


@pytest.fixture
def real_api(make_api: Callable[..., FastAPI], scan_settings: Settings, tmp_path: Path) -> FastAPI:
    """The API with the real scanner, scanning the fixture sites."""
    settings = dataclasses.replace(scan_settings, data_dir=tmp_path, pro_scans_per_month=50)
    return make_api(scanner=scan, settings=settings)


def _without(headers: list[tuple[str, str]], name: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() != name.lower()]


async def test_each_pro_scan_is_kept_and_the_diff_names_what_changed(
    real_api: FastAPI, changing_site, database: Database, clock: FrozenClock
) -> None:
    site, state = changing_site
    key = new_key(database, clock)
    headers = {"X-API-Key": key.key}
    async with client_for(real_api) as http:
        # Given three Pro scans an hour apart: all good; then the CSP dropped; then a cookie without Secure
        first = await http.post("/api/scan/pro", json={"url": site.url}, headers=headers)
        assert first.status_code == 200, first.text
        clock.advance(hours=1)
        state["headers"] = _without(state["headers"], "Content-Security-Policy")
        second = await http.post("/api/scan/pro", json={"url": site.url}, headers=headers)
        clock.advance(hours=1)
        state["headers"] = [*state["headers"], ("Set-Cookie", "sessionid=abc; Path=/; HttpOnly")]
        third = await http.post("/api/scan/pro", json={"url": site.url}, headers=headers)
        assert second.status_code == third.status_code == 200

        # When the history of the URL is read (written the way the user typed it)
        listed = await http.get("/api/history", params={"url": site.url.rstrip("/")}, headers=headers)

        # Then it lists the three, newest first, with the grades the scans returned
        assert listed.status_code == 200, listed.text
        scans = listed.json()["scans"]
        assert [s["grade"] for s in scans] == [third.json()["grade"], second.json()["grade"], first.json()["grade"]]
        assert [s["scanned_at"] for s in scans] == sorted((s["scanned_at"] for s in scans), reverse=True)
        assert listed.json()["total"] == 3 and listed.json()["next_page"] is None

        # and each kept report is the body the scan returned
        kept = await http.get(f"/api/history/{scans[1]['id']}", headers=headers)
        assert kept.status_code == 200
        assert kept.json()["report"] == second.json()

        # and the diff of the second scan names the CSP as new, the score as lower
        diff = (await http.get(f"/api/history/{scans[1]['id']}/diff", headers=headers)).json()
        assert [c["name"] for c in diff["new"]] == ["Content-Security-Policy"]
        assert diff["new"][0]["after"]["status"] == "missing" and diff["new"][0]["before"] is None
        assert diff["score"]["change"] == second.json()["score"] - first.json()["score"] < 0
        assert diff["fixed"] == [] and diff["before"]["id"] == scans[2]["id"]

        # and the diff of the third names the cookie
        diff = (await http.get(f"/api/history/{scans[0]['id']}/diff", headers=headers)).json()
        assert {c["section"] for c in diff["new"]} == {"cookies"}

        # and the third against the first: both changes, nothing fixed
        against = await http.get(
            f"/api/history/{scans[0]['id']}/diff", params={"against": scans[2]["id"]}, headers=headers
        )
        assert {c["section"] for c in against.json()["new"]} == {"headers", "cookies"}

        # and the first has nothing before it
        first_diff = (await http.get(f"/api/history/{scans[2]['id']}/diff", headers=headers)).json()
        assert first_diff["before"] is None and first_diff["new"] == []


async def test_the_history_is_the_subscriptions_only_and_survives_a_key_rotation(
    api: FastAPI, database: Database, clock: FrozenClock
) -> None:
    owner, stranger = new_key(database, clock), new_key(database, clock, email="other@example.com")
    url = "https://kept.example/"
    async with client_for(api) as http:
        for _ in range(3):
            assert (
                await http.post("/api/scan/pro", json={"url": url}, headers={"X-API-Key": owner.key})
            ).status_code == 200
            clock.advance(minutes=5)
        mine = (await http.get("/api/history", params={"url": url}, headers={"X-API-Key": owner.key})).json()
        assert mine["total"] == 3

        # Another subscriber sees none of it: an empty history, and 404 for the ids (as for unknown ones)
        theirs = await http.get("/api/history", params={"url": url}, headers={"X-API-Key": stranger.key})
        assert theirs.json()["scans"] == []
        for path in (f"/api/history/{mine['scans'][0]['id']}", f"/api/history/{mine['scans'][0]['id']}/diff"):
            refused = await http.get(path, headers={"X-API-Key": stranger.key})
            assert refused.status_code == 404 and refused.json() == {"error": "No kept scan of yours has this id."}

        # A rotated key keeps the subscription's history
        with database.session() as session:
            rotated = rotate_api_key(session, owner.subscription_id, clock())
        again = await http.get("/api/history", params={"url": url}, headers={"X-API-Key": rotated.key})
        assert [s["id"] for s in again.json()["scans"]] == [s["id"] for s in mine["scans"]]

        # Pages: two per page
        page = (
            await http.get("/api/history", params={"url": url, "per_page": 2}, headers={"X-API-Key": rotated.key})
        ).json()
        assert len(page["scans"]) == 2 and page["next_page"] == 2
        last = await http.get(
            "/api/history", params={"url": url, "per_page": 2, "page": 2}, headers={"X-API-Key": rotated.key}
        )
        assert [s["id"] for s in last.json()["scans"]] == [mine["scans"][2]["id"]] and last.json()["next_page"] is None


async def test_a_diff_against_a_scan_of_another_url_says_so(
    api: FastAPI, database: Database, clock: FrozenClock
) -> None:
    owner, stranger = new_key(database, clock), new_key(database, clock, email="other@example.com")
    async with client_for(api) as http:

        async def kept(key: str, url: str) -> str:
            assert (await http.post("/api/scan/pro", json={"url": url}, headers={"X-API-Key": key})).status_code == 200
            clock.advance(minutes=5)
            listed = await http.get("/api/history", params={"url": url}, headers={"X-API-Key": key})
            return str(listed.json()["scans"][0]["id"])

        # Given the owner's kept scans of two URLs, and another subscriber's of the first
        first_a, other_b = await kept(owner.key, "https://a.example/"), await kept(owner.key, "https://b.example/")
        second_a, theirs = await kept(owner.key, "https://a.example/"), await kept(stranger.key, "https://a.example/")

        async def diff(report_id: str, against: str | None = None) -> tuple[int, Any]:
            params = {"against": against} if against else {}
            answer = await http.get(f"/api/history/{report_id}/diff", params=params, headers={"X-API-Key": owner.key})
            return answer.status_code, answer.json()

        # When the owner compares a scan of a.example with their own of b.example: a 400 naming both URLs
        assert await diff(second_a, against=other_b) == (
            400,
            {
                "error": f"The scan given as 'against' is of https://b.example/ and scan {second_a} of "
                "https://a.example/: a diff compares two kept scans of the same URL."
            },
        )
        # with an id that is no kept scan of theirs (unknown, or another subscriber's): 404 saying which id
        not_theirs = {"error": "No kept scan of yours has the id given as 'against'."}
        assert await diff(second_a, against="nope") == await diff(second_a, against=theirs) == (404, not_theirs)
        assert await diff("nope", against=first_a) == (404, {"error": "No kept scan of yours has this id."})
        # and with a scan of the same URL, the diff
        assert (await diff(second_a, against=first_a))[1]["before"]["id"] == first_a

        # And the first kept scan of a URL, compared with none, is exactly what docs/api.md says
        status, body = await diff(first_a)
        assert status == 200 and body["after"]["id"] == first_a
        assert {k: v for k, v in body.items() if k != "after"} == {
            "before": None,
            "grade": None,
            "score": None,
            "new": [],
            "fixed": [],
            "changed": [],
        }


async def test_history_refusals_are_json_errors(client, pro_key) -> None:
    missing = await client.get("/api/history", params={"url": "https://example.com/"})
    assert missing.status_code == 401 and "X-API-Key" in missing.json()["error"]
    bad = await client.get("/api/history", params={"url": "ftp://example.com/"}, headers={"X-API-Key": pro_key.key})
    assert bad.status_code == 400 and set(bad.json()) == {"error"}
    forged = await client.get("/api/history/x", headers={"X-API-Key": "wsk_forged"})
    assert forged.status_code == 403


def _badge(svg: str) -> tuple[str, list[str], str]:
    root = ET.fromstring(svg)
    title = root.findtext(f"{SVG}title") or ""
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    value_part = [r.get("fill", "") for r in root.iter(f"{SVG}rect") if r.get("x")]  # the right-hand part
    return title, texts, value_part[0]


async def test_the_badge_shows_the_latest_grade_and_date_and_never_scans(
    client, scanner: FakeScanner, clock: FrozenClock
) -> None:
    url = "https://badge.example/"
    # Nobody has scanned it: a grey "not scanned" badge, and no scan started
    unknown = await client.get("/api/badge", params={"url": url})
    assert unknown.status_code == 200 and unknown.headers["content-type"].startswith("image/svg+xml")
    title, texts, colour = _badge(unknown.text)
    assert title == "websec: not scanned" and "not scanned" in texts and colour == "#9f9f9f"
    assert scanner.calls == []

    # After anyone's scan (a free one here): its grade, in its colour, with the date; cacheable
    scanned = await client.post("/api/scan", json={"url": url})
    assert scanned.status_code == 200
    grade = scanned.json()["grade"]
    badge = await client.get("/api/badge", params={"url": "badge.example"})
    title, texts, colour = _badge(badge.text)
    assert title == f"websec: {grade} (scanned {clock().date().isoformat()})"
    assert texts.count(grade) == 2 and colour != "#9f9f9f"
    assert badge.headers["cache-control"] == "public, max-age=900"
    assert "default-src 'none'" in badge.headers["content-security-policy"]
    assert scanner.calls == [url]  # the one free scan; the badges started none

    # A malformed URL is a JSON error
    bad = await client.get("/api/badge", params={"url": "not a url"})
    assert bad.status_code == 400 and set(bad.json()) == {"error"}


async def test_the_diff_of_a_monitor_run_says_what_made_each_scan(
    api: FastAPI, database: Database, clock: FrozenClock, settings: Settings, scanner: FakeScanner
) -> None:
    from tests.usecases.test_monitors import _tick_and_run
    from websec_app.runtime import build_runtime

    owner = new_key(database, clock)
    headers = {"X-API-Key": owner.key}
    async with client_for(api) as http:
        # Given a Pro scan of a site, then the site monitored: its first run is a monitor scan
        assert (await http.post("/api/scan/pro", json={"url": "example.com"}, headers=headers)).status_code == 200
        clock.advance(minutes=5)
        created = await http.post("/api/monitors", json={"url": "example.com", "interval": "daily"}, headers=headers)
        assert created.status_code == 201, created.text
        # (run here, unless the app's own engine, whose ticker the Pro scan started, took the run first: then it
        # ends in the background, and the history is read once it is there)
        await _tick_and_run(build_runtime(settings, database=database, scanner=scanner, clock=clock, bounded=False))
        for _ in range(200):
            listed = (await http.get("/api/history", params={"url": "example.com"}, headers=headers)).json()
            if len(listed["scans"]) == 2:
                break
            await asyncio.sleep(0.05)
        assert [s["kind"] for s in listed["scans"]] == ["monitor", "pro"]

        # When the monitor run's diff is read
        diff = (await http.get(f"/api/history/{listed['scans'][0]['id']}/diff", headers=headers)).json()

    # Then each side says what made it, as the history does
    assert (diff["before"]["kind"], diff["after"]["kind"]) == ("pro", "monitor")


async def test_a_diff_of_two_kept_scans_compares_those_two_alone(
    real_api: FastAPI, site_factory: SiteFactory, database: Database, clock: FrozenClock
) -> None:
    # Given Pro scans of a site with its CSP, then through a bot challenge, then without its CSP
    site = catalog.best_practices(site_factory.unique_host("blocked-between"))
    site, switch = catalog.behind_a_challenge(site)
    running = site_factory(site)
    headers = {"X-API-Key": new_key(database, clock).key}
    async with client_for(real_api) as http:
        for blocked, without_csp in ((False, False), (True, False), (False, True)):
            switch.blocked = blocked
            if without_csp:
                switch.remove_header("Content-Security-Policy")
            assert (await http.post("/api/scan/pro", json={"url": running.url}, headers=headers)).status_code == 200
            clock.advance(hours=1)
        last, blocked_scan, first = [
            s["id"]
            for s in (await http.get("/api/history", params={"url": running.url}, headers=headers)).json()["scans"]
        ]

        # When the last scan is compared with the blocked one (the one before it, and named with ?against=)
        before_it = (await http.get(f"/api/history/{last}/diff", headers=headers)).json()
        against_blocked = await http.get(f"/api/history/{last}/diff", params={"against": blocked_scan}, headers=headers)
        # and with the first
        against_first = await http.get(f"/api/history/{last}/diff", params={"against": first}, headers=headers)

    # Then the two reports asked for are compared, and nothing else (a monitor's alert also looks further back,
    # docs/api.md): the blocked scan did not read the headers, so the missing CSP is not new against it
    assert before_it["before"]["id"] == blocked_scan
    assert before_it == against_blocked.json()
    assert "Content-Security-Policy" not in [c["name"] for c in before_it["new"]]
    assert [c["name"] for c in before_it["fixed"]] == ["scan.blocked"]
    # and against the first, which read them, it is
    assert "Content-Security-Policy" in [c["name"] for c in against_first.json()["new"]]
