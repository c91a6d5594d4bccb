"""CPU per answer with the extraction fallback off and on, side by side in one run.

    .venv/bin/python -m bench.ab_fallback false true false true

The figure-2 workload (zero-latency upstreams, six real aeb pages per answer at fresh URLs,
`cache: bypass`, extractive composer, 1 worker), 40 answers at concurrency 8 after 8 warm-up answers,
one fresh service per argument with GA_EXTRACT_FALLBACK set to it. Run against an older checkout
(a `git worktree` with the same .venv) to compare commits on the same day.
"""

from __future__ import annotations

import sys

from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.workload import Workload

ANSWERS = 40
WARM = 8
CONCURRENCY = 8


def main(flags: list[str]) -> None:
    workload = Workload(n_requests=len(flags) * (ANSWERS + WARM))
    nxt = 0
    with UpstreamsProcess(workload) as up:
        for flag in flags:
            env = {**up.info["env"], "GA_EXTRACT_FALLBACK": flag}
            with ServiceProcess(env, workers=1) as svc:
                url = svc.url + "/v1/chat/completions"
                closed_loop(url, [(i, workload.body(i)) for i in range(nxt, nxt + WARM)], 2)
                nxt += WARM
                cpu0 = svc.cpu_s()
                samples, wall = closed_loop(
                    url, [(i, workload.body(i)) for i in range(nxt, nxt + ANSWERS)], CONCURRENCY
                )
                nxt += ANSWERS
                ok = [s for s in samples if s.status == 200]
                per_answer = (svc.cpu_s() - cpu0) / max(1, len(ok)) * 1000
                print(
                    f"GA_EXTRACT_FALLBACK={flag}: {len(ok) / wall:.1f} answers/s, {per_answer:.0f} CPU ms/answer",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:] or ["false", "true"])
