"""`python -m websec_app scan ...` run as a real process from the checkout, for the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_scan(*args: str, env: dict[str, str], stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The command's result; `env` is added to this process's environment (the fixture world's settings)."""
    return subprocess.run(
        [sys.executable, "-m", "websec_app", "scan", *args],
        env={**os.environ, **env},
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
