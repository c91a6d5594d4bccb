"""CPU-bound calls in worker processes (app/cpu_processes.py, GA_EXTRACT_PROCESSES): the call runs in
another process and its result comes back; a child that dies costs that call one retry in a rebuilt
pool, a call that kills two children is given up, and the pool keeps serving the others."""

from __future__ import annotations

import os

import pytest

from app import metrics
from app.cpu_processes import CpuProcesses, ProcessLost


# Found by name in the children (this module is on the path the fork server was given).
def _pid_and_double(x: int) -> tuple[int, int]:
    return os.getpid(), 2 * x


def _die(marker: str) -> None:
    os._exit(3)  # as a parser crash or the OOM killer would end the child: no exception, no reply


def _die_once(flag_path: str) -> str:
    """Dies the first time (creating the flag), answers the second: a transient death."""
    if not os.path.exists(flag_path):
        open(flag_path, "w").close()
        os._exit(3)
    return "answered"


@pytest.fixture
def processes():
    pool = CpuProcesses(2)
    pool.start()
    yield pool
    pool.close()


def test_a_call_runs_in_a_child_process_and_its_result_comes_back(processes):
    pid, value = processes.call(_pid_and_double, 21)
    assert value == 42
    assert pid != os.getpid()


def test_a_child_that_dies_once_costs_a_retry_in_a_rebuilt_pool(processes, tmp_path):
    deaths = metrics.CPU_PROCESS_DEATHS._value.get()
    assert processes.call(_die_once, str(tmp_path / "flag")) == "answered"
    assert metrics.CPU_PROCESS_DEATHS._value.get() == deaths + 1


def test_a_call_that_kills_two_children_is_given_up_and_the_pool_serves_the_next(processes):
    with pytest.raises(ProcessLost):
        processes.call(_die, "crash")
    assert processes.call(_pid_and_double, 1)[1] == 2


def _sleep(seconds: float) -> str:
    import time

    time.sleep(seconds)
    return "late"


def test_a_call_that_hangs_is_given_up_and_the_pool_serves_the_next():
    """A stuck child (or a pool that broke without telling its futures) costs the call, not a CPU thread
    forever: after the timeout, twice, the call is lost and the rebuilt pool answers the next one."""
    pool = CpuProcesses(1, timeout_s=1.0)
    pool.start()
    try:
        deaths = metrics.CPU_PROCESS_DEATHS._value.get()
        with pytest.raises(ProcessLost):
            pool.call(_sleep, 120)
        assert metrics.CPU_PROCESS_DEATHS._value.get() == deaths + 2
        assert pool.call(_pid_and_double, 4)[1] == 8
    finally:
        pool.close()
