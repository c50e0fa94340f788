"""`make test` runs the suite in two pytest-xdist workers; every test that starts Reflex must run in the same
one (tests/conftest.py, REFLEX_STARTS), or two Reflex starts at once rewrite `reflex.lock/` under each other."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REFLEX_STARTS

ROOT = Path(__file__).resolve().parents[1]
#: What starts `make run` in a test: tests/fixtures/processes.py's helpers (the UI's servers call the second).
STARTS_REFLEX = re.compile(r"\bmake_run(_argv)?\b")


def test_every_test_file_that_starts_reflex_is_in_the_reflex_group() -> None:
    starters = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != "processes.py" and STARTS_REFLEX.search(path.read_text())
    }

    assert {"tests/ui/conftest.py", "tests/test_app_smoke.py", "tests/jobs/test_embedded.py"} <= starters
    assert [path for path in sorted(starters) if not path.startswith(REFLEX_STARTS)] == []


def test_under_two_workers_the_reflex_tests_run_in_one_and_the_others_in_either() -> None:
    # Given two test files of tests/ui (quick ones, that start nothing) and a file of other tests
    ui = ["tests/ui/test_view.py", "tests/ui/test_history_view.py"]
    others = "tests/scanner/records/test_structured_fields.py"

    # When pytest runs them in two workers, as `make test` does
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider", *ui, others],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    # Then every test of tests/ui ran in the same worker, and the other worker ran others meanwhile (the xdist_group
    # marks this replaced grouped nothing under pytest 9.2: the UI tests ran in both)
    assert run.returncode == 0, run.stdout[-2000:]
    ran = re.findall(r"^\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", run.stdout, re.MULTILINE)
    ui_workers = {worker for worker, test in ran if test.startswith("tests/ui/")}
    assert len([test for _, test in ran if test.startswith("tests/ui/")]) > 20 and len(ui_workers) == 1, ran
    assert {worker for worker, test in ran if test.startswith(others)} - ui_workers, ran
