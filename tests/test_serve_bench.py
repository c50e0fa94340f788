"""bench/serve_bench.py accounts for the whole machine: the server's, the fixture sites' and its own CPU
per report, which add up to the machine's figure and its ceiling. A short real burst on loopback; the
figures' sizes are the bench's business, so only their bookkeeping is asserted, never a time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import serve_bench

REPO = Path(__file__).resolve().parents[1]
MACHINE_LINE = re.compile(
    r"machine CPU +(?P<machine>[\d.]+) ms/report \(server (?P<server>[\d.]+) \+ sites (?P<sites>[\d.]+)"
    r" \+ this client (?P<client>[\d.]+)\): at most (?P<ceiling>\d+) reports/s on (?P<cores>\d+) cores"
)


def test_a_burst_prints_the_machine_cpu_of_each_report_and_its_ceiling() -> None:
    command = [sys.executable, "-m", "bench.serve_bench", "--total", "20", "--concurrency", "4", "--warmup", "1"]
    done = subprocess.run(
        [*command, "--rounds", "1", "--site", "best"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "statuses {200: 20}; transport errors 0" in done.stdout, done.stdout
    found = MACHINE_LINE.search(done.stdout)
    assert found is not None, done.stdout
    parts = {name: float(value) for name, value in found.groupdict().items()}
    # Each part was measured from its own process: 20 scans cost every one of them some CPU.
    assert parts["server"] > 0 and parts["sites"] > 0 and parts["client"] > 0
    assert parts["server"] + parts["sites"] + parts["client"] == pytest.approx(parts["machine"], abs=0.2)
    ceiling = parts["cores"] * 1000 / parts["machine"]
    assert parts["ceiling"] == pytest.approx(ceiling, abs=ceiling * 0.01 + 1)


def test_the_target_line_leaves_the_server_what_the_sites_and_client_do_not_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ours = {"cpu_ms_per_report": 19.6, "sites_cpu_ms_per_report": 8.0, "client_cpu_ms_per_report": 1.5}
    serve_bench._print_target("now", ours, "before", {"reports_per_s": 40.0}, 2.5)

    line = capsys.readouterr().out
    budget = serve_bench.CORES * 1000 / 100  # 2.5 x 40 reports/s
    assert f"is 100/s: at most {budget:.1f} ms of machine CPU a report" in line
    assert f"at most {budget - 9.5:.1f} ms of server CPU" in line
    assert "(now 19.6 ms)" in line
