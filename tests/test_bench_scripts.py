"""Every benchmark starts both ways issue 14 names, `python -m bench.NAME` and `python bench/NAME.py` from the
checkout (a script run puts bench/ first on sys.path, not the checkout), and imports only what exists:
`--help` loads the whole module, so a renamed store function breaks this test, not the next person who
measures. The figures themselves are the benches' job; tests never assert on time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHES = sorted(path.stem for path in (REPO / "bench").glob("*_bench.py"))


def test_the_benches_are_found() -> None:
    assert {"cli_bench", "scan_bench", "serve_bench", "claim_bench"} <= set(BENCHES)


@pytest.mark.parametrize("name", BENCHES)
@pytest.mark.parametrize("how", ["file", "module"])
def test_a_bench_starts_as_a_file_and_as_a_module(name: str, how: str, tmp_path: Path) -> None:
    if how == "file":
        command, cwd = [sys.executable, str(REPO / "bench" / f"{name}.py"), "--help"], tmp_path
    else:
        command, cwd = [sys.executable, "-m", f"bench.{name}", "--help"], REPO
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
