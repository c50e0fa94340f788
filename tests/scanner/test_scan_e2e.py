"""End-to-end scans of real fixture sites on loopback: grades, SSRF guard, limits, concurrency."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import catalog
from tests.fixtures.sites import Drip, Garbage, Huge, Redirect, Stall
from websec_app.scanner import TargetRefused, TargetUnreachable, scan
from websec_app.scanner.fetch.resolve import Pinner, Resolver
from websec_app.settings import ScanLimits, Settings

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "websec_app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


# -- grades ---------------------------------------------------------------------------------------


async def test_given_a_site_with_every_best_practice_when_scanned_then_a_plus(best_site, scan_settings) -> None:
    report = await scan(best_site.url, scan_settings)
    body = report.to_dict()
    problems = {
        name: [f["check"] for f in section.get("findings", []) if f["status"] != "good"]
        or [h for h, v in section.items() if isinstance(v, dict) and v.get("status") not in (None, "good")]
        for name, section in body.items()
        if isinstance(section, dict) and name not in ("issue_counts", "grading")
    }
    assert (body["grade"], body["score"]) == ("A+", 100), problems
    assert body["issue_counts"]["total"] == 0
    assert body["tls"]["trusted"] and body["tls"]["hostname_matches"]


async def test_given_a_site_with_no_best_practice_when_scanned_then_f_with_findings(worst_site, scan_settings) -> None:
    body = (await scan(worst_site.url, scan_settings)).to_dict()
    assert body["grade"] == "F" and body["score"] < 50
    assert body["headers"]["Content-Security-Policy"]["status"] == "missing"
    assert body["cors"]["status"] == "bad"
    assert body["redirection"]["status"] == "missing"
    for section in (
        "tls",
        "dns",
        "cookies",
        "cross_origin",
        "security_txt",
        "cors",
        "server_fingerprint",
        "page_analysis",
        "redirection",
    ):
        assert {"status", "deduction", "findings"} <= set(body[section]), section
        for finding in body[section]["findings"]:
            assert {"check", "status", "severity", "deduction", "explanation", "fix", "cwe", "notes"} <= set(finding)
            assert finding["note"] == ("; ".join(finding["notes"]) or None)
    for header in body["headers"].values():
        spec = {"present", "value", "status", "severity", "deduction", "explanation", "fix", "note"}
        # spec 2.3, plus what goes beside `fix` and beside `note`
        assert set(header) == spec | {"fix_snippets", "fix_note", "notes"}
        assert header["note"] == ("; ".join(header["notes"]) or None)
    assert body["issue_counts"]["total"] == sum(body["issue_counts"][k] for k in ("critical", "important", "minor"))


def test_cli_prints_json_report_and_exits_0(best_site, scan_env) -> None:
    done = run_cli("scan", best_site.url, env=scan_env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["grade"] == "A+" and report["final_url"] == best_site.url


def test_cli_text_summary(worst_site, scan_env) -> None:
    done = run_cli("scan", worst_site.url, "--text", env=scan_env)
    assert done.returncode == 0, done.stderr
    assert "Grade F" in done.stdout and "redirect.missing" in done.stdout


def test_cli_refuses_loopback_without_the_setting_and_exits_2(best_site, scan_env) -> None:
    env = {**scan_env, "WEBSEC_ALLOW_PRIVATE_TARGETS": "0"}
    done = run_cli("scan", best_site.url, env=env)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert "resolves to a private or reserved address" in error and best_site.ip not in error  # issue 12


def test_cli_unreachable_target_exits_3(scan_env) -> None:
    done = run_cli("scan", "https://no-such-name.nowhere.test/", env=scan_env)
    assert done.returncode == 3
    assert "does not exist" in json.loads(done.stdout)["error"]


# -- SSRF guard -----------------------------------------------------------------------------------


@pytest.fixture
def guarded(scan_settings: Settings) -> Settings:
    """The fixture DNS and CA, but the guard at its production default."""
    return dataclasses.replace(scan_settings, allow_private_targets=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://017700000001/",
        "http://１２７.０.０.１/",  # fullwidth digits (UTS #46 maps them to ASCII)
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://100.64.0.1/",
        "http://localhost/",
        "http://app.localhost/",
        "https://private.ssrf.test/",
        "https://loopback.ssrf.test/",
    ],
)
async def test_given_the_default_guard_then_private_targets_are_refused_before_any_connection(
    url: str, guarded: Settings
) -> None:
    with pytest.raises(TargetRefused, match="Only public addresses can be scanned"):
        await scan(url, guarded)


async def test_a_redirect_to_an_unspecified_address_is_refused_even_when_private_targets_are_allowed(
    site_factory, scan_settings
) -> None:
    # 0.0.0.0 reaches the local machine on Linux: a classic SSRF bypass. The guard refuses it in every mode.
    site = site_factory(
        catalog.simple_site(site_factory.unique_host("to-zero"), routes={"/": Redirect("http://0.0.0.0:22/")})
    )
    with pytest.raises(TargetRefused, match=r"redirects to http://0\.0\.0\.0:22/.*unspecified"):
        await scan(site.url, scan_settings)


async def test_a_rebinding_name_is_resolved_once_and_every_connection_goes_to_the_first_answer(
    site_factory, dns_server, scan_settings
) -> None:
    name = site_factory.unique_host("rebind-pin")
    first = site_factory(catalog.simple_site(name))
    second = site_factory(catalog.simple_site(site_factory.unique_host("rebind-other")))
    dns_server.delete(name, "A")
    dns_server.add_rebinding(name, first.ip, second.ip)
    report = await scan(f"https://{name}/", scan_settings)
    assert report.status_code == 200
    assert first.requests, "the scan reached the first address"
    assert second.requests == [], "no request may follow a second, different DNS answer"
    assert len([q for q in dns_server.queries_for(name) if q.rdtype == "A"]) == 1


async def test_pinning_keeps_the_first_answer_of_a_public_then_private_name(dns_server, guarded) -> None:
    # Resolution only: the first answer is a real public address, so nothing may connect to it.
    dns_server.reset_rebinding(catalog.REBIND_HOST)
    pinner = Pinner(Resolver(guarded), guarded)
    assert await pinner.pin(catalog.REBIND_HOST) == catalog.REBIND_PUBLIC_IP
    assert await pinner.pin(catalog.REBIND_HOST) == catalog.REBIND_PUBLIC_IP  # no second lookup
    assert pinner.address_for(catalog.REBIND_HOST) == catalog.REBIND_PUBLIC_IP


# -- limits ---------------------------------------------------------------------------------------


def with_limits(settings: Settings, **limits: float) -> Settings:
    return dataclasses.replace(settings, limits=dataclasses.replace(ScanLimits(), **limits))


async def test_a_5_gb_page_is_read_only_up_to_the_body_limit(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("huge"), routes={"/": Huge()}))
    settings = with_limits(scan_settings, max_body_bytes=256 * 1024)
    report = await scan(site.url, settings)
    assert report.status_code == 200 and report.grade  # graded from the headers and the first 256 KiB


async def test_a_page_that_drips_one_byte_a_second_is_cut_at_the_read_budget(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("drip"), routes={"/": Drip(interval=1.0)}))
    report = await scan(site.url, with_limits(scan_settings, read_seconds=1.0, total_seconds=10))
    assert report.status_code == 200
    assert report.duration_ms < 10_000  # bounded by the scan budget, whatever the server does


async def test_a_redirect_loop_is_unreachable_with_a_clear_message(site_factory, scan_settings) -> None:
    host = site_factory.unique_host("loop")
    site = site_factory(catalog.simple_site(host, routes={"/": Redirect("/a"), "/a": Redirect("/")}))
    with pytest.raises(TargetUnreachable, match="redirect"):
        await scan(site.url, scan_settings)


async def test_a_server_that_never_answers_is_unreachable(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("stall"), routes={"/": Stall()}))
    with pytest.raises(TargetUnreachable):
        await scan(site.url, with_limits(scan_settings, read_seconds=0.5, connect_seconds=0.5))


async def test_binary_garbage_instead_of_http_is_unreachable_not_a_crash(site_factory, scan_settings) -> None:
    site = site_factory(catalog.simple_site(site_factory.unique_host("garbage"), routes={"/": Garbage()}))
    with pytest.raises(TargetUnreachable, match="invalid HTTP response"):
        await scan(site.url, scan_settings)


async def test_an_untrusted_certificate_is_a_finding_not_an_error(site_factory, scan_settings) -> None:
    site = site_factory(catalog.best_practices(site_factory.unique_host("selfsigned"), cert="self_signed"))
    body = (await scan(site.url, scan_settings)).to_dict()
    assert body["grade"] == "F"
    assert [f["check"] for f in body["tls"]["findings"]] == ["tls.cert_untrusted"]
    assert body["headers"]["Content-Security-Policy"]["status"] == "good"  # the rest is still graded
    # RFC 6797 §8.1: browsers ignore HSTS received over a connection with certificate errors.
    assert body["headers"]["Strict-Transport-Security"]["status"] == "weak"


# -- concurrency ----------------------------------------------------------------------------------


async def test_independent_parts_of_the_fetch_overlap_in_time(best_site, scan_settings) -> None:
    report = await scan(best_site.url, scan_settings)
    parts = {t["part"]: t for t in report.timings}
    main, tls, dns = parts["main"], parts["tls"], parts["dns"]
    assert tls["start_ms"] < main["end_ms"] and main["start_ms"] < tls["end_ms"]
    assert dns["start_ms"] < main["end_ms"]
    assert parts["http_upgrade"]["start_ms"] < main["end_ms"]


async def test_a_redirect_to_another_host_grades_the_certificate_the_page_is_served_with(
    site_factory, scan_settings
) -> None:
    final = site_factory(catalog.best_practices(site_factory.unique_host("www-final")))
    apex = site_factory(
        catalog.simple_site(site_factory.unique_host("apex"), routes={"/": Redirect(final.url)}, cert="expired")
    )
    report = await scan(apex.url, scan_settings)
    assert report.final_url == final.url
    body = report.to_dict()
    assert body["tls"]["host"] == final.host
    # the page's certificate is the section's, and the expired one visitors meet first at the address scanned
    # (which a browser stops at before the redirect) is a finding naming that host; so are the CBC suites the address
    # scanned accepts (OpenSSL's defaults, where the page's server offers Mozilla's intermediate suites alone)
    found = sorted(f["check"] for f in body["tls"]["findings"])
    assert found == ["tls.cert_expired", "tls.cert_valid", "tls.cipher_cbc"]
    for check in ("tls.cert_expired", "tls.cipher_cbc"):
        [finding] = [f for f in body["tls"]["findings"] if f["check"] == check]
        assert finding["notes"] == [
            note for note in finding["notes"] if note.startswith(f"{apex.host}, the address scanned, which redirects ")
        ]
    assert {t["part"] for t in report.timings} >= {"tls", "tls_final"}
