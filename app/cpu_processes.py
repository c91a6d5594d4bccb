"""CPU-bound calls in worker processes (GA_EXTRACT_PROCESSES), so one service process uses every core.

Page extraction is most of an answer's CPU (docs/BENCHMARKS.md, figure 10), and it is Python: in
threads it holds the GIL, so one uvicorn process answers with about one core however many it has.
With processes, the CPU queue's threads (app/cpu_queue.py) still choose the most urgent page; a
thread hands its call to a child and waits with the GIL released, and the event loop keeps its core.

Why opt-in: with one uvicorn worker per core the cores are busy already, and a child adds the call's
trip through a pipe (its arguments pickled there, the result back). It pays where one process serves
on several cores (`scripts/serve`, a container with one process and a CPU limit above 1).

The children fork from a fork server that imported the `preload` modules once (warm extractors), not
from the service process, whose threads and sockets a plain fork would copy. The service's main module
must be import-safe, as multiprocessing requires (`python -m uvicorn` is). A child that dies (a parser
crash, the OOM killer) breaks the pool: the pool is rebuilt and the call tried once more in the new
one; a call that kills a child twice raises `ProcessLost` — the page is lost, not the request and not
the service (in a thread the same crash takes the whole process down). A call that has not answered
within `CALL_TIMEOUT_S` counts as a death too (its children are terminated and the pool rebuilt): a
stuck child, or a pool that broke without telling its futures, must not hold a CPU thread forever.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from app import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")
# A page's extraction takes milliseconds to a second on bounded markup (app/pipeline/extract.py); a call
# still unanswered after this long is stuck, not slow.
CALL_TIMEOUT_S = 30.0


class ProcessLost(RuntimeError):
    """The call's child process died twice (two pools): its input is given up."""


class CpuProcesses:
    """`call(fn, *args)`: fn(*args) in one of `processes` children, from a thread that it blocks
    (without the GIL) until the child answers. fn and args must pickle; fn is found by name."""

    def __init__(self, processes: int, preload: Sequence[str] = (), *, timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.processes = processes
        self.preload = list(preload)
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._generation = 0  # bumped at each rebuild, so threads that saw one break rebuild once

    def start(self) -> None:
        """Fork the children now (start-up, in a thread): the first calls then pay no fork or warm-up."""
        pool, _ = self._current()
        for future in [pool.submit(_ready) for _ in range(self.processes)]:
            future.result()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        for attempt in (1, 2):
            pool, generation = self._current()
            try:
                return pool.submit(fn, *args).result(timeout=self.timeout_s)
            except (BrokenProcessPool, FutureTimeout) as exc:
                hung = isinstance(exc, FutureTimeout)
                metrics.CPU_PROCESS_DEATHS.inc()
                what = f"a CPU call gave no answer in {self.timeout_s:.0f} s" if hung else "a CPU worker process died"
                log.warning("%s (attempt %d of 2); the pool is rebuilt", what, attempt)
                self._rebuild(generation, terminate=hung)
        raise ProcessLost("the call's worker process died or hung twice")

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _current(self) -> tuple[ProcessPoolExecutor, int]:
        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("forkserver")
                if self.preload:  # read when the fork server starts (once a process)
                    context.set_forkserver_preload(self.preload)
                self._pool = ProcessPoolExecutor(max_workers=self.processes, mp_context=context)
            return self._pool, self._generation

    def _rebuild(self, seen: int, *, terminate: bool = False) -> None:
        with self._lock:
            if self._generation != seen:  # another thread rebuilt it already
                return
            old, self._pool = self._pool, None
            self._generation += 1
        if old is None:
            return
        if terminate:
            # shutdown() would wait for (or leave running) the stuck child; Python 3.11's executor has no
            # public way to end its workers, so they are ended through its process table.
            workers = getattr(old, "_processes", None) or {}
            for process in list(workers.values()):
                process.terminate()
        old.shutdown(wait=False, cancel_futures=True)


def _ready() -> bool:
    return True
