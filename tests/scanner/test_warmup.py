"""The first scan of a process imports the grading side in a background thread (scanner/warmup.py, issue 14)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys
from websec_app.scanner import warmup
interval = sys.getswitchinterval()
before = "websec_app.scanner.checks" in sys.modules
warmup.start()
warmup.wait()
warmup.start()  # once per process
print(json.dumps({
    "before": before,
    "after": [m for m in warmup._MODULES if m not in sys.modules],
    "interval_restored": sys.getswitchinterval() == interval,
}))
"""


def test_the_warmup_imports_the_grading_side_once_and_restores_the_switch_interval() -> None:
    # Given a fresh process that imported the scanner (its fetch side only)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)

    # Then the checks were not loaded before the warm-up, every module is after it, and the thread
    # left the interpreter's switch interval as it found it
    assert result == {"before": False, "after": [], "interval_restored": True}
