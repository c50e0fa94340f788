"""The ports servers under test get (tests/fixtures/ports.py): outside the kernel's ephemeral range, unused,
never handed out twice."""

from __future__ import annotations

import socket
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
        third = next(
            port
            for port in range(LOWEST + 500, LOWEST + 1500)
            if port not in {held, given} and not handed_out(port) and bindable(port)
        )
        picks = iter([held, given, third])
        monkeypatch.setattr("random.randrange", lambda low, high: next(picks))
        # Then the third is handed out
        assert free_port() == third
    finally:
        listener.close()


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
