"""The GitHub Action (issue 17): action.yml runs scripts/github-action-scan.sh, which gates on the grade and
tells the workflow the grade and the report's path. The script is run here as the action runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement

from tests.fixtures.sites import RunningSite, Site, SiteFactory

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "github-action-scan.sh"


def _requirements(name: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            package, version = line.split("==")
            pins[package.lower()] = version
    return pins


def _run_action(
    env: dict[str, str], tmp_path: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    github_output = tmp_path / "github_output"
    github_output.write_text("")
    done = subprocess.run(
        ["bash", str(SCRIPT)],
        env={
            **os.environ,
            **env,
            **inputs,
            "WEBSEC_PYTHON": sys.executable,
            "GITHUB_OUTPUT": str(github_output),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
    return done, outputs


def test_the_action_declares_its_inputs_and_passes_them_as_environment_only() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert set(action["inputs"]) == {"url", "fail-under", "format", "output", "headers"}
    assert action["inputs"]["url"]["required"] is True
    assert action["runs"]["using"] == "composite"
    scan = next(step for step in action["runs"]["steps"] if step.get("id") == "scan")
    # No input is spliced into the shell text (a URL or header could carry a command): only into env
    assert "${{" not in scan["run"]
    assert scan["run"].endswith('scripts/github-action-scan.sh"')
    assert all(f"inputs.{name}" in str(scan["env"]) for name in action["inputs"])
    install = next(step for step in action["runs"]["steps"] if "requirements-scan.txt" in str(step.get("run", "")))
    assert install["shell"] == "bash"


def test_the_action_installs_the_same_pins_as_the_service_and_everything_a_scan_imports() -> None:
    scan_pins, all_pins = _requirements("requirements-scan.txt"), _requirements("requirements.txt")
    assert {name: all_pins.get(name) for name in scan_pins} == scan_pins

    # every third-party module a real scan loads (see test_import_budget) comes from those or their dependencies
    needed: set[str] = set()
    pending = list(scan_pins)
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name.lower())
    provided = {
        module for module, dists in metadata.packages_distributions().items() if {d.lower() for d in dists} & needed
    }
    probe = (
        "import json, sys, websec_app.cli.scan_cmd as c; c._without_httpx_cli();"  # as `scan` does first
        "import websec_app.scanner, websec_app.report_formats;"
        "import websec_app.scanner.fetch, websec_app.scanner.checks, websec_app.scanner.fetch._legacy_hello;"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    )
    third_party = {
        m for m in loaded if m in metadata.packages_distributions() and m not in ("websec_app", "_distutils_hack")
    }
    assert sorted(third_party - provided) == []


def test_the_action_fails_the_job_under_the_grade_and_reports_it(
    worst_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    done, outputs = _run_action(
        scan_env, tmp_path, WEBSEC_URL=worst_site.url, WEBSEC_FAIL_UNDER="B", WEBSEC_FORMAT="sarif"
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stdout.startswith("Grade F (")
    assert outputs == {"grade": "F", "report": "websec.sarif", "exit-code": "4"}
    assert json.loads((tmp_path / "websec.sarif").read_text())["version"] == "2.1.0"
    assert "grade **F**" in (tmp_path / "summary.md").read_text()


def test_the_action_passes_a_good_site_and_writes_where_it_is_told(
    best_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    done, outputs = _run_action(
        scan_env,
        tmp_path,
        WEBSEC_URL=best_site.url,
        WEBSEC_FAIL_UNDER="A",
        WEBSEC_FORMAT="junit",
        WEBSEC_OUTPUT="reports/websec.xml",
    )
    # the directory does not exist: the scan says so and fails (1), never a half-written success
    assert done.returncode == 1 and outputs["exit-code"] == "1"
    (tmp_path / "reports").mkdir()
    done, outputs = _run_action(
        scan_env,
        tmp_path,
        WEBSEC_URL=best_site.url,
        WEBSEC_FAIL_UNDER="A",
        WEBSEC_FORMAT="junit",
        WEBSEC_OUTPUT="reports/websec.xml",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs["grade"] == "A+"
    assert (tmp_path / "reports" / "websec.xml").read_text().startswith("<?xml")


def test_the_action_sends_the_headers_input_to_the_site_only_and_never_prints_them(
    best_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    done, outputs = _run_action(
        scan_env,
        tmp_path,
        WEBSEC_URL=best_site.url,
        WEBSEC_FORMAT="json",
        WEBSEC_HEADERS="X-Preview-Token: tok-123-secret\r\n\nX-Second: two\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs["grade"] == "A+"
    sent = [r for r in best_site.requests if r.header("X-Preview-Token") == "tok-123-secret"]
    assert sent and all(r.header("X-Second") == "two" for r in sent)
    assert "tok-123-secret" not in done.stdout + done.stderr + (tmp_path / "websec.json").read_text()


def test_the_report_output_is_empty_when_no_report_was_written(
    site_factory: SiteFactory, scan_env: dict[str, str], tmp_path: Path
) -> None:
    # Given an unreachable site, and a websec.sarif left in the workspace by an earlier job
    closed = site_factory(Site(names=(site_factory.unique_host("closed"),), tls=None, http=None))
    (tmp_path / "websec.sarif").write_text("stale")

    done, outputs = _run_action(scan_env, tmp_path, WEBSEC_URL=closed.url, WEBSEC_FAIL_UNDER="B")

    # Then the step fails with 3, names no report (an upload step must not pick up the stale file), and
    # the reason is in the log: on stderr, not in the report
    assert done.returncode == 3, done.stdout + done.stderr
    assert outputs == {"grade": "", "report": "", "exit-code": "3"}
    assert (tmp_path / "websec.sarif").read_text() == "stale"
    assert "error: Could not reach" in done.stderr


def _upload_steps(text: str) -> list[dict[str, Any]]:
    steps = yaml.safe_load(text)
    return [step for step in steps if "upload-sarif" in str(step.get("uses", ""))]


def test_the_documented_workflow_uploads_the_sarif_even_when_the_gate_fails() -> None:
    # A step without `if:` runs only when every step before it succeeded: under the grade, the scan step
    # fails and the findings would never be uploaded. README and action.yml show the same workflow.
    readme = (ROOT / "README.md").read_text()
    readme_snippet = next(block for block in readme.split("```yaml\n")[1:] if "upload-sarif" in block)
    # the workflow in action.yml's opening comment: its indented lines
    action_snippet = "\n".join(
        line[4:] for line in (ROOT / "action.yml").read_text().splitlines() if line[:4] == "#   "
    )
    for text in (readme_snippet.split("```")[0], action_snippet):
        (scan_step,) = [step for step in yaml.safe_load(text) if "websec" in str(step.get("uses", ""))]
        (upload,) = _upload_steps(text)
        assert "!cancelled()" in upload["if"] or "always()" in upload["if"], text
        assert f"steps.{scan_step['id']}.outputs.report" in upload["with"]["sarif_file"], text


def test_every_exit_status_of_the_scan_is_documented_for_the_action() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    described = action["outputs"]["exit-code"]["description"]
    assert {int(n) for n in re.findall(r"\b(\d) ", described)} == {0, 1, 2, 3, 4}
    readme = (ROOT / "README.md").read_text()
    exit_status = readme[readme.index("Exit status: ") :].split("\n\n", 1)[0]
    assert all(re.search(rf"\b{n} when", exit_status) for n in (0, 1, 2, 3, 4, 130)), exit_status
