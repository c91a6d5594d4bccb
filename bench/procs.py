"""Processes under benchmark: the service (uvicorn, its own process), the simulated upstreams, the
bare reference app; and what /proc says about them (CPU seconds, peak RSS)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.common import REPO_ROOT
from bench.workload import Workload

PYTHON = sys.executable
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_tree(root: int) -> list[int]:
    """`root` and its descendants, from /proc (a child that exits meanwhile is skipped)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                pass
    return out


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SETTLE_WINDOW_S = 0.5  # a worker that used under SETTLED_CPU_S of CPU in this window is idle
SETTLED_CPU_S = 0.05


def wait_http(url: str, proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process for {url} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout_s}s")


class _Proc:
    proc: subprocess.Popen

    @property
    def pid(self) -> int:
        return self.proc.pid

    def tree(self) -> list[int]:
        """This process and its descendants (uvicorn --workers N forks N children)."""
        return process_tree(self.proc.pid)

    def cpu_s(self) -> float:
        """user + system CPU seconds of the whole tree, so far."""
        total = 0
        for pid in self.tree():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
        return total / _CLK_TCK

    def memory_mb(self, field: str = "VmHWM") -> float:
        """Sum over the tree of a /proc status field (VmHWM: peak RSS; VmRSS: current)."""
        total_kb = 0
        for pid in self.tree():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(field + ":"):
                        total_kb += int(line.split()[1])
            except OSError:
                continue
        return total_kb / 1024

    def worker_memory_mb(self, field: str = "VmHWM") -> float:
        """The largest single process of the tree (the one worker doing the work with --workers 1)."""
        best = 0.0
        for pid in self.tree():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(field + ":"):
                        best = max(best, int(line.split()[1]) / 1024)
            except OSError:
                continue
        return best

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class UpstreamsProcess(_Proc):
    """bench/upstreams.py in a subprocess; `info` is its JSON description (URLs, env for the service)."""

    def __init__(self, workload: Workload):
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "bench.upstreams", workload.to_json()],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"upstreams failed to start (exit {self.proc.wait()})")
        self.info: dict = json.loads(line)

    def stats(self) -> dict:
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(15)
            except (OSError, subprocess.TimeoutExpired):
                pass
        super().stop()


# GA_ settings every service of this run gets on top of each figure's own (`bench.run --service-env`):
# the same figure with one setting changed, side by side in one session.
EXTRA_SERVICE_ENV: dict[str, str] = {}


def add_service_env(items: list[str]) -> str | None:
    """Each GA_NAME=VALUE of `items` into EXTRA_SERVICE_ENV; the first item that is not one, else None."""
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("GA_"):
            return item
        EXTRA_SERVICE_ENV[key] = value
    return None


def service_environment(settings_env: dict[str, str]) -> dict[str, str]:
    """The service's environment: this process's without its GA_ settings, then the figure's, then
    the run's (EXTRA_SERVICE_ENV), so a setting given to the run wins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GA_")}
    # The bench measures the answer path, not auth: a private trial, said explicitly.
    env.update({"GA_LOG_LEVEL": "WARNING", "GA_AUTH": "disabled", **settings_env, **EXTRA_SERVICE_ENV})
    return env


class ServiceProcess(_Proc):
    """`python -m uvicorn app.main:app` with GA_ settings in the environment, as deployed."""

    def __init__(self, settings_env: dict[str, str], *, workers: int = 1):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = service_environment(settings_env)
        cmd = [
            PYTHON,
            "-m",
            "uvicorn",
            "app.main:app",
            "--http",
            "app.server:HttpProtocol",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        if workers > 1:
            cmd += ["--workers", str(workers)]
        self.command = " ".join(["GA_…=…"] + cmd[1:])
        for attempt in range(2):  # on this shared machine a start-up was once ended by an outside SIGTERM
            self.proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env)
            try:
                wait_http(self.url + "/healthz", self.proc)
                if workers > 1:
                    self._wait_settled(workers)
                return
            except RuntimeError:
                if attempt:
                    raise

    def _wait_settled(self, workers: int, timeout_s: float = 120.0) -> None:
        """/healthz answers once the first worker is up; the others may still be starting (building
        the corpus index, loading models: seconds of CPU each), and the measurement would count their
        start-up and queue requests behind it. Wait until every worker is in the process tree and
        the whole service is idle."""
        deadline = time.monotonic() + timeout_s
        last = self.cpu_s()
        while time.monotonic() < deadline:
            time.sleep(SETTLE_WINDOW_S)
            now = self.cpu_s()
            if len(self.tree()) > workers and now - last < SETTLED_CPU_S:
                return
            last = now
        raise TimeoutError(f"{self.url}: {workers} workers did not settle within {timeout_s:g}s")


class BareProcess(_Proc):
    """bench/bare_app.py: the same uvicorn, one route returning a fixed JSON of the given size."""

    def __init__(self, body_file: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "bench.bare_app", "--port", str(self.port), "--body-file", str(body_file)], cwd=REPO_ROOT
        )
        wait_http(self.url + "/healthz", self.proc)
