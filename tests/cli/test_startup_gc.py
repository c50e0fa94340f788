"""The cycle collector is paused for a command-line scan's start-up and on again for the scan (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.sites import RunningSite

ROOT = Path(__file__).resolve().parents[2]

_UNIT = """
import gc, json
from websec_app import startup_gc
startup_gc.resume()  # without a pause: nothing
untouched = (gc.isenabled(), gc.get_freeze_count())
startup_gc.pause()
paused = gc.isenabled()
startup_gc.resume()
print(json.dumps({"untouched": untouched, "paused": paused, "after": [gc.isenabled(), gc.get_freeze_count() > 0]}))
"""

#: Runs the command line and reports whether the collector was on when grading ran and when the process ended.
_CLI = """
import atexit, gc, json, runpy, sys
sys.modules["httpx._main"] = None  # as the scan command does before httpx loads
import websec_app.scanner.scan
scan_module = sys.modules["websec_app.scanner.scan"]  # the package's `scan` attribute is the function
grade = scan_module.grade_snapshot
seen = []
def watched(*args, **kwargs):
    seen.append(gc.isenabled())
    return grade(*args, **kwargs)
scan_module.grade_snapshot = watched
def report():  # an exit handler: the scan process ends with os._exit once they have run (cli.run_as_process)
    state = {"grading": seen, "at_exit": gc.isenabled(), "frozen": gc.get_freeze_count() > 0}
    print(json.dumps(state), file=sys.stderr)
atexit.register(report)
sys.argv = ["websec_app", *sys.argv[1:]]
runpy.run_module("websec_app", run_name="__main__", alter_sys=True)
"""


def _run(code: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in env.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_pause_and_resume() -> None:
    done = _run(_UNIT, [], dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"untouched": [True, 0], "paused": False, "after": [True, True]}


def test_a_cli_scan_runs_with_the_collector_on_after_start_up(best_site: RunningSite, scan_env: dict[str, str]) -> None:
    # When a site is scanned from the command line in a fresh process
    done = _run(_CLI, ["scan", best_site.url], {**os.environ, **scan_env})

    # Then the report is printed, grading ran with the collector on again, and start-up was frozen
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["grade"] == "A+"
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {"grading": [True], "at_exit": True, "frozen": True}


def test_an_invalid_url_leaves_the_collector_on() -> None:
    done = _run(_CLI, ["scan", "ftp://example.com/"], dict(os.environ))
    assert done.returncode == 2
    assert json.loads(done.stderr.strip().splitlines()[-1])["at_exit"] is True
