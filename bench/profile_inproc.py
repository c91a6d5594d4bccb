"""Where a cold docs answer's CPU goes, by stage: cProfile over one pass of the docs questions.

    .venv/bin/python -m bench.profile_inproc [--answers 185] [--warm 8] [--out /tmp/docs.prof]

The embedded defaults in-process (as bench/uncached_inproc.py), a fresh app, `cache: bypass`, one
question at a time. `asyncio.to_thread` runs its function inline so that the stages that run in
worker threads are profiled too (cProfile sees one thread). Cumulative times of coroutines are
approximate (an awaited call can be counted in more than one caller), so the stage shares below add
up to a little over 100 %; the profile file opens in pstats or snakeviz for more.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import time

os.environ.setdefault("GA_AUTH", "disabled")
os.environ.setdefault("GA_LOG_LEVEL", "WARNING")
os.environ["GA_CPU_THREADS"] = "0"  # the stages' CPU-bound calls through asyncio.to_thread, inlined below

# The stages' entry functions, as pstats names them (file suffix, function).
STAGES = {
    "search (local corpus)": ("app/providers/search/local_corpus.py", "_search"),
    "page extraction (memo misses)": ("app/pipeline/fetch.py", "_extract"),
    "  of which dates": ("app/extract/dates.py", "find_page_dates"),
    "evidence selection": ("app/pipeline/select.py", "select_evidence"),
    "  of which the injection scan": ("app/pipeline/injection.py", "strip_instructions"),
    "  of which passage ranking": ("app/pipeline/select.py", "rank_candidates"),
    "answerability": ("app/pipeline/answerability.py", "assess"),
    "sentence model (question embedding)": ("app/providers/rerank/minilm.py", "embed"),
}


async def _inline(fn, /, *args, **kwargs):
    return fn(*args, **kwargs)


async def _run(answers: int, warm: int, out: str) -> float:
    asyncio.to_thread = _inline  # type: ignore[assignment]  # profile worker-thread stages too
    from app.main import create_app
    from bench.fig_embedded import docs_questions
    from bench.hit_inproc import call
    from bench.uncached_inproc import _body

    bodies = [_body(m) for m in docs_questions()]
    app = create_app()
    async with app.router.lifespan_context(app):
        for body in bodies[:warm]:
            await call(app, body)
        profile = cProfile.Profile()
        cpu = time.process_time()
        profile.enable()
        for i in range(answers):
            await call(app, bodies[(warm + i) % len(bodies)])
        profile.disable()
        cpu_ms = (time.process_time() - cpu) * 1000 / answers
    profile.dump_stats(out)
    return cpu_ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=int, default=185)
    ap.add_argument("--warm", type=int, default=8)
    ap.add_argument("--out", default="/tmp/docs.prof")
    args = ap.parse_args()
    cpu_ms = asyncio.run(_run(args.answers, args.warm, args.out))
    stats = pstats.Stats(args.out).stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in stats.values())
    print(f"{args.answers} answers, {cpu_ms:.1f} ms CPU each under the profiler; profiled time {total:.1f} s")
    for label, (suffix, func) in STAGES.items():
        cum = sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items() if file.endswith(suffix) and name == func)
        print(f"{label:40s} {cum / total:6.1%}  {cum * 1000 / args.answers:7.1f} ms/answer (profiled)")


if __name__ == "__main__":
    main()
