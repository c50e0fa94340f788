"""What `scan` writes where, run as a real process against the loopback fixture sites: stdout holds the report
and nothing else, an error of a non-JSON format goes to stderr, a closed pipe or Ctrl-C ends in one line and
the right status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.scan_process import ROOT, run_scan
from tests.fixtures.sites import RunningSite, Site, SiteFactory, Stall
from websec_app.cli.scan_cmd import EXIT_GRADE_TOO_LOW


def _own_lines(stderr: str) -> list[str]:
    """stderr without the settings' warnings about the test-only options (private targets, fixed clock)."""
    return [line for line in stderr.splitlines() if not line.startswith("WARNING websec_app.settings:")]


@pytest.fixture(scope="module")
def closed_site(site_factory: SiteFactory) -> RunningSite:
    """A name that resolves to an address where nothing listens: the scan ends with 3 (unreachable)."""
    return site_factory(Site(names=(site_factory.unique_host("closed"),), tls=None, http=None))


@pytest.mark.parametrize("output_format", ["junit", "sarif", "markdown", "text"])
def test_an_error_of_a_document_format_goes_to_stderr_and_stdout_stays_empty(
    closed_site: RunningSite, scan_env: dict[str, str], output_format: str
) -> None:
    # `scan URL --format junit > report.xml` on a site that is down: report.xml must not get a JSON error
    done = run_scan(closed_site.url, "--format", output_format, env=scan_env)
    assert done.returncode == 3
    assert done.stdout == ""
    errors = [line for line in _own_lines(done.stderr) if line.startswith("error: ")]
    assert len(errors) == 1 and closed_site.url.split("/")[2] in errors[0], done.stderr[-2000:]


def test_an_error_of_a_document_format_before_the_scan_goes_to_stderr_too(scan_env: dict[str, str]) -> None:
    done = run_scan("https://unused.test/", "--format", "sarif", "--fail-under", "Z", env=scan_env)
    assert done.returncode == 2 and done.stdout == ""
    assert _own_lines(done.stderr) == ["error: --fail-under takes one of A+, A, B, C, D, F, not 'Z'"]


def test_an_error_in_json_stays_a_json_object_on_stdout(closed_site: RunningSite, scan_env: dict[str, str]) -> None:
    done = run_scan(closed_site.url, env=scan_env)
    assert done.returncode == 3
    assert set(json.loads(done.stdout)) == {"error"}


@pytest.mark.parametrize(("gate", "status"), [(("--fail-under", "B"), EXIT_GRADE_TOO_LOW), ((), 0)])
def test_a_reader_that_went_away_ends_the_scan_with_the_gates_status_and_no_traceback(
    worst_site: RunningSite, scan_env: dict[str, str], gate: tuple[str, ...], status: int
) -> None:
    # `scan URL | head -1`, made certain: the pipe's read end is closed before the scan even starts
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = run_scan(worst_site.url, *gate, env=scan_env, stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == status, done.stderr[-2000:]
    lines = _own_lines(done.stderr)
    assert lines == (["grade F is worse than B (--fail-under)"] if gate else []), done.stderr[-2000:]


def test_ctrl_c_during_a_scan_ends_it_with_one_line_and_status_130(
    site_factory: SiteFactory, scan_env: dict[str, str]
) -> None:
    # A site that reads the request and never answers: the scan is waiting on it when Ctrl-C comes
    site = site_factory(Site(names=(site_factory.unique_host("stall"),), routes={"/": Stall()}, default=Stall()))
    process = subprocess.Popen(
        [sys.executable, "-m", "websec_app", "scan", site.url, "--format", "text"],
        env={**os.environ, **scan_env},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as in a terminal: SIGINT not ignored, whatever this test runner's own disposition is
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(1200):  # until the request has arrived (or the scan ended): a wait, not a measure
            if site.requests or process.poll() is not None:
                break
            time.sleep(0.05)
        assert site.requests, "the scan never reached the site"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr[-3000:]  # websec_app.cli.EXIT_INTERRUPTED, as a shell reports it
    assert stdout == ""
    assert _own_lines(stderr) == ["interrupted"], stderr[-3000:]


def test_a_scan_process_delivers_its_whole_report_and_runs_exit_handlers_though_it_skips_teardown(
    worst_site: RunningSite, scan_env: dict[str, str], tmp_path: Path
) -> None:
    # The process ends with os._exit (cli.run_as_process): a file is block-buffered, so a report not flushed
    # first would be lost, and an exit handler (logging's flush, a library's) must still run.
    script = (
        "import atexit, sys; atexit.register(sys.stderr.write, 'exit handler ran\\n'); "
        "from websec_app.cli import run_as_process; run_as_process()"
    )
    report = tmp_path / "report.json"
    with report.open("w") as stdout:
        done = subprocess.run(
            [sys.executable, "-c", script, "scan", worst_site.url, "--fail-under", "B"],
            env={**os.environ, **scan_env},
            cwd=ROOT,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == EXIT_GRADE_TOO_LOW, done.stderr[-2000:]
    assert json.loads(report.read_text())["grade"] == "F"
    assert _own_lines(done.stderr) == ["grade F is worse than B (--fail-under)", "exit handler ran"]
