"""The job path's store calls on SQLite (issue 14): CPU per claim of a scan job, the old way (UPDATE, commit,
then SELECT the row) against `claim_job` (one UPDATE ... RETURNING the row), and the `find_job` read-back
that a request no longer does when its own process's worker hands it the ended row.

    python -m bench.claim_bench [--jobs 2000]

A fresh SQLite database in a temporary directory; CPU is this process's (time.process_time), alternated
in rounds so that a busy machine weighs on both ways alike. No network.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlmodel import Session, col, update

from websec_app.store import Database
from websec_app.store.models import JOB_RUNNING, ScanJob
from websec_app.store.scan_jobs import claim_job, create_job, find_job, finish_done

BODY = {"grade": "A+", "score": 100, "tests": {f"test-{n}": {"pass": True, "result": "x" * 40} for n in range(30)}}


def old_claim_job(session: Session, job_id: str, now: datetime) -> ScanJob | None:
    """claim_job before: UPDATE, commit, then read the row again."""
    started = session.exec(
        update(ScanJob)
        .where(col(ScanJob.id) == job_id)
        .values(status=JOB_RUNNING, attempts=col(ScanJob.attempts) + 1, started_at=now)
        .returning(col(ScanJob.id))
    ).scalar_one_or_none()
    session.commit()
    return None if started is None else session.get(ScanJob, job_id, populate_existing=True)


def _cpu_ms(database: Database, ids: list[str], work: Callable[[Session, str], object]) -> float:
    start = time.process_time()
    for job_id in ids:
        with database.session() as session:
            work(session, job_id)
    return (time.process_time() - start) * 1000 / len(ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000, help="jobs per way and round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        database = Database(f"sqlite:///{tmp}/bench.db")

        def jobs(count: int) -> list[str]:
            with database.session() as session:
                return [create_job(session, kind="free", url="https://a.test/", now=now).id for _ in range(count)]

        figures: dict[str, list[float]] = {"claim (old)": [], "claim_job": [], "find_job (done row)": []}
        for _ in range(args.rounds):
            figures["claim (old)"].append(_cpu_ms(database, jobs(args.jobs), lambda s, i: old_claim_job(s, i, now)))
            claimed = jobs(args.jobs)
            figures["claim_job"].append(_cpu_ms(database, claimed, lambda s, i: claim_job(s, i, now)))
            with database.session() as session:
                for job_id in claimed:
                    finish_done(session, job_id, now, BODY)
                session.commit()
            figures["find_job (done row)"].append(_cpu_ms(database, claimed, find_job))
        for name, values in figures.items():
            rounds = ", ".join(f"{value:.3f}" for value in values)
            print(f"  {name:22} {statistics.median(values):6.3f} ms CPU per call (rounds: {rounds})")
        database.dispose()


if __name__ == "__main__":
    main()
