"""`scan --format sarif` (issue 17): SARIF 2.1.0 valid against the OASIS schema, and clean under Microsoft's
SARIF validator with GitHub code scanning's rules, for a real scan of the fixture sites."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from websec_app.report_formats import render_sarif
from websec_app.report_formats.sarif import artifact_path
from websec_app.scanner.report import report_items

ROOT = Path(__file__).resolve().parents[2]
# Both come from the npm package @microsoft/sarif-multitool-linux, which `make setup-test` unpacks.
SARIF_DIR = ROOT / ".tools" / "sarif" / "package"
SCHEMA = SARIF_DIR / "sarif-2.1.0.json"
MULTITOOL = SARIF_DIR / "Sarif.Multitool"

needs_tools = pytest.mark.skipif(
    not SCHEMA.exists() and not os.environ.get("CI"), reason="`make setup-test` unpacks the SARIF tools"
)


def _schema_errors(log: dict[str, Any]) -> list[str]:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(log)]


def _multitool_problems(path: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """Errors and warnings Microsoft's validator reports, SARIF rules and GitHub's (GH10xx) alike."""
    out = tmp_path / "validation.sarif"
    done = subprocess.run(
        [
            str(MULTITOOL),
            "validate",
            str(path),
            "--output",
            str(out),
            "--rule-kind",
            "Sarif;Gh",
            "--log",
            "ForceOverwrite",
        ],
        env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results: list[dict[str, Any]] = json.loads(out.read_text())["runs"][0].get("results", [])
    return [r for r in results if r.get("level", "warning") in ("error", "warning")]


@needs_tools
def test_the_sarif_of_a_real_scan_is_valid_against_the_sarif_2_1_0_schema(worst_body) -> None:
    log = json.loads(render_sarif(worst_body, information_uri="https://websec.example/"))
    assert _schema_errors(log) == []


@needs_tools
def test_the_schema_check_itself_catches_a_broken_log(worst_body) -> None:
    # A check that cannot fail proves nothing: break the log the way a bug would
    log = json.loads(render_sarif(worst_body))
    log["runs"][0]["results"][0]["level"] = "critical"  # SARIF levels are none/note/warning/error
    assert any("critical" in error for error in _schema_errors(log))


@needs_tools
def test_microsofts_validator_with_githubs_rules_finds_nothing_to_fix(worst_body, tmp_path) -> None:
    path = tmp_path / "websec.sarif"
    path.write_text(render_sarif(worst_body, information_uri="https://websec.example/"))
    assert _multitool_problems(path, tmp_path) == []


@needs_tools
def test_microsofts_validator_notices_a_result_without_a_region(worst_body, tmp_path) -> None:
    # Code scanning places a result by its region's start line; the validator asks for it (SARIF2017)
    log = json.loads(render_sarif(worst_body, information_uri="https://websec.example/"))
    del log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    path = tmp_path / "broken.sarif"
    path.write_text(json.dumps(log))
    assert [p["ruleId"] for p in _multitool_problems(path, tmp_path)] == ["SARIF2017"]


def test_one_result_per_issue_with_its_level_from_the_severity_and_the_fix_as_help(worst_body) -> None:
    run = json.loads(render_sarif(worst_body))["runs"][0]
    results, rules = run["results"], run["tool"]["driver"]["rules"]
    issues = [item for item in report_items(worst_body) if item.is_issue]

    assert len(results) == len(issues) == worst_body["issue_counts"]["total"]
    assert len({rule["id"] for rule in rules}) == len(rules)
    for result in results:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
        assert result["level"] == rule["defaultConfiguration"]["level"]
        assert result["partialFingerprints"]["websecFinding/v1"]
        assert result["properties"]["page_url"] == worst_body["final_url"]
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["cors.origin_reflected_credentials"] == "error"  # critical
    assert levels["headers/Content-Security-Policy"] == "warning"  # important
    csp = next(rule for rule in rules if rule["id"] == "headers/Content-Security-Policy")
    assert csp["help"]["text"].startswith("Send the response header Content-Security-Policy")
    assert csp["properties"]["security-severity"] == "7.0"


def test_a_good_site_has_fewer_results_than_a_bad_one_and_the_same_fingerprints_every_time(
    best_body, worst_body
) -> None:
    best = json.loads(render_sarif(best_body))["runs"][0]["results"]
    worst = json.loads(render_sarif(worst_body))["runs"][0]["results"]
    assert len(best) == best_body["issue_counts"]["total"] < len(worst)
    again = json.loads(render_sarif(worst_body))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in again] == [r["partialFingerprints"] for r in worst]


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://www.example.com/pricing?plan=pro", "www.example.com/pricing"),
        ("https://example.com/", "example.com/"),
        ("https://example.com:8443/a b", "example.com_8443/a%20b"),
        # an address that is already percent-encoded is not encoded a second time ("%2520")
        ("https://example.com/a%20b/%C3%BC", "example.com/a%20b/%C3%BC"),
        ("https://example.com/r%c3%a9sum%C3%A9?q=%20", "example.com/r%c3%a9sum%C3%A9"),
        ("https://example.com/a%2Fb/ü", "example.com/a%2Fb/%C3%BC"),  # an encoded slash stays encoded
        ("https://example.com/100%/%zz", "example.com/100%25/%25zz"),  # a lone % is not an escape
        ("https://[2001:db8::1]/", "2001_db8__1/"),
    ],
)
def test_the_location_is_the_pages_host_and_path_as_a_relative_path(url: str, path: str) -> None:
    assert artifact_path(url) == path


def test_what_the_site_sent_stays_text_in_the_sarif_help(worst_body) -> None:
    from markdown_it import MarkdownIt

    hostile = json.loads(json.dumps(worst_body))
    finding = hostile["cookies"]["findings"][0]
    finding["fix"] = "Set Secure on [session](javascript:alert(1)) <img src=x onerror=alert(1)> @octocat"
    rules = json.loads(render_sarif(hostile))["runs"][0]["tool"]["driver"]["rules"]
    help_markdown = next(r for r in rules if r["id"] == finding["check"])["help"]["markdown"]
    html = MarkdownIt("commonmark").render(help_markdown)
    assert "<a " not in html and "<img" not in html and "@octocat" not in help_markdown
