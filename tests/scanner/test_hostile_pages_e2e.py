"""Issue 12: pages built to stall the analysis (deep nesting, a flood of resource tags) are analysed
within the work budgets, reported with `page.analysis_limited`, and never freeze the server.

Each scan runs in a child process with a timeout: on a regression the test fails instead of hanging
the suite (a check stuck on the event loop would block `asyncio.wait_for` too). Timeouts are only
failure guards; no test asserts on wall time except the health answer of the running server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures import catalog
from tests.fixtures.hostile_pages import hostile_site
from tests.fixtures.ports import free_port
from tests.fixtures.processes import serve_api
from tests.fixtures.sites import RunningSite
from websec_app.scanner import scan

ROOT = Path(__file__).resolve().parents[2]
GUARD = 90  # seconds: a scan past this has stalled (the old analysis took minutes)


@pytest.fixture(scope="module")
def hostile(site_factory: Any) -> RunningSite:
    return site_factory(hostile_site(site_factory.unique_host("hostile")))  # type: ignore[no-any-return]


def scan_in_child(url: str, env: dict[str, str]) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "websec_app", "scan", url],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=GUARD,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the scan of {url} did not finish within {GUARD} s")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def page_findings(report: dict[str, Any]) -> dict[str, str]:
    return {f["check"]: f.get("note") or "" for f in report["page_analysis"]["findings"]}


@pytest.mark.parametrize(
    ("path", "budget"),
    [("/deep", "nesting depth"), ("/deep-mixed", "nesting depth"), ("/flat", "elements")],
)
def test_given_a_hostile_page_when_scanned_then_it_finishes_with_the_budget_finding(
    hostile: RunningSite, scan_env: dict[str, str], path: str, budget: str
) -> None:
    # Given a page built to stall a naive analysis; When it is scanned
    report = scan_in_child(hostile.url.rstrip("/") + path, scan_env)

    # Then the scan completes, graded, and says which budget stopped the analysis
    findings = page_findings(report)
    assert "page.analysis_limited" in findings, findings
    assert budget in findings["page.analysis_limited"]
    assert report["grade"] and report["page_analysis"]["html"] is True


def test_given_the_flat_page_then_what_was_examined_is_still_reported(
    hostile: RunningSite, scan_env: dict[str, str]
) -> None:
    report = scan_in_child(hostile.url.rstrip("/") + "/flat", scan_env)
    findings = page_findings(report)
    # The first thousands of tags were examined: their http:// images and cross-site scripts count.
    assert "page.mixed_passive" in findings and "page.sri_missing_script" in findings
    assert report["page_analysis"]["external_origins"][0]["origin"] in (
        "https://cdn.other.test",
        "http://img.other.test",
    )


def test_given_a_page_of_long_distinct_urls_then_its_section_stays_tens_of_kilobytes(
    hostile: RunningSite, scan_env: dict[str, str]
) -> None:
    # Given 2 MiB of distinct URLs of 4,000 characters as stored, in every list the page analysis keeps
    # (tests/fixtures/hostile_pages.long_urls); When it is scanned
    report = scan_in_child(hostile.url.rstrip("/") + "/long-urls", scan_env)

    # Then its page section is tens of KB as stored (2.57 MB before: 50 URLs a list, copied into 18 lists)
    section = report["page_analysis"]
    assert len(json.dumps(section)) < 100_000
    # and the findings still name the first origin and count the others
    findings = {f["check"]: f for f in section["findings"]}
    assert findings["page.mixed_active"]["subjects"][0].startswith("http://h0-xxx")
    assert findings["page.mixed_active"]["subjects_not_listed"] > 400
    assert section["mixed_content"]["not_listed"]["active"] > 400


def test_given_a_normal_page_then_no_budget_finding(hostile: RunningSite, scan_env: dict[str, str]) -> None:
    report = scan_in_child(hostile.url.rstrip("/") + "/normal", scan_env)
    assert "page.analysis_limited" not in page_findings(report)


async def test_given_a_script_injected_after_the_end_of_html_then_it_is_graded(
    site_factory: Any, scan_settings: Any
) -> None:
    # Given the best page with a script appended after </html> (HTML §13.2.6.4.23: browsers run it "in body")
    injected = catalog.BEST_PAGE + '\n<script src="http://cdn.other.test/evil.js"></script>\n'
    site = site_factory(catalog.best_practices(site_factory.unique_host("after-html"), body=injected))

    # When it is scanned
    report = (await scan(site.url, scan_settings)).to_dict()

    # Then the injected script is seen: http:// (upgraded by the page's upgrade-insecure-requests) and without
    # integrity from another site
    findings = page_findings(report)
    assert findings.get("page.sri_missing_script") == "http://cdn.other.test/evil.js", findings
    assert "page.mixed_upgraded" in findings and "page.no_mixed_content" not in findings
    assert "http://cdn.other.test" in [o["origin"] for o in report["page_analysis"]["external_origins"]]


# -- a real serve-api process ---------------------------------------------------------------------


@pytest.fixture
def api_server(tmp_path: Path, scan_env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
    env.update(scan_env)
    env.update({"WEBSEC_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT), "WEBSEC_FREE_SCANS_PER_DAY": "1000"})
    with serve_api(env, free_port(), "--no-access-log", stop_within=5) as server:
        yield server


def _free_scan(base: str, url: str) -> int:
    try:
        return httpx.post(f"{base}/api/scan", json={"url": url}, timeout=GUARD).status_code
    except httpx.HTTPError:
        return -1


def test_given_a_server_scanning_hostile_pages_then_health_keeps_answering(
    api_server: tuple[str, subprocess.Popen[bytes]], hostile: RunningSite
) -> None:
    base, _ = api_server
    urls = [hostile.url.rstrip("/") + path for path in ("/deep-mixed", "/flat", "/deep", "/flat")]
    with ThreadPoolExecutor(len(urls)) as pool:
        # Given scans of hostile pages in flight
        scans = [pool.submit(_free_scan, base, url) for url in urls]
        late: list[str] = []
        # When /api/health is asked again and again meanwhile
        while not all(s.done() for s in scans):
            try:
                answer = httpx.get(f"{base}/api/health", timeout=1.0)
                assert answer.status_code == 200
            except httpx.TimeoutException as exc:
                late.append(type(exc).__name__)
            time.sleep(0.05)
        # Then every health check answered within its one-second timeout, and every scan completed
        assert late == []
        assert [s.result() for s in scans] == [200] * len(urls)


def test_given_a_server_busy_with_a_hostile_page_when_sigterm_then_it_exits_within_the_grace_period(
    api_server: tuple[str, subprocess.Popen[bytes]], hostile: RunningSite
) -> None:
    base, process = api_server
    with ThreadPoolExecutor(2) as pool:
        # Given a server analysing hostile pages
        for path in ("/deep-mixed", "/flat"):
            pool.submit(_free_scan, base, hostile.url.rstrip("/") + path)
        deadline = time.monotonic() + 30
        while not any(r.target in ("/deep-mixed", "/flat") for r in hostile.requests) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # the body is fetched: the analysis is starting

        # When it is asked to stop
        process.terminate()

        # Then it exits well within its grace period
        try:
            process.wait(timeout=8)
        except subprocess.TimeoutExpired:
            pytest.fail("serve-api ignored SIGTERM while analysing a page")
