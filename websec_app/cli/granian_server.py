"""Granian's process server, with a worker counted as stopped once it has exited, whoever reaped it.

granian 2.8.7 watches each worker from a thread of its own (`AbstractWorker._watcher`: `Process.join()`, a
blocking `waitpid`). At SIGTERM, `_stop_workers` joins the worker with the kill timeout and then asks
`Process.is_alive()`. When the watcher thread has reaped the exited worker but not yet stored its exit code,
that second `waitpid` fails (ECHILD) and `is_alive()` answers True; granian sleeps 1 ms for the watcher to
catch up and, on a busy machine, logs "Killing worker-1 after it refused to gracefully stop" and sends
SIGKILL to the pid of a process that had already ended. A worker that stopped in a few hundred ms was
reported as killed: about 1 SIGTERM in 100 under load (tests/api/test_serve_api.py failed so in CI), and
6 in 100 in a bare reproduction of the two threads.

Here a worker has exited when its sentinel says so (a pipe whose other end the worker holds until it exits),
which does not depend on who called `waitpid` first. Only `_stop_workers` is replaced: serve-api respawns
no worker (no reload, lifetime or memory limit), so granian's `_respawn_workers`, which has the same check,
never runs here. tests/cli/test_granian_server.py tells when an upgrade of granian no longer needs this.
"""

from __future__ import annotations

import time
from multiprocessing.connection import wait

from granian._granian import BUILD_GIL
from granian.log import logger
from granian.server import MPServer, MTServer


class ProcessServer(MPServer):
    """MPServer whose stop reads a worker's exit from its sentinel (module docstring)."""

    def _stop_workers(self) -> None:
        for worker in self.wrks:
            worker.terminate()  # type: ignore[no-untyped-call]  # granian's methods are not annotated
        started = time.monotonic()
        for worker in self.wrks:
            if self.workers_kill_timeout:
                left = max(self.workers_kill_timeout - (time.monotonic() - started), 0.0)
                if not wait([worker.inner.sentinel], left):
                    logger.warning(f"Killing worker-{worker.idx + 1} after it refused to gracefully stop")
                    worker.kill()  # type: ignore[no-untyped-call]
            worker.join()  # type: ignore[no-untyped-call]  # reaps it, unless the watcher thread has (then it returns at once)
            logger.info(f"Stopped worker-{worker.idx + 1}")
        self.wrks.clear()


#: What `granian.Granian` is, with the fix where granian runs workers as processes (a GIL build of Python).
Granian: type[MPServer | MTServer] = ProcessServer if BUILD_GIL else MTServer
