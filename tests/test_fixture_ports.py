"""The ports servers under test get (tests/fixtures/ports.py): outside the kernel's ephemeral range, unused,
never handed out twice, by this process or by another test process on the machine."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.ports import LOWEST, bindable, ephemeral_low, free_port, handed_out


def test_a_port_is_below_the_ephemeral_range_and_free() -> None:
    high = ephemeral_low()
    assert high is not None, "this suite runs on Linux"
    ports = [free_port() for _ in range(50)]
    assert all(LOWEST <= port < high for port in ports), ports
    assert len(set(ports)) == len(ports)
    for port in ports:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))  # what the server it is for does next


def test_a_port_in_use_or_handed_out_before_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a listener on one port and another port already handed out
    listener = socket.socket()
    listener.bind(("127.0.0.1", free_port()))
    listener.listen()
    held = listener.getsockname()[1]
    given = free_port()
    try:
        assert not bindable(held)
        # When the random picks come up with those two before a third (one this process has not handed out: in a
        # whole suite run, earlier tests' servers took some ports of any range)
        others = _unused_ports(exclude={held, given})
        picks = iter([held, given, *others])
        monkeypatch.setattr("random.randrange", lambda low, high: next(picks))
        # Then neither is handed out, but the first of the others that no parallel session has claimed
        assert free_port() in others
    finally:
        listener.close()


def test_a_port_another_test_process_has_claimed_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a port another test process (say, the other clock pass of make test-clock) has handed out, but
    # whose server has not bound it yet
    others = _unused_ports(exclude=set())
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_CLAIM, *map(str, others[:50])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert holder.stdout is not None
        claimed = int(holder.stdout.readline())
        rest = [port for port in others if port != claimed]
        assert bindable(claimed)
        # When this process's random pick comes up with it first
        picks = iter([claimed, *rest])
        monkeypatch.setattr("random.randrange", lambda low, high: next(picks))
        # Then it hands out another
        port = free_port()
        assert port != claimed and port in rest
    finally:
        holder.communicate("")  # its end of input lets it exit, and its claim goes with it


_HOLD_CLAIM = """
import sys
from tests.fixtures.machine_claims import MachineClaims
claims = MachineClaims("ports")
print(next(port for port in sys.argv[1:] if claims.claim(port)), flush=True)  # one no other session holds
sys.stdin.read()
"""


def _unused_ports(exclude: set[int]) -> list[int]:
    """Ports of a stretch of the range that this process has not handed out and nothing has bound (in a whole
    suite run, earlier tests' servers took some ports of any range)."""
    return [
        port
        for port in range(LOWEST + 500, LOWEST + 1500)
        if port not in exclude and not handed_out(port) and bindable(port)
    ]


def test_without_a_readable_range_the_kernel_picks(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-file"
    assert ephemeral_low(missing) is None
    port = free_port(missing)
    assert bindable(port)
    narrow = tmp_path / "range"
    narrow.write_text(f"{LOWEST + 10}\t60999\n")  # too little room below the range: the kernel's pick
    high = ephemeral_low()
    assert high is not None
    assert free_port(narrow) >= high
