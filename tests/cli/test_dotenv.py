"""`.env` is still read when there is one, though python-dotenv is imported only then (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = """
import sys
from websec_app.settings import get_settings
print(get_settings().scan_queue, "dotenv" in sys.modules)
"""


def _settings_in(directory: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBSEC_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=directory, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_dotenv_file_is_read(tmp_path: Path) -> None:
    # Given a .env in the working directory of a session without a script file (python -c)
    (tmp_path / ".env").write_text("WEBSEC_SCAN_QUEUE=7\n")

    # Then the settings read it
    assert _settings_in(tmp_path) == "7 True"


def test_without_a_dotenv_file_python_dotenv_is_not_imported(tmp_path: Path) -> None:
    # Given no .env anywhere above the working directory or the package (the checkout has none)
    if any((d / ".env").exists() for d in (*tmp_path.parents, *Path(__file__).resolve().parents)):
        pytest.skip("a .env exists above the working directory or the checkout")

    # Then the defaults apply and python-dotenv stays unloaded
    queue, loaded = _settings_in(tmp_path).split()
    assert queue.isdigit() and loaded == "False"
