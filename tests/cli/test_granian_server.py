"""serve-api's granian server counts a worker as stopped once it has exited, whoever reaped it
(websec_app/cli/granian_server.py).

The race is made certain here, not waited for: the test reaps the exited worker itself, as granian's watcher
thread does, before the server's stop looks at it. Real worker processes, real signals.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from granian.log import logger as granian_logger
from granian.server import MPServer
from granian.server.mp import WorkerProcess

from websec_app.cli.granian_server import ProcessServer

KILLED = "refused to gracefully stop"


@pytest.fixture
def granian_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """granian's logger does not propagate to the root logger, where caplog listens."""
    granian_logger.addHandler(caplog.handler)
    previous = granian_logger.level
    granian_logger.setLevel(logging.INFO)
    try:
        yield caplog
    finally:
        granian_logger.removeHandler(caplog.handler)
        granian_logger.setLevel(previous)


def _ends_at_once() -> None:
    pass


def _ignores_sigterm(ready: multiprocessing.synchronize.Event) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(60)


def _worker(target: object, *args: object) -> WorkerProcess:
    """A granian worker process, started without granian's watcher thread (the test plays it)."""
    worker = WorkerProcess(parent=None, idx=0, target=target, args=args)
    worker.inner.start()
    return worker


def _exited_and_reaped_elsewhere() -> tuple[WorkerProcess, list[int]]:
    """A worker that has exited and been reaped, and the pids its `kill` was asked to signal (recorded, not sent:
    never signal a pid that is no longer ours)."""
    worker = _worker(_ends_at_once)
    pid, _ = os.waitpid(worker.inner.pid, 0)  # what granian's watcher thread does: Process.join() -> waitpid
    assert pid == worker.inner.pid
    killed: list[int] = []
    worker.kill = lambda: killed.append(pid)
    return worker, killed


def test_a_worker_that_exited_is_stopped_even_when_another_thread_reaped_it(
    granian_log: pytest.LogCaptureFixture,
) -> None:
    # Given a worker that ended by itself and that granian's watcher thread has already reaped
    worker, killed = _exited_and_reaped_elsewhere()
    server = SimpleNamespace(wrks=[worker], workers_kill_timeout=4)

    # When serve-api's server stops its workers
    ProcessServer._stop_workers(server)  # type: ignore[arg-type]

    # Then the worker is stopped, not killed, and the log says so
    assert killed == []
    assert KILLED not in granian_log.text
    assert "Stopped worker-1" in granian_log.text
    assert server.wrks == []


def test_granian_itself_still_reports_such_a_worker_as_killed(granian_log: pytest.LogCaptureFixture) -> None:
    # Why ProcessServer exists: granian 2.8.7's own stop, in the same situation, takes the exited worker for a
    # stuck one and kills it. When this fails after an upgrade, granian has fixed it: drop granian_server.py.
    worker, killed = _exited_and_reaped_elsewhere()
    server = SimpleNamespace(wrks=[worker], workers_kill_timeout=4)

    MPServer._stop_workers(server)  # type: ignore[arg-type]

    assert killed == [worker.inner.pid]
    assert KILLED in granian_log.text


def test_a_worker_that_ignores_sigterm_is_still_killed_after_the_timeout(
    granian_log: pytest.LogCaptureFixture,
) -> None:
    # Given a worker that ignores SIGTERM (a busy or stuck worker, as issue 12's hostile page made one)
    ready = multiprocessing.get_context("fork").Event()
    worker = _worker(_ignores_sigterm, ready)
    assert ready.wait(30)
    server = SimpleNamespace(wrks=[worker], workers_kill_timeout=0.2)

    # When the server stops its workers
    ProcessServer._stop_workers(server)  # type: ignore[arg-type]

    # Then it is killed once the timeout has passed, and the log says why
    assert worker.inner.exitcode == -signal.SIGKILL
    assert KILLED in granian_log.text
    assert "Stopped worker-1" in granian_log.text
