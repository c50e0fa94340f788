"""The job path's store calls on SQLite (issue 14): CPU per call of each transaction a free scan's job makes,
through an ORM session (store/scan_jobs.py, store/quotas.py, what usecases/jobs.py ran before) against the
prebuilt Core statements of store/hot_rows/scan_jobs.py, and the `find_job` read-back that a request no
longer does when its own process's worker hands it the ended row.

    python -m bench.claim_bench [--jobs 2000] [--rounds 4]

- reserve: the free unit and the job row (ORM: `reserve_free_scan` then `add_job`, two commits; hot:
  `reserve_free_job`, one transaction)
- claim: the worker's start of a job (`claim_job`, one UPDATE ... RETURNING either way)
- end: the job's end done with its history entry (ORM: `finish_done` + `record_scan` + commit, as
  usecases.job_worker._end_done for a free scan; hot: `end_done_with_history`)

A fresh SQLite database in a temporary directory; CPU is this process's (time.process_time), the ways
alternated in rounds so that a busy machine weighs on both alike. No network.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import Session, select

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/claim_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(ROOT))

from websec_app.store import Database, reserve_free_scan  # noqa: E402
from websec_app.store.hot_rows import scan_jobs as hot  # noqa: E402
from websec_app.store.models import JOB_DONE, ScanJob, ScanRecord  # noqa: E402
from websec_app.store.scan_jobs import add_job, claim_job, find_job, finish_done, new_job  # noqa: E402
from websec_app.store.scans import record_scan  # noqa: E402

BODY = {"grade": "A+", "score": 100, "tests": {f"test-{n}": {"pass": True, "result": "x" * 40} for n in range(30)}}
URL = "https://a.test/"
LIMIT = 10**9


def _history(session: Session, now: datetime, client: str) -> ScanRecord:
    return record_scan(
        session,
        kind="free",
        url=URL,
        final_url=URL,
        grade="A+",
        score=100,
        algorithm_version="bench",
        now=now,
        client=client,
        commit=False,
    )


def _cpu_ms(count: int, work: Callable[[int], object]) -> float:
    start = time.process_time()
    for n in range(count):
        work(n)
    return (time.process_time() - start) * 1000 / count


class _Round:
    """One round: each pair of ways on its own fresh jobs, the order of the pair alternated by round."""

    def __init__(self, database: Database, number: int, jobs: int, figures: dict[str, list[float]]) -> None:
        self.database, self.engine, self.number, self.jobs = database, database.engine, number, jobs
        self.figures = figures
        self.now = datetime.now(UTC)
        self.client = f"10.0.0.{number}"
        self.orm_ids: list[str] = []
        self.hot_ids: list[str] = []

    def in_session(self, work: Callable[[Session], object]) -> object:
        with self.database.session() as session:
            return work(session)

    def pair(self, orm: tuple[str, Callable[[int], object]], hot_: tuple[str, Callable[[int], object]]) -> None:
        # the ORM way first in even rounds, the hot way first in odd ones
        for name, work in (orm, hot_) if self.number % 2 == 0 else (hot_, orm):
            self.figures.setdefault(name, []).append(_cpu_ms(self.jobs, work))

    def reserve_orm(self, _: int) -> None:
        def work(session: Session) -> None:
            reservation = reserve_free_scan(session, self.client, self.now, LIMIT)
            job = new_job(kind="free", url=URL, now=self.now, reservation=reservation, client=self.client)
            add_job(session, job)
            self.orm_ids.append(job.id)

        self.in_session(work)

    def reserve_hot(self, _: int) -> None:
        job = new_job(kind="free", url=URL, now=self.now, client=self.client)
        assert hot.reserve_free_job(self.engine, job, self.client, self.now, LIMIT) is not None
        self.hot_ids.append(job.id)

    def end_orm(self, n: int) -> None:
        def work(session: Session) -> None:
            assert finish_done(session, self.orm_ids[n], self.now, BODY)
            _history(session, self.now, self.client)
            session.commit()

        self.in_session(work)

    def end_hot(self, n: int) -> None:
        history = hot.history_row(lambda session: _history(session, self.now, self.client))
        assert hot.end_done_with_history(self.engine, self.hot_ids[n], self.now, BODY, None, history)

    def run(self) -> None:
        self.pair(("reserve (ORM, 2 commits)", self.reserve_orm), ("reserve (hot, 1 txn)", self.reserve_hot))
        self.pair(
            ("claim (ORM)", lambda n: self.in_session(lambda s: claim_job(s, self.orm_ids[n], self.now))),
            ("claim (hot)", lambda n: hot.claim_job(self.engine, self.hot_ids[n], self.now)),
        )
        self.pair(("end (ORM)", self.end_orm), ("end (hot)", self.end_hot))
        find = _cpu_ms(self.jobs, lambda n: self.in_session(lambda s: find_job(s, self.hot_ids[n])))
        self.figures.setdefault("find_job (done row)", []).append(find)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000, help="jobs per way and round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        database = Database(f"sqlite:///{tmp}/bench.db")
        database.ensure_schema()
        figures: dict[str, list[float]] = {}
        for number in range(args.rounds):
            _Round(database, number, args.jobs, figures).run()
        with database.session() as session:
            done = len(session.exec(select(ScanJob.id).where(ScanJob.status == JOB_DONE)).all())
        for name, values in figures.items():
            rounds = ", ".join(f"{value:.3f}" for value in values)
            print(f"  {name:26} {statistics.median(values):6.3f} ms CPU per call (rounds: {rounds})")
        print(f"  ({done} jobs ended done)")
        database.dispose()


if __name__ == "__main__":
    main()
