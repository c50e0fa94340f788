"""`scan --fail-under GRADE` and `--format` (issue 17): the CLI as a CI gate, run as a real process."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.cli.scan_process import run_scan
from tests.fixtures.sites import RunningSite
from websec_app.cli.scan_cmd import EXIT_GRADE_TOO_LOW


def test_a_grade_worse_than_the_gate_exits_4_and_still_prints_the_report(
    worst_site: RunningSite, scan_env: dict[str, str]
) -> None:
    done = run_scan(worst_site.url, "--fail-under", "B", env=scan_env)
    assert done.returncode == EXIT_GRADE_TOO_LOW == 4, done.stderr[-2000:]
    assert json.loads(done.stdout)["grade"] == "F"
    assert "grade F is worse than B" in done.stderr


def test_a_grade_at_or_above_the_gate_exits_0(best_site: RunningSite, scan_env: dict[str, str]) -> None:
    for gate in ("A+", "a+", "C"):  # the grade itself passes; the gate is read case-insensitively
        done = run_scan(best_site.url, "--fail-under", gate, "--format", "text", env=scan_env)
        assert done.returncode == 0, (gate, done.stderr[-2000:])
        assert "Grade A+" in done.stdout


def test_an_unknown_gate_grade_is_refused_before_any_scan(scan_env: dict[str, str]) -> None:
    done = run_scan("https://unused.test/", "--fail-under", "Z", env=scan_env)
    assert done.returncode == 2
    assert json.loads(done.stdout) == {"error": "--fail-under takes one of A+, A, B, C, D, F, not 'Z'"}


def test_each_ci_format_prints_a_document_of_its_kind(worst_site: RunningSite, scan_env: dict[str, str]) -> None:
    sarif = run_scan(worst_site.url, "--format", "sarif", env=scan_env)
    assert sarif.returncode == 0, sarif.stderr[-2000:]
    assert json.loads(sarif.stdout)["version"] == "2.1.0"

    junit = run_scan(worst_site.url, "--format", "junit", "--fail-under", "D", env=scan_env)
    assert junit.returncode == 4
    assert ET.fromstring(junit.stdout.split("\n", 1)[1]).tag == "testsuites"

    markdown = run_scan(worst_site.url, "--format", "markdown", env=scan_env)
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("### websec: grade F")
