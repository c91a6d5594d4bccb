"""The soak's upstreams (bench/soak.py): the simulators of bench/upstreams.py (SearXNG, the web, the
scripted OpenAI chat model), each behind a fault-injecting TCP proxy (simulators/fault_proxy.py), in
their own process (`python -m bench.soak --serve '<json>'`: serve) driven over stdin/stdout by
FaultyUpstreamsProcess; and the faults each proxy draws (FAULTS).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from bench.common import REPO_ROOT
from bench.procs import PYTHON, UpstreamsProcess
from bench.workload import Workload

# Per upstream: every exchange (request/response on a connection) draws its faults.
FAULTS: dict[str, dict] = {
    "search": {
        "latency_ms": 10,
        "spike_prob": 0.05,
        "spike_ms": [1000, 5000],  # past GA_SEARCH_TIMEOUT_S (4 s) now and then
        "reset_prob": 0.02,
        "reset_after_bytes": [0, 4096],
        "slow_write_prob": 0.05,
        "trickle_bytes": 512,
        "trickle_interval_ms": 10,
        "refuse_every_s": 60,
        "refuse_for_s": 2,
    },
    "llm": {
        "latency_ms": 10,
        "spike_prob": 0.05,
        "spike_ms": [1000, 4000],
        "reset_prob": 0.02,
        "reset_after_bytes": [0, 1024],
        "slow_write_prob": 0.05,
        "trickle_bytes": 64,
        "trickle_interval_ms": 10,
        "refuse_every_s": 90,
        "refuse_for_s": 2,
    },
    "web": {
        "latency_ms": 5,
        "spike_prob": 0.05,
        "spike_ms": [1000, 5000],
        "reset_prob": 0.03,
        "reset_after_bytes": [0, 32768],
        "slow_write_prob": 0.05,
        "slow_read_prob": 0.02,
        "trickle_bytes": 1024,
        "trickle_interval_ms": 10,
        "refuse_every_s": 75,
        "refuse_for_s": 1,
    },
}
SMOKE_REFUSALS = {"refuse_every_s": 4, "refuse_for_s": 0.5}  # at least one window in a 10 s run


def serve(spec: dict) -> None:
    """`python -m bench.soak --serve '<json>'`: the upstreams of bench/upstreams.py behind fault proxies."""
    from bench.upstreams import Upstreams
    from simulators import FaultProxy
    from simulators.fault_proxy import Faults

    class FaultyUpstreams(Upstreams):
        def start(self) -> None:
            super().start()
            hosts = ["127.0.0.1"] + [f"127.0.0.{2 + j}" for j in range(self.workload.n_sites)]
            f = spec["faults"]
            self.proxies = {
                "search": FaultProxy(
                    self.searxng.host, self.searxng.port, faults=Faults(**f["search"]), seed=11, name="fault-search"
                ),
                "llm": FaultProxy(self.llm.host, self.llm.port, faults=Faults(**f["llm"]), seed=12, name="fault-llm"),
                "web": FaultProxy(
                    None, self.web.port, listen_hosts=hosts, faults=Faults(**f["web"]), seed=13, name="fault-web"
                ),
            }
            for proxy in self.proxies.values():
                proxy.start()

        def stop(self) -> None:
            for proxy in getattr(self, "proxies", {}).values():
                proxy.stop()
            super().stop()

        def url(self, i: int, k: int) -> str:
            port = self.proxies["web"].port
            return f"http://127.0.0.{2 + self.workload.site_index(i, k)}:{port}{self.workload.path(i, k)}"

        def stats(self) -> dict:
            return {**super().stats(), "faults": {name: p.stats() for name, p in self.proxies.items()}}

        def describe(self) -> dict:
            p = self.proxies
            return {
                "env": {
                    "GA_SEARCH_PROVIDERS": "searxng",
                    "GA_SEARXNG_URL": p["search"].url,
                    "GA_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
                    "GA_FETCH_ALLOWED_PORTS": str(p["web"].port),
                    "GA_LLM_BASE_URL": p["llm"].url + "/v1",
                    "GA_LLM_API_KEY": "sk-bench",
                },
                "direct": {"searxng": self.searxng.url, "llm": self.llm.url, "web_port": self.web.port},
            }

    up = FaultyUpstreams(Workload.from_json(json.dumps(spec["workload"])))
    up.start()
    print(json.dumps(up.describe()), flush=True)
    try:
        for line in sys.stdin:
            cmd, _, arg = line.strip().partition(" ")
            if cmd == "stats":
                print(json.dumps(up.stats()), flush=True)
            elif cmd == "set":  # set <proxy> <json>: change one proxy's faults at run time
                name, _, changes = arg.partition(" ")
                print(json.dumps(dataclasses.asdict(up.proxies[name].set(**json.loads(changes)))), flush=True)
            elif cmd == "quit":
                break
    finally:
        up.stop()


class FaultyUpstreamsProcess(UpstreamsProcess):
    def __init__(self, workload: Workload, faults: dict):
        spec = {"workload": json.loads(workload.to_json()), "faults": faults}
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "bench.soak", "--serve", json.dumps(spec)],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"upstreams failed to start (exit {self.proc.wait()})")
        self.info: dict = json.loads(line)
