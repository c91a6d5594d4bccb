"""A Redis for tests: the machine's own (127.0.0.1:6379, a dedicated DB) or a throwaway server.

with RedisForTests() as redis_srv:       # raises RedisUnavailable with the reason if neither
    redis_srv.url                        # "redis://127.0.0.1:6379/15" or a throwaway's URL
    redis_srv.flush()                    # empty the test DB
"""

from __future__ import annotations

import shutil
import subprocess
import time

import redis

from ._threaded import free_port

MACHINE_REDIS = "redis://127.0.0.1:6379"
TEST_DB = 15  # never DB 0: the machine's Redis may hold someone else's data


class RedisUnavailable(RuntimeError):
    pass


def ping(url: str, timeout_s: float = 0.5) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError):
        return False


class RedisForTests:
    def __init__(self, machine_url: str = MACHINE_REDIS, db: int = TEST_DB, use_machine: bool = True) -> None:
        self._machine_url, self._db, self._use_machine = machine_url, db, use_machine
        self._proc: subprocess.Popen | None = None
        self.url = ""
        self.source = ""  # "machine" | "throwaway"

    def start(self) -> RedisForTests:
        if self._use_machine and ping(self._machine_url):
            self.url, self.source = f"{self._machine_url}/{self._db}", "machine"
        else:
            self.url, self.source = self._start_throwaway(), "throwaway"
        self.flush()
        return self

    def _start_throwaway(self) -> str:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisUnavailable(
                f"no Redis answers at {self._machine_url} and redis-server is "
                "not installed (apt-get install redis-server)"
            )
        last_err = ""
        for _ in range(3):  # the free port may be taken between probing and binding: retry
            port = free_port()
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--protected-mode",
                    "yes",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            url = f"redis://127.0.0.1:{port}"
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and proc.poll() is None:
                if ping(url, 0.2):
                    self._proc = proc
                    return f"{url}/{self._db}"
                time.sleep(0.02)
            last_err = (
                proc.stderr.read().decode(errors="replace")
                if proc.poll() is not None
                else "did not answer PING within 5 s"
            )
            proc.kill()
            proc.wait()
        raise RedisUnavailable(f"could not start a throwaway redis-server: {last_err.strip()}")

    @property
    def process(self) -> subprocess.Popen | None:
        """The throwaway redis-server, if this instance started one."""
        return self._proc

    def flush(self) -> None:
        client = redis.Redis.from_url(self.url, socket_timeout=2)
        try:
            client.flushdb()
        finally:
            client.close()

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def __enter__(self) -> RedisForTests:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
