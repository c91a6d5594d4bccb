"""The admission queue on its own (no server): first come, first served; a released slot goes to the
first waiter directly; a timed-out or cancelled waiter neither takes a slot nor loses one; a release
never waits (the lock of the asyncio.Condition this replaced made releases queue behind waiters)."""

from __future__ import annotations

import asyncio

import pytest

from app.api.admission import Admission, Overloaded


async def _waiting(admission: Admission, n: int) -> list[asyncio.Task[None]]:
    tasks = [asyncio.ensure_future(admission.acquire()) for _ in range(n)]
    await asyncio.sleep(0)  # each has queued
    return tasks


async def test_a_released_slot_goes_to_the_first_waiter():
    admission = Admission(1, 3, wait_s=5)
    await admission.acquire()
    first, second = await _waiting(admission, 2)
    assert admission.queued == 2 and admission.in_flight == 1
    await admission.release()
    await asyncio.sleep(0)
    assert first.done() and not second.done()
    assert admission.in_flight == 1 and admission.queued == 1
    await admission.release()
    await asyncio.sleep(0)
    assert second.done() and admission.queued == 0
    await admission.release()
    assert admission.in_flight == 0


async def test_past_the_queue_a_request_is_refused_at_once():
    admission = Admission(1, 1, wait_s=5)
    await admission.acquire()
    (waiter,) = await _waiting(admission, 1)
    with pytest.raises(Overloaded, match="GA_ADMISSION_QUEUE"):
        await admission.acquire()
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)


async def test_a_waiter_that_times_out_leaves_without_a_slot():
    admission = Admission(1, 2, wait_s=0.05)
    await admission.acquire()
    with pytest.raises(Overloaded, match="GA_ADMISSION_WAIT_S") as refused:
        await admission.acquire()
    assert refused.value.retry_after_s >= 1
    assert admission.queued == 0 and admission.in_flight == 1
    await admission.release()
    assert admission.in_flight == 0
    await admission.acquire()  # the next one goes straight in
    assert admission.in_flight == 1


async def test_a_waiter_cancelled_right_after_it_was_handed_a_slot_passes_it_on():
    admission = Admission(1, 3, wait_s=5)
    await admission.acquire()
    handed, next_in_line = await _waiting(admission, 2)
    await admission.release()  # the slot is handed to `handed`, which has not run yet
    handed.cancel()  # the client went away in the same loop turn
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.sleep(0)
    assert next_in_line.done() and not next_in_line.cancelled()
    assert admission.in_flight == 1 and admission.queued == 0


async def test_a_release_never_suspends_even_with_waiters():
    admission = Admission(1, 64, wait_s=5)
    await admission.acquire()
    waiters = await _waiting(admission, 64)
    release = admission.release()
    with pytest.raises(StopIteration):  # ran to the end on its first step: nothing awaited
        release.send(None)
    for task in waiters:
        task.cancel()  # the first was handed the slot: cancelled, it passes it on, until no one is left
    await asyncio.gather(*waiters, return_exceptions=True)
    assert admission.queued == 0 and admission.in_flight == 0
