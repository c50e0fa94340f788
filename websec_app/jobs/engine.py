"""The task engine behind the scans: procrastinate on PostgreSQL, a plain asyncio queue on SQLite.

One `JobEngine` per Runtime. It defers a scan job (only its id travels: the `scan_jobs` row is the job's
truth, websec_app/store/scan_jobs.py), runs workers (this process's own, `WEBSEC_SCAN_WORKERS`, and
`python -m websec_app worker`), lets requests wait for a job's end, and measures the cluster's load for
admission.

- PostgreSQL (several processes and machines): the queue is procrastinate's table. A worker takes a job
  with `SELECT ... FOR UPDATE SKIP LOCKED` and marks it done only when the task returns; a worker killed
  mid-scan stops its heartbeat, and the periodic `retry_stalled` task (deferred once per tick across the
  whole cluster: procrastinate's periodic jobs are unique per tick in the database) puts its jobs back
  in the queue for another worker.
- SQLite (`make run`: one process, no server): a plain asyncio queue in this process's memory, worked
  by its own workers (`LocalQueue`), with the same tasks: scans, callbacks retried with exponential
  backoff, monitor runs, and the periodic monitor tick. Nothing outlives the process there, and neither
  do the requests waiting on it, so procrastinate's bookkeeping (its in-memory connector: job records,
  locks, status updates, ~5 ms of CPU a report) bought nothing. Several processes on one SQLite file
  (`serve-api --workers 2`) each run the jobs they created: a job's row names the queue that holds it
  (`queue_id`), and each process's ticker renews its queue's lease (`embedded_queues`, on the machine's
  clock, which they all read alike, not the service's: `lease_now`), so that one process's sweep of
  abandoned jobs leaves a live sibling's jobs alone (`queue_gone_after`).

Waiting: a request registers its waiter when it submits (`submit(..., waiter=True)`), so a job cannot end
unseen before the wait begins; its future is woken at once by a job finishing in this process, and, on a
shared queue, by one shared poll of the `scan_jobs` rows every `POLL_SECONDS` for jobs finishing elsewhere
(one query per process, however many requests wait). Embedded, every job ends in this process.

Event loops: procrastinate's connectors (and asyncio queues) bind to the loop that opens them, so the
engine keeps its parts per loop and opens them on first use in that loop (a serving process has one
loop; tests have several).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from websec_app.clock import MachineClock, SystemMachineClock

if TYPE_CHECKING:
    from datetime import datetime

    import procrastinate

    from websec_app.store import Database
    from websec_app.store.models import ScanJob
    from websec_app.store.scan_jobs import ClusterLoad

log = logging.getLogger(__name__)

#: Attempts of one callback (websec_app/jobs/callbacks.py says why it is a task).
CALLBACK_ATTEMPTS = 6
#: The end of an embedded job its process stopped before it ended (its queue was in that process's memory).
SERVER_STOPPED_STATUS = 503
SERVER_STOPPED = "The server stopped before this scan ended; nothing was counted. Please try again."

#: The engine's queue for scans, and the task names (stable: they are stored in the queue).
SCAN_QUEUE = "scans"
SCAN_TASK = "websec.scan_job"
RETRY_STALLED_TASK = "websec.retry_stalled"
CALLBACK_TASK = "websec.callback"
#: Monitoring (issue 17): the tick that schedules due monitor runs, once a minute across the cluster, and
#: one run.
MONITOR_TICK_TASK = "websec.monitor_tick"
MONITOR_RUN_TASK = "websec.monitor_run"
MONITOR_TICK_CRON = "* * * * *"
#: How often a worker says it is alive to procrastinate (and to `scan_workers`), and after how long
#: without a word it is taken for dead and its jobs go back in the queue.
HEARTBEAT_SECONDS = 2.0
STALLED_AFTER_SECONDS = 8.0
#: The stalled-job check, once per tick across the cluster (croniter's sixth field is seconds).
RETRY_STALLED_CRON = "* * * * * */4"
#: How often waiting requests look for jobs finished in other processes.
POLL_SECONDS = 0.2
#: How long a load measure is reused by a process's admission before it is read again.
LOAD_TTL_SECONDS = 0.5
#: Embedded: at each tick of its ticker a process says its queue is alive for this many ticks more, and at
#: least QUEUE_GONE_MIN_SECONDS (`embedded_queues.alive_until`, on the machine's clock, not the service's:
#: `lease_now`); past that, silent, it is taken for gone and another process's sweep ends the jobs it held.
#: Several ticks and a floor, so that a tick that ran late (its work, a write waiting for SQLite's lock) is
#: not taken for a death: a live process's jobs ended failed would be run anyway, their units given back. A
#: lease rather than a heartbeat judged by the reader: each process says how long its own ticks may take.
QUEUE_GONE_AFTER_TICKS = 3
QUEUE_GONE_MIN_SECONDS = 60.0
#: A queue gone this long is forgotten (its row deleted; forgotten is as gone).
QUEUE_FORGOTTEN_AFTER_SECONDS = 3600.0
#: The longest lease a queue takes (its ticker's period is at most a minute), and so how long after a
#: forward step of the machine's clock a lease renewed before it may still be on the old time.
LONGEST_LEASE_SECONDS = QUEUE_GONE_AFTER_TICKS * 60.0
#: A change between the machine's clock and its monotonic clock beyond this is a step of the clock, not
#: NTP's slewing (at most 0.5 ms a second).
CLOCK_STEP_SECONDS = 2.0

JobHandler = Callable[[str], Awaitable[None]]
#: The monitor tick, one monitor run, and the work before each tick; what they return is not used.
MonitorTick = Callable[[], Awaitable[object]]
MonitorRunHandler = Callable[[int], Awaitable[object]]
Upkeep = Callable[[], Awaitable[object]]


def procrastinate_conninfo(database_url: str) -> str | None:
    """The libpq URL of a PostgreSQL store (procrastinate speaks psycopg 3), or None for SQLite."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql://" + database_url[len(prefix) :]
    return None


class LocalQueue:
    """Embedded mode's queue (SQLite, one process): tasks as coroutine factories, worked in this loop by
    `concurrency` workers (`work`), FIFO. What procrastinate's in-memory connector gave that is kept:
    the bound on tasks run at once, callbacks retried with exponential backoff, and a task's failure
    logged without stopping the worker."""

    def __init__(self) -> None:
        self._tasks: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()

    def put(self, task: Callable[[], Awaitable[None]]) -> None:
        self._tasks.put_nowait(task)

    def put_retried(
        self,
        task: Callable[[], Awaitable[None]],
        attempts: int,
        name: str,
        first_wait: float = 2.0,
        *,
        given_up: Callable[[], Awaitable[object]] | None = None,
        ended: Callable[[], object] | None = None,
    ) -> None:
        """`task`, run up to `attempts` times in all while it raises, `first_wait * 2 ** (n - 1)` seconds
        after its n-th failure: 2, 4, 8, 16, 32 s by default, as procrastinate's
        RetryStrategy(exponential_wait=2) waits for the same task on PostgreSQL. `given_up` runs after the
        last failure; `ended` once the task succeeded or was given up on."""

        async def attempt(n: int) -> None:
            try:
                await task()
            except Exception:  # noqa: BLE001 - retried, or given up on; the traceback is logged
                if n >= attempts:
                    log.exception("%s failed %d times: given up", name, n)
                    try:
                        if given_up is not None:
                            await given_up()
                    finally:
                        if ended is not None:
                            ended()
                    return
                wait = first_wait * 2 ** (n - 1)
                log.warning("%s failed (attempt %d of %d), retried in %g s", name, n, attempts, wait, exc_info=True)
                asyncio.get_running_loop().call_later(wait, self._tasks.put_nowait, lambda: attempt(n + 1))
                return
            if ended is not None:
                ended()

        self.put(lambda: attempt(1))

    async def work(self, concurrency: int) -> None:
        """Run the queued tasks, `concurrency` at once, until cancelled."""

        async def one_worker() -> None:
            while True:
                task = await self._tasks.get()
                try:
                    await task()
                except Exception:  # noqa: BLE001 - one task's failure never stops the worker
                    log.exception("a queued task failed")

        workers = [asyncio.create_task(one_worker(), name="in-process scan worker") for _ in range(concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()


@dataclass
class _LoopParts:
    loop: asyncio.AbstractEventLoop
    #: procrastinate's app (PostgreSQL), or None: embedded, the queue is `local`.
    app: procrastinate.App | None
    local: LocalQueue | None
    opened: asyncio.Task[None] | None
    waiters: dict[str, list[asyncio.Future[None]]] = field(default_factory=dict)
    #: The future each waiting request registered when it submitted its job (`submit(waiter=True)`).
    registered: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    #: Jobs this process's worker ended done while a request here waited on them: the row as committed,
    #: taken by that request (`take_handed`) instead of reading it back.
    handed: dict[str, ScanJob] = field(default_factory=dict)
    #: Embedded: the scan jobs queued in this process that have not run to their end yet (`held_jobs`); `stop`
    #: ends those still open, since the queue holding them goes with the process.
    unended: set[str] = field(default_factory=set)
    #: Embedded: the scan jobs whose callback task is queued here (waiting, running or between retries).
    callbacks: set[str] = field(default_factory=set)
    poller: asyncio.Task[None] | None = None
    worker: asyncio.Task[None] | None = None
    ready: bool = False
    load: ClusterLoad | None = None
    load_read_at: float = 0.0
    #: Jobs this process has queued since `load` was read (counted in before the next read).
    queued_since_read: int = 0
    load_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class JobEngine:
    """The scans' task engine for one Runtime (see the module docstring)."""

    def __init__(
        self,
        database: Database,
        *,
        in_process_workers: int,
        monitor_tick_seconds: int = 60,
        service_now: Callable[[], datetime] | None = None,
        machine_clock: MachineClock | None = None,
    ) -> None:
        self.database = database
        #: The service's clock (the runtime's, which tests set): what a callback owed since is measured on.
        self.service_now: Callable[[], datetime] = service_now or _now
        #: Embedded: this machine's clock, which every process on it reads alike (tests set it), where the
        #: service's clocks may disagree: the queues' leases are written and judged on it (`lease_now`).
        self.machine_clock: MachineClock = machine_clock or SystemMachineClock()
        #: The machine's clock less its monotonic one at the last `lease_now`, and the forward steps of the
        #: machine's clock seen since the monotonic instant `_stepped_until` less LONGEST_LEASE_SECONDS.
        self._clock_offset: float | None = None
        self._stepped = 0.0
        self._stepped_until = 0.0
        #: croniter's sixth field is seconds: "every N seconds" below a minute
        self.monitor_tick_cron = (
            MONITOR_TICK_CRON if monitor_tick_seconds >= 60 else f"* * * * * */{monitor_tick_seconds}"
        )
        #: The same period for the embedded ticker (`_tick_monitors`).
        self.monitor_tick_period = 60 if monitor_tick_seconds >= 60 else max(1, monitor_tick_seconds)
        self.conninfo = procrastinate_conninfo(database.url)
        #: Embedded: this process's queue, named in the rows of the jobs it creates (`scan_jobs.queue_id`);
        #: random, so a restarted process is a new queue. None on a shared queue (PostgreSQL).
        self.queue_id: str | None = None if self.conninfo is not None else secrets.token_hex(16)
        self.in_process_workers = in_process_workers
        #: Embedded: the wait before a failed callback's first retry (doubled at each retry after).
        self.callback_first_retry_seconds = 2.0
        self._handler: JobHandler | None = None
        self._callback: JobHandler | None = None
        self._callback_given_up: JobHandler | None = None
        self._monitor_tick: MonitorTick | None = None
        self._monitor_run: MonitorRunHandler | None = None
        self._sweep: Upkeep | None = None
        self._prune: Upkeep | None = None
        self._redeliver: Upkeep | None = None
        self._parts: _LoopParts | None = None

    @property
    def distributed(self) -> bool:
        """Whether the queue is shared by processes (PostgreSQL), not this process's memory."""
        return self.conninfo is not None

    @property
    def queue_gone_after(self) -> float:
        """Embedded: seconds (the machine's clock) after its last tick when this process's queue is taken for gone
        by the others, its jobs their sweep's (QUEUE_GONE_AFTER_TICKS ticks of its ticker, at least
        QUEUE_GONE_MIN_SECONDS): the lease each tick renews (`_beat`)."""
        return max(QUEUE_GONE_AFTER_TICKS * self.monitor_tick_period, QUEUE_GONE_MIN_SECONDS)

    def lease_now(self) -> datetime:
        """Embedded: the time the queues' leases are judged at (`end_abandoned_jobs`, and which are forgotten).

        The machine's clock, on which they are written (`_beat`), not the service's: with WEBSEC_CLOCK_START
        each process's service clock starts at that instant when the process starts, so two processes started
        minutes apart disagree by those minutes, and the one ahead took its live sibling's lease for run out.
        Less any forward step of the machine's clock seen within the longest lease: a live sibling's lease,
        renewed before the step, is renewed on the new time within its ticks."""
        from datetime import timedelta

        now, elapsed = self.machine_clock.now(), self.machine_clock.monotonic()
        offset = now.timestamp() - elapsed
        if elapsed >= self._stepped_until:
            self._stepped = 0.0
        if self._clock_offset is not None and abs(offset - self._clock_offset) > CLOCK_STEP_SECONDS:
            # a step back only makes the leases look longer: it takes back a step forward, not more
            self._stepped = max(0.0, self._stepped + offset - self._clock_offset)
            self._stepped_until = elapsed + LONGEST_LEASE_SECONDS
        self._clock_offset = offset
        return now - timedelta(seconds=self._stepped)

    def set_handlers(self, scan: JobHandler, callback: JobHandler, callback_given_up: JobHandler | None = None) -> None:
        """What a worker does with a job id, and how it calls a job's callback back (the use cases,
        websec_app/usecases/job_worker.py); the callback raises to be retried, and `callback_given_up` runs
        after its last attempt (CALLBACK_ATTEMPTS) failed."""
        self._handler = scan
        self._callback = callback
        self._callback_given_up = callback_given_up

    def set_monitor_handlers(self, tick: MonitorTick, run: MonitorRunHandler) -> None:
        """What the once-a-minute monitor tick and one monitor run do (websec_app/usecases/monitors.py)."""
        self._monitor_tick = tick
        self._monitor_run = run

    def set_upkeep(self, *, sweep: Upkeep, prune: Upkeep, redeliver: Upkeep | None = None) -> None:
        """What runs before each monitor tick (websec_app/usecases/job_worker.py).

        `sweep`, embedded only: end the jobs a process took with it when it stopped outright (its queue was
        in its memory; `end_abandoned_jobs`), never one this process's queue holds (`held_jobs`) nor one of
        another process whose queue's lease is running (this ticker renews this process's first, `_beat`).
        On PostgreSQL the queue outlives a process and
        `retry_stalled` runs a dead worker's jobs again. `prune`:
        delete the ended jobs past their retention (`delete_expired_jobs`), by the embedded ticker, and on
        PostgreSQL in the monitor tick's periodic task, once per tick across the cluster. `redeliver`, by
        both: queue again the callbacks that ended jobs still owe and no queued task carries
        (`redeliver_owed_callbacks`)."""
        self._sweep, self._prune, self._redeliver = sweep, prune, redeliver

    # --- procrastinate (PostgreSQL) -----------------------------------------------------------------

    def _build_app(self, conninfo: str) -> procrastinate.App:
        import procrastinate

        connector = procrastinate.PsycopgConnector(conninfo=conninfo, min_size=1, max_size=8)
        app = procrastinate.App(connector=connector)

        @app.task(name=SCAN_TASK, queue=SCAN_QUEUE)
        async def scan_job(job_id: str) -> None:
            await self._run(job_id)

        # procrastinate's max_attempts counts the runs after the first (it stops once job.attempts reaches it),
        # and 0 means no limit: CALLBACK_ATTEMPTS - 1 retries make CALLBACK_ATTEMPTS runs in all, as on the
        # embedded queue (LocalQueue.put_retried counts every run).
        retries = CALLBACK_ATTEMPTS - 1
        callback_retry = procrastinate.RetryStrategy(max_attempts=retries, exponential_wait=2) if retries else None

        @app.task(name=CALLBACK_TASK, queue=SCAN_QUEUE, retry=callback_retry or False, pass_context=True)
        async def callback(context: procrastinate.JobContext, job_id: str) -> None:
            try:
                await self._call_back(job_id)
            except Exception as exc:
                if callback_retry is None or callback_retry.get_retry_decision(exception=exc, job=context.job) is None:
                    await self._given_up(job_id)  # procrastinate will not run it again
                raise

        @app.periodic(cron=RETRY_STALLED_CRON, periodic_id="retry_stalled")
        # Ahead of every queued scan (a higher priority is fetched first): recovering a dead worker's jobs
        # must not wait for the queue to drain.
        @app.task(name=RETRY_STALLED_TASK, queue=SCAN_QUEUE, queueing_lock=RETRY_STALLED_TASK, priority=100)
        async def retry_stalled(timestamp: int) -> None:
            stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_AFTER_SECONDS)
            for job in stalled:
                log.warning("job %s of a worker gone silent goes back in the queue", job.id)
                await app.job_manager.retry_job(job)

        # Periodic jobs are deferred once per tick for the whole cluster (unique in procrastinate's table), so
        # one process schedules the due runs; the store makes each run once even if two ticks overlapped.
        @app.periodic(cron=self.monitor_tick_cron, periodic_id="monitor_tick")
        @app.task(name=MONITOR_TICK_TASK, queue=SCAN_QUEUE, queueing_lock=MONITOR_TICK_TASK)
        async def monitor_tick(timestamp: int) -> None:
            await self._each_tick(embedded=False)

        @app.task(name=MONITOR_RUN_TASK, queue=SCAN_QUEUE)
        async def monitor_run(run_id: int) -> None:
            await self._run_monitor(run_id)

        return app

    # --- the tasks, whichever queue carries them ------------------------------------------------------

    async def _run(self, job_id: str) -> None:
        if self._handler is None:  # pragma: no cover - build_runtime always sets it
            raise RuntimeError("the job engine has no handler")
        try:
            await self._handler(job_id)
        except Exception:
            self._let_go(job_id)  # its task is over: a row it left open is the sweep's to end, as a lost one
            raise
        finally:
            self._wake(job_id)
        self._let_go(job_id)  # run to its end: neither `stop`'s nor the sweep's to end (a cancelled run stays)

    def _let_go(self, job_id: str) -> None:
        parts = self._parts
        if parts is not None:
            parts.unended.discard(job_id)

    def held_jobs(self) -> frozenset[str]:
        """Embedded: the scan jobs this process's in-memory queue holds, queued or running on its workers. They
        are live however long they wait (an async batch has no request waiting on it), so this process's sweep
        of abandoned jobs leaves them alone, and so does another process's while this one's ticker renews its
        queue's lease (`_beat`). Empty on a shared queue: procrastinate's table holds the jobs there."""
        parts = self._parts
        return frozenset(parts.unended) if parts is not None else frozenset()

    async def _call_back(self, job_id: str) -> None:
        if self._callback is not None:
            await self._callback(job_id)

    async def _given_up(self, job_id: str) -> None:
        if self._callback_given_up is not None:
            try:
                await self._callback_given_up(job_id)
            except Exception:  # noqa: BLE001 - still owed then: the upkeep starts it over
                log.exception("could not record that the callback of job %s was given up", job_id)

    async def _tick(self) -> None:
        if self._monitor_tick is not None:
            await self._monitor_tick()

    async def _run_monitor(self, run_id: int) -> None:
        if self._monitor_run is not None:
            await self._monitor_run(run_id)

    async def _beat(self) -> None:
        """Embedded: renew this process's queue's lease (`embedded_queues`: alive for `queue_gone_after` more),
        so that the other processes on the database leave the jobs it holds alone; and forget the queues
        long gone."""
        from datetime import timedelta

        from websec_app.store.scan_jobs import queue_alive

        if self.queue_id is not None:
            alive_until = self.machine_clock.now() + timedelta(seconds=self.queue_gone_after)
            forget_before = self.lease_now() - timedelta(seconds=QUEUE_FORGOTTEN_AFTER_SECONDS)
            await self._db(queue_alive, self.queue_id, alive_until, forget_before)

    async def _each_tick(self, *, embedded: bool) -> None:
        """What each monitor tick runs, each step's failure logged (the next tick tries again): embedded, this
        queue's lease, then the sweep of abandoned jobs; then the deletion of expired jobs, the
        redelivery of owed callbacks, and the monitor tick."""
        steps = [
            ("the deletion of expired scan jobs", self._prune),
            ("the redelivery of owed callbacks", self._redeliver),
            ("the monitor tick", self._tick),
        ]
        if embedded:
            steps[:0] = [
                ("the lease of this process's queue", self._beat),
                ("the sweep of abandoned scan jobs", self._sweep),
            ]
        for what, step in steps:
            try:
                if step is not None:
                    await step()
            except Exception:  # noqa: BLE001 - the next tick tries again
                log.exception("%s failed", what)

    async def _tick_monitors(self) -> None:
        """Embedded: each tick's work at start (as procrastinate defers a periodic task's latest tick when its
        worker starts), then at every multiple of the period on the clock, one tick at a time."""
        while True:
            await self._each_tick(embedded=True)
            now = time.time()
            period = self.monitor_tick_period
            await asyncio.sleep((now // period + 1) * period - now)

    # --- this loop's parts ----------------------------------------------------------------------------

    def _here(self) -> _LoopParts:
        """This loop's parts, opened on first use in the loop."""
        loop = asyncio.get_running_loop()
        parts = self._parts
        if parts is None or parts.loop is not loop or loop.is_closed():
            if self.conninfo is not None:
                app = self._build_app(self.conninfo)
                opened = loop.create_task(self._open(app), name="procrastinate open")
                parts = _LoopParts(loop=loop, app=app, local=None, opened=opened)
            else:
                parts = _LoopParts(loop=loop, app=None, local=LocalQueue(), opened=None)
            self._parts = parts
        return parts

    async def _open(self, app: procrastinate.App) -> None:
        await app.open_async()

    async def _ready(self) -> _LoopParts:
        parts = self._here()
        if parts.ready:
            return parts
        if parts.opened is not None:
            await asyncio.shield(parts.opened)
        if self.in_process_workers > 0 and parts.worker is None:
            parts.worker = parts.loop.create_task(
                self.run_worker(self.in_process_workers, parts=parts), name="in-process scan worker"
            )
        parts.ready = True
        return parts

    async def start(self) -> None:
        """Open the engine and start this process's own workers now, at the app's start-up, not at its first
        API scan: they also run the periodic jobs (the monitor tick), which must run in a `make run` process
        that is only used through the web UI, and after a restart.

        Embedded, its queue's lease is taken first (`_beat`), before the process serves: a job of a queue
        without one is another's sweep's once a wait budget old, and that age is read on the service's
        clock, which another process may see far ahead (`lease_now`)."""
        if self.queue_id is not None:
            try:
                await self._beat()
            except Exception:  # noqa: BLE001 - the ticker's first tick, right after, tries again
                log.exception("could not take the lease of this process's queue")
        await self._ready()

    async def stop(self) -> None:
        """Stop this process's workers and the waiters' poll, at the app's shutdown, and wait for them.

        Their tasks are cancelled. On PostgreSQL procrastinate then stops fetching, lets the running scans
        end (a scan is bounded) and unregisters. Embedded, the running scans are cancelled, and every job
        this process queued that is still open is ended failed with its unit given back (SERVER_STOPPED):
        its queue goes with the process, and no other process would ever run it. Its lease goes then
        (`queue_gone`): a job of this queue still open is any sweep's after a wait budget.

        Ended, the tasks also end the thread-pool threads they started: anyio ends a worker thread when
        the task that started it ends, and a thread left waiting kept the process from exiting, so
        granian killed it after its graceful-stop timeout (5 s) on every SIGTERM."""
        parts = self._parts
        if parts is None or parts.loop is not asyncio.get_running_loop():
            return
        tasks = [task for task in (parts.worker, parts.poller, parts.opened) if task is not None and not task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if parts.unended:
            from websec_app.store.scan_jobs import end_failed

            stopped = sorted(parts.unended)
            end = partial(end_failed, callback_owed_at=self.service_now())
            ended = await self._db(end, stopped, _now(), SERVER_STOPPED_STATUS, SERVER_STOPPED)
            if ended:  # a cancelled task whose row had ended already is not an open job
                log.warning("stopped with %d scan job(s) open: ended failed, their units given back", ended)
            for job_id in stopped:  # a request still waiting answers with that end
                self._wake(job_id)
        if parts.local is not None and self.queue_id is not None:
            from websec_app.store.scan_jobs import queue_gone

            try:
                await self._db(queue_gone, self.queue_id)
            except Exception:  # noqa: BLE001 - silent from now on, it is taken for gone after queue_gone_after
                log.exception("could not unregister the queue of this process")
        self._parts = None
        if parts.app is not None and parts.opened is not None and parts.opened.done() and not parts.opened.cancelled():
            await parts.app.close_async()

    # --- the request's side -------------------------------------------------------------------------

    async def submit(self, job_id: str, *, waiter: bool = False) -> None:
        """Queue the scan job `job_id` (its row exists already). `waiter`: this request will `wait` for it;
        its waiter is registered before the job can run, so `wait` needs no read of the row to know that
        the job did not end before it. The request calls `forget(job_id)` when it stops waiting."""
        parts = await self._ready()
        if waiter:
            future: asyncio.Future[None] = parts.loop.create_future()
            parts.registered[job_id] = future
            parts.waiters.setdefault(job_id, []).append(future)
        try:
            if parts.local is not None:
                parts.unended.add(job_id)
                parts.local.put(lambda: self._run(job_id))
            else:
                assert parts.app is not None
                await parts.app.configure_task(SCAN_TASK, queue=SCAN_QUEUE).defer_async(job_id=job_id)
        except BaseException:
            self.forget(job_id)
            raise
        parts.queued_since_read += 1

    async def wait(self, job_id: str, timeout: float) -> bool:
        """Wait until the job has ended (True), or `timeout` seconds (False)."""
        from websec_app.store.scan_jobs import ended_jobs

        parts = await self._ready()
        registered = parts.registered.get(job_id)
        future = registered or parts.loop.create_future()
        if registered is None:
            parts.waiters.setdefault(job_id, []).append(future)
        if self.distributed and (parts.poller is None or parts.poller.done()):
            parts.poller = parts.loop.create_task(self._poll(parts), name="scan job poller")
        try:
            if future.done():
                return True
            # Not registered at submit: the job may have ended before the future was in place.
            if registered is None and await self._db(ended_jobs, [job_id]):
                return True
            await asyncio.wait_for(asyncio.shield(future), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            if registered is None:
                self._drop_waiter(parts, job_id, future)

    def forget(self, job_id: str) -> None:
        """The request that submitted `job_id` with a waiter no longer waits for it."""
        parts = self._parts
        if parts is None:
            return
        future = parts.registered.pop(job_id, None)
        if future is not None:
            self._drop_waiter(parts, job_id, future)

    @staticmethod
    def _drop_waiter(parts: _LoopParts, job_id: str, future: asyncio.Future[None]) -> None:
        waiting = parts.waiters.get(job_id, [])
        if future in waiting:
            waiting.remove(future)
        if not waiting:
            parts.waiters.pop(job_id, None)

    def recent_scan_seconds(self) -> float:
        """The mean scan time of the last load read in this loop (the default before any read)."""
        from websec_app.store.scan_jobs import DEFAULT_SCAN_SECONDS

        parts = self._parts
        return parts.load.scan_seconds if parts is not None and parts.load is not None else DEFAULT_SCAN_SECONDS

    async def submit_callback(self, job_id: str) -> None:
        """Queue the callback of the ended job `job_id`."""
        parts = await self._ready()
        if parts.local is not None:
            parts.callbacks.add(job_id)
            parts.local.put_retried(
                lambda: self._call_back(job_id),
                CALLBACK_ATTEMPTS,
                f"callback of job {job_id}",
                self.callback_first_retry_seconds,
                given_up=lambda: self._given_up(job_id),
                ended=lambda: parts.callbacks.discard(job_id),
            )
            return
        assert parts.app is not None
        await parts.app.configure_task(CALLBACK_TASK, queue=SCAN_QUEUE).defer_async(job_id=job_id)

    async def queued_callbacks(self) -> set[str]:
        """The scan jobs whose callback task is queued (waiting, running, or waiting for a retry): in this
        process's queue embedded, in procrastinate's table on PostgreSQL, across the cluster."""
        parts = await self._ready()
        if parts.local is not None:
            return set(parts.callbacks)
        assert parts.app is not None
        queued: set[str] = set()
        for status in ("todo", "doing"):
            for job in await parts.app.job_manager.list_jobs_async(task=CALLBACK_TASK, status=status):
                queued.add(str(job.task_kwargs.get("job_id")))
        return queued

    async def submit_monitor_run(self, run_id: int) -> None:
        """Queue one scheduled monitor run (its row exists already; a second copy finds it claimed)."""
        parts = await self._ready()
        if parts.local is not None:
            parts.local.put(lambda: self._run_monitor(run_id))
            return
        assert parts.app is not None
        await parts.app.configure_task(MONITOR_RUN_TASK, queue=SCAN_QUEUE).defer_async(run_id=run_id)

    def hand_over(self, job_id: str, ended: ScanJob) -> None:
        """The worker's side: `ended` is the job's row as this process just committed its end; a request
        of this process waiting on it takes it instead of reading the row back. Kept only while someone
        waits (whoever waits takes it, whatever its outcome), so nothing accumulates."""
        parts = self._parts
        if parts is not None and parts.waiters.get(job_id):
            parts.handed[job_id] = ended

    def take_handed(self, job_id: str) -> ScanJob | None:
        """The request's side: the row `hand_over` left for `job_id`, once; None when its end was decided
        elsewhere (another process, a failure, the request itself): read the row then."""
        parts = self._parts
        return None if parts is None else parts.handed.pop(job_id, None)

    def _wake(self, job_id: str) -> None:
        parts = self._parts
        if parts is None:
            return
        for future in parts.waiters.get(job_id, []):
            if not future.done():
                future.set_result(None)

    async def _poll(self, parts: _LoopParts) -> None:
        from websec_app.store.scan_jobs import ended_jobs

        while parts.waiters:
            await asyncio.sleep(POLL_SECONDS)
            try:
                for job_id in await self._db(ended_jobs, list(parts.waiters)):
                    self._wake(job_id)
            except Exception:  # noqa: BLE001 - a failed poll is retried; the waiters have their own deadline
                log.exception("polling the scan jobs failed")

    async def load(self) -> ClusterLoad:
        """The cluster's load for admission, read at most every LOAD_TTL_SECONDS per process; the jobs this
        process queued since the read are counted in."""
        from websec_app.store.scan_jobs import ClusterLoad, cluster_load

        parts = await self._ready()
        async with parts.load_lock:
            if parts.load is None or time.monotonic() - parts.load_read_at > LOAD_TTL_SECONDS:
                parts.load = await self._db(cluster_load, _now())
                parts.load_read_at = time.monotonic()
                parts.queued_since_read = 0
        load = parts.load
        # Embedded, the capacity is this process's own workers, known before they have registered.
        capacity = load.capacity if self.distributed else self.in_process_workers
        return ClusterLoad(load.depth + parts.queued_since_read, capacity, load.scan_seconds)

    # --- the worker's side --------------------------------------------------------------------------

    async def run_worker(self, concurrency: int, *, parts: _LoopParts | None = None) -> None:
        """Run scan jobs, `concurrency` at once, until cancelled; registered as capacity meanwhile."""
        from websec_app.store.scan_jobs import worker_alive, worker_gone

        parts = parts or await self._ready()
        worker_id = secrets.token_hex(16)
        await self._db(worker_alive, worker_id, concurrency, _now())

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(HEARTBEAT_SECONDS)
                try:
                    await self._db(worker_alive, worker_id, concurrency, _now())
                except Exception:  # noqa: BLE001 - the next beat retries
                    log.exception("scan worker heartbeat failed")

        beating = asyncio.create_task(heartbeat(), name="scan worker heartbeat")
        try:
            if parts.local is not None:
                ticking = asyncio.create_task(self._tick_monitors(), name="monitor tick")
                try:
                    await parts.local.work(concurrency)
                finally:
                    ticking.cancel()
                return
            assert parts.app is not None
            await parts.app.run_worker_async(
                queues=[SCAN_QUEUE],
                concurrency=concurrency,
                install_signal_handlers=False,
                update_heartbeat_interval=HEARTBEAT_SECONDS,
                stalled_worker_timeout=STALLED_AFTER_SECONDS,
                delete_jobs="successful",
                fetch_job_polling_interval=1.0,
            )
        finally:
            beating.cancel()
            try:
                await self._db(worker_gone, worker_id)
            except Exception:  # noqa: BLE001 - it will be counted dead after WORKER_ALIVE_SECONDS anyway
                log.exception("could not unregister scan worker %s", worker_id)

    async def _db(self, work: Callable[..., Any], *args: Any) -> Any:
        import anyio.to_thread

        def run() -> Any:
            with self.database.session() as session:
                return work(session, *args)

        return await anyio.to_thread.run_sync(run)


def _now() -> Any:
    # Worker liveness and scan durations are measured on the real clock, not the service's (which tests
    # may set to a fixed date): they are durations between this machine's events.
    from datetime import UTC, datetime

    return datetime.now(UTC)


@asynccontextmanager
async def engine_lifespan(engine: JobEngine) -> AsyncIterator[JobEngine]:
    """Start `engine` with the app (Reflex's `register_lifespan_task`, and serve-api's lifespan)."""
    await engine.start()
    try:
        yield engine
    finally:
        await engine.stop()


__all__ = ["JobEngine", "engine_lifespan", "procrastinate_conninfo"]
