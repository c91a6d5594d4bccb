"""The stages' CPU queue (app/cpu_queue.py): most urgent call first, decided when a thread takes it;
errors, cancellation and context variables as asyncio.to_thread handles them."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from dataclasses import dataclass

import pytest

from app.cpu_queue import CpuQueue, run_cpu


@dataclass
class Answer:
    started: float
    fetches_in_flight: int = 0


async def _blocked(queue: CpuQueue) -> tuple[threading.Event, asyncio.Future]:
    """Occupy the queue's only thread until the returned event is set."""
    gate, running = threading.Event(), threading.Event()

    def hold() -> str:
        running.set()
        gate.wait(5)
        return "held"

    task = asyncio.ensure_future(queue.run(None, hold))
    while not running.is_set():
        await asyncio.sleep(0.001)
    return gate, task


async def test_an_answer_with_no_page_on_the_network_goes_first_then_the_oldest():
    queue = CpuQueue(threads=1)
    order: list[str] = []
    waiting_for_pages = Answer(started=1.0, fetches_in_flight=2)
    young, old = Answer(started=3.0), Answer(started=2.0)
    gate, held = await _blocked(queue)
    calls = [
        asyncio.ensure_future(queue.run(owner, order.append, name))
        for owner, name in ((waiting_for_pages, "waiting"), (young, "young"), (old, "old"))
    ]
    await asyncio.sleep(0.01)  # all three queued behind the held call
    gate.set()
    await asyncio.gather(held, *calls)
    # The oldest answer still waits for two pages: its work goes last.
    assert order == ["old", "young", "waiting"]
    queue.close()


async def test_a_queued_call_becomes_urgent_when_its_answers_last_page_lands():
    queue = CpuQueue(threads=1)
    order: list[str] = []
    first, second = Answer(started=1.0, fetches_in_flight=1), Answer(started=2.0)
    gate, held = await _blocked(queue)
    calls = [asyncio.ensure_future(queue.run(a, order.append, n)) for a, n in ((first, "first"), (second, "second"))]
    await asyncio.sleep(0.01)
    first.fetches_in_flight = 0  # after queueing, before a thread takes the next call
    gate.set()
    await asyncio.gather(held, *calls)
    assert order == ["first", "second"]
    queue.close()


async def test_errors_reach_the_caller_and_cancelled_calls_are_skipped():
    queue = CpuQueue(threads=1)
    ran: list[str] = []

    def boom() -> None:
        raise ValueError("bad page")

    with pytest.raises(ValueError, match="bad page"):
        await queue.run(None, boom)
    gate, held = await _blocked(queue)
    skipped = asyncio.ensure_future(queue.run(None, ran.append, "skipped"))
    await asyncio.sleep(0.01)
    skipped.cancel()
    gate.set()
    assert await held == "held"
    assert await queue.run(None, ran.append, "next") is None
    assert ran == ["next"]
    queue.close()


async def test_context_variables_follow_the_call_and_no_queue_means_to_thread():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
    var.set("req_1")
    queue = CpuQueue(threads=2)
    assert await run_cpu(queue, None, var.get) == "req_1"
    assert await run_cpu(None, None, var.get) == "req_1"
    assert await run_cpu(queue, None, threading.current_thread) is not threading.current_thread()
    queue.close()
    with pytest.raises(RuntimeError):
        await queue.run(None, var.get)


async def test_others_busy_says_whether_another_call_runs_or_waits():
    queue = CpuQueue(threads=2)
    seen: list[str] = []
    assert await queue.run(None, queue.others_busy) is False  # alone: nothing else runs or waits
    gate, held = await _blocked(queue)  # one thread held
    assert await queue.run(None, queue.others_busy) is True  # the held call runs beside it
    gate.set()
    await held
    # A call queued behind two busy threads makes a running call see work waiting.
    gate1, held1 = await _blocked(queue)
    gate2, held2 = await _blocked(queue)
    queued = asyncio.ensure_future(queue.run(None, seen.append, "queued"))
    await asyncio.sleep(0.01)
    assert queue.others_busy()
    gate1.set()
    gate2.set()
    await asyncio.gather(held1, held2, queued)
    assert seen == ["queued"]
    queue.close()
