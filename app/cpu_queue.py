"""The stages' CPU-bound calls (page extraction, evidence selection), run in a few
threads in order of urgency rather than in asyncio's first-come default executor.

Under concurrent answers the pages of many requests arrive in the same second. First come, first
served interleaves them all, so every answer's last page waits behind the early pages of the
others — pages whose answers are still waiting on the network and could just as well be extracted
later. Here a call of an answer with no page left on the network (its next step waits on this
work) goes before one whose answer still waits for pages, and among equals the older answer goes
first (its deadline is nearer). The order is decided when a thread takes the next call, so a queued
page becomes urgent as soon as its answer's last fetch lands.

Few threads on purpose: Python code holds the GIL, so more threads than this only compete with the
event loop for it; two let C code that releases the GIL (lxml parsing, numpy) overlap.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from app.cpu_processes import CpuProcesses

T = TypeVar("T")


class Urgency(Protocol):
    """What the queue reads of a call's answer (RunContext): when it started, pages still fetching."""

    started: float
    fetches_in_flight: int


class _Call:
    __slots__ = ("args", "fn", "future", "loop", "owner", "seq", "vars")

    def __init__(self, owner: Urgency | None, fn: Callable[..., Any], args: tuple, seq: int) -> None:
        self.owner, self.fn, self.args, self.seq = owner, fn, args, seq
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future = self.loop.create_future()
        self.vars = contextvars.copy_context()  # as asyncio.to_thread: log fields follow the call

    def urgency(self) -> tuple[int, float, int]:
        if self.owner is None:
            return (0, 0.0, self.seq)
        return (1 if self.owner.fetches_in_flight > 0 else 0, self.owner.started, self.seq)


class CpuQueue:
    """`await queue.run(ctx, fn, *args)`: fn(*args) in one of `threads` threads, most urgent first.
    With `processes` (GA_EXTRACT_PROCESSES) page extraction runs in child processes: a thread waiting
    on a child holds no GIL, so there is a thread per child on top of `threads`."""

    def __init__(self, threads: int = 2, processes: CpuProcesses | None = None) -> None:
        self.processes = processes
        self.threads = threads + (processes.processes if processes is not None else 0)
        self._pending: list[_Call] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._workers: list[threading.Thread] = []
        self._closed = False
        self._running = 0  # calls running in the threads now

    async def run(self, owner: Urgency | None, fn: Callable[..., T], *args: Any) -> T:
        call = _Call(owner, fn, args, next(self._seq))
        with self._cond:
            if self._closed:
                raise RuntimeError("the CPU queue is closed")
            self._pending.append(call)
            if len(self._workers) < self.threads:
                self._start_worker()
            self._cond.notify()
        return await call.future

    def others_busy(self) -> bool:
        """Whether any call waits for a thread or another thread runs one: asked from inside a call,
        False means this call has the queue to itself (read without the lock: a hint for optional
        work, which stops when the answer is True)."""
        return bool(self._pending) or self._running > 1

    def _start_worker(self) -> None:
        worker = threading.Thread(target=self._work, name=f"ga-cpu-{len(self._workers)}", daemon=True)
        self._workers.append(worker)
        worker.start()

    def _next(self) -> _Call | None:
        with self._cond:
            while not self._pending and not self._closed:
                self._cond.wait()
            if not self._pending:
                return None
            # A linear scan: the queue holds tens of calls, each worth milliseconds of CPU.
            best = min(range(len(self._pending)), key=lambda i: self._pending[i].urgency())
            return self._pending.pop(best)

    def _work(self) -> None:
        while (call := self._next()) is not None:
            if call.future.cancelled():  # its request is gone (deadline, client left): skip the work
                continue
            with self._cond:
                self._running += 1
            try:
                result = call.vars.run(call.fn, *call.args)
            except BaseException as exc:  # handed to the awaiting coroutine, as to_thread does
                call.loop.call_soon_threadsafe(_settle, call.future, None, exc)
            else:
                call.loop.call_soon_threadsafe(_settle, call.future, result, None)
            finally:
                with self._cond:
                    self._running -= 1

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop taking calls; the threads finish the call they run and exit."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        deadline = time.monotonic() + timeout_s
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        if self.processes is not None:
            self.processes.close()


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if future.done():  # cancelled while the thread ran
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


async def run_cpu(queue: CpuQueue | None, owner: Urgency | None, fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) through the queue, or in asyncio's default executor when there is none (unit tests,
    GA_CPU_THREADS=0)."""
    if queue is None:
        return await asyncio.to_thread(fn, *args)
    return await queue.run(owner, fn, *args)
