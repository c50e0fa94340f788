"""The process's scan admission: slots, a FIFO wait queue, refusal past both, one instance per settings."""

from __future__ import annotations

import asyncio

import pytest

from websec_app.runtime import build_runtime
from websec_app.services.admission import RETRY_AFTER_SECONDS, ScanAdmission, ScannerBusy
from websec_app.settings import Settings


async def test_callers_up_to_the_limit_get_a_slot_at_once() -> None:
    admission = ScanAdmission(limit=2, queue=0)

    await admission.acquire()
    await admission.acquire()

    assert admission.active == 2 and admission.waiting == 0
    admission.release()
    admission.release()
    assert admission.active == 0


async def test_waiters_are_admitted_in_arrival_order() -> None:
    # Given one slot, taken
    admission = ScanAdmission(limit=1, queue=10)
    await admission.acquire()
    order: list[int] = []

    async def waiter(n: int) -> None:
        async with admission.slot():
            order.append(n)
            await asyncio.sleep(0)

    # When five callers queue up one after another
    tasks = []
    for n in range(5):
        tasks.append(asyncio.create_task(waiter(n)))
        await asyncio.sleep(0)
    assert admission.waiting == 5

    # And a newcomer arrives while the slot is being handed over, it does not overtake them
    admission.release()
    tasks.append(asyncio.create_task(waiter(99)))
    await asyncio.gather(*tasks)

    assert order == [0, 1, 2, 3, 4, 99]
    assert admission.active == 0 and admission.waiting == 0


async def test_a_full_queue_refuses_at_once_with_the_seconds_to_wait() -> None:
    # Given one slot taken and the one place in the queue taken
    admission = ScanAdmission(limit=1, queue=1)
    await admission.acquire()
    queued = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)

    # When one more caller comes, it is refused without waiting
    with pytest.raises(ScannerBusy) as refused:
        await asyncio.wait_for(admission.acquire(), timeout=1)

    assert refused.value.retry_after == RETRY_AFTER_SECONDS == 5
    assert refused.value.http_status == 503
    assert admission.refused == 1
    assert (admission.active, admission.waiting) == (1, 1)
    admission.release()
    await queued
    admission.release()
    assert admission.active == 0


async def test_a_caller_arriving_at_a_full_line_is_refused_when_it_awaits_its_turn() -> None:
    # Given one slot taken and no queue
    admission = ScanAdmission(limit=1, queue=0)
    holder = admission.place()

    # When a caller arrives (it checks its request before it waits), it holds nothing
    late = admission.arrive()
    assert late.refused and not late.holds_slot
    assert (admission.active, admission.waiting, admission.refused) == (1, 0, 0)

    # Then it is refused when it awaits its turn, even once the slot is free: it arrived at a full line
    holder.leave()
    with pytest.raises(ScannerBusy):
        await late.turn()
    late.leave()
    assert (admission.active, admission.waiting, admission.refused) == (0, 0, 1)
    # And a caller arriving now gets the slot
    assert admission.arrive().holds_slot


async def test_the_retry_seconds_are_the_admissions() -> None:
    admission = ScanAdmission(limit=1, queue=0, retry_after=17)
    await admission.acquire()

    with pytest.raises(ScannerBusy) as refused:
        await admission.acquire()

    assert refused.value.retry_after == 17


async def test_a_cancelled_waiter_gives_its_place_back() -> None:
    admission = ScanAdmission(limit=1, queue=1)
    await admission.acquire()
    queued = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)

    # A waiter whose caller went away leaves the queue ...
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert admission.waiting == 0

    # ... so its place can be taken again, and the slot goes to the next one
    later = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)
    admission.release()
    await later
    assert admission.active == 1


async def test_a_waiter_cancelled_just_as_it_is_handed_the_slot_passes_it_on() -> None:
    admission = ScanAdmission(limit=1, queue=2)
    await admission.acquire()
    first = asyncio.create_task(admission.acquire())
    second = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)

    # The slot is handed to the first waiter, which is cancelled before it runs
    admission.release()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first

    await asyncio.wait_for(second, timeout=1)
    assert admission.active == 1 and admission.waiting == 0


async def test_the_slot_is_released_when_the_block_raises() -> None:
    admission = ScanAdmission(limit=1, queue=0)

    with pytest.raises(RuntimeError):
        async with admission.slot():
            assert admission.active == 1
            raise RuntimeError("scan crashed")

    assert admission.active == 0
    async with admission.slot():  # free again
        assert admission.active == 1


async def test_the_slot_is_released_when_the_holder_is_cancelled() -> None:
    admission = ScanAdmission(limit=1, queue=0)
    started = asyncio.Event()

    async def hold() -> None:
        async with admission.slot():
            started.set()
            await asyncio.sleep(3600)

    holder = asyncio.create_task(hold())
    await started.wait()
    assert admission.active == 1

    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder

    assert admission.active == 0


def test_a_waiter_left_by_a_closed_event_loop_does_not_block_the_next_loop() -> None:
    # Given an admission that outlives event loops (one per process; tests run one loop per test)
    admission = ScanAdmission(limit=1, queue=1)
    old_loop = asyncio.new_event_loop()

    async def leave_a_waiter_behind() -> None:
        await admission.acquire()
        asyncio.get_running_loop().create_task(admission.acquire())
        await asyncio.sleep(0)

    old_loop.run_until_complete(leave_a_waiter_behind())
    old_loop.close()  # its waiting task never ran again
    assert (admission.active, admission.waiting) == (1, 0)

    # When the holder releases from another loop, the dead waiter is skipped and the slot is freed
    async def later() -> int:
        admission.release()
        async with admission.slot():
            return admission.active

    assert asyncio.run(later()) == 1
    assert admission.active == 0


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="limit"):
        ScanAdmission(limit=0, queue=1)
    with pytest.raises(ValueError, match="queue"):
        ScanAdmission(limit=1, queue=-1)


def test_a_runtime_builds_one_admission_with_its_settings_limits(tmp_path) -> None:
    """One per runtime (the process's: the API and the UI are handed the same), none in a module global."""
    settings = Settings(max_concurrent_scans=3, scan_queue=7, data_dir=tmp_path)

    runtime = build_runtime(settings, payments=None)
    other = build_runtime(settings, database=runtime.database)

    assert runtime.admission is not None and (runtime.admission.limit, runtime.admission.queue) == (3, 7)
    assert other.admission is not runtime.admission
    assert build_runtime(settings, database=runtime.database, bounded=False).admission is None
    runtime.database.dispose()
