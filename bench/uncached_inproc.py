"""Uncached docs-corpus answers in-process: CPU ms per answer through the app's ASGI stack, no sockets.

    .venv/bin/python -m bench.uncached_inproc [--seconds 20]      # CPU ms per answer
    .venv/bin/python -m bench.uncached_inproc --concurrency 24    # ... with 24 requests in flight
    .venv/bin/python -m bench.uncached_inproc --answers out.jsonl  # ... and every answer, one per line
    .venv/bin/python -m bench.uncached_inproc --passes             # ... and the sentence model's forward passes

Embedded defaults (GA_AUTH=disabled, local corpus, extractive composer): the 100 docs-corpus
questions of figure 9, each with `cache: bypass`, in order and round again, for `--seconds` after 8
warm-up answers. Process CPU time (all threads) over answers. With `--answers`, first one pass over
the questions writes [question, content, status, cited URLs] per line: two commits' files compare
with `cmp` (a change meant to be exact must give byte-identical answers). Where figure 9 measures
answers/s over sockets with 1 and 2 workers, this isolates the CPU of one answer, side by side
between two checkouts (a `git worktree`) on the same machine. With `--passes`, the first pass (one
question at a time, as for `--answers`) also counts the MiniLM forward passes it runs (every caller:
the question embeddings and the injection encoder's reads): a count, not a timing, so it compares
across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

import orjson

os.environ.setdefault("GA_AUTH", "disabled")
os.environ.setdefault("GA_LOG_LEVEL", "WARNING")

from app.main import create_app  # noqa: E402  (settings read from the environment set above)
from bench.fig_embedded import docs_questions  # noqa: E402
from bench.hit_inproc import call  # noqa: E402

WARM = 8


def _body(messages: list[dict]) -> bytes:
    return orjson.dumps({"model": "x", "messages": messages, "grounding": {"cache": "bypass"}})


def _decoded(sent: list[dict]) -> dict[str, Any]:
    return orjson.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


def _count_forward_passes() -> list[int]:
    """Counts every MiniLM forward pass from now on (in any thread): the one-element list is the count."""
    from app.providers.rerank.minilm import MiniLMEncoder

    count = [0]
    hidden = MiniLMEncoder.hidden

    def counted(self, *args, **kwargs):
        count[0] += 1  # the GIL makes one increment atomic enough for a count
        return hidden(self, *args, **kwargs)

    MiniLMEncoder.hidden = counted  # type: ignore[method-assign]
    return count


async def main(seconds: float, answers: str | None, concurrency: int = 1, passes: bool = False) -> dict[str, float]:
    questions = docs_questions()
    bodies = [_body(m) for m in questions]
    app = create_app()
    if passes:
        answers = answers or os.devnull
    async with app.router.lifespan_context(app):
        if answers:
            counted = _count_forward_passes() if passes else None
            with open(answers, "w", encoding="utf-8") as out:
                for messages, body in zip(questions, bodies):
                    doc = _decoded(await call(app, body))
                    message = doc["choices"][0]["message"]
                    urls = [a["url_citation"]["url"] for a in message.get("annotations", [])]
                    row = [messages[-1]["content"], message["content"], doc["grounding"]["status"], urls]
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
            if counted is not None:
                print(f"{counted[0]} MiniLM forward passes over {len(questions)} answers (first pass, one at a time)")
        for body in bodies[:WARM]:
            await call(app, body)
        n, wall, cpu = 0, time.monotonic(), time.process_time()

        async def client() -> None:  # `concurrency` of these share one counter: questions in order
            nonlocal n
            while time.monotonic() - wall < seconds or n == 0:
                i, n = n, n + 1
                await call(app, bodies[i % len(bodies)])

        await asyncio.gather(*(client() for _ in range(concurrency)))
        elapsed = time.monotonic() - wall
        cpu_ms = (time.process_time() - cpu) / n * 1000
    print(
        f"{n} uncached answers at c={concurrency}, {cpu_ms:.1f} ms CPU each, {n / elapsed:.2f}/s "
        f"(pool of {len(bodies)} questions)"
    )
    return {"answers": n, "cpu_ms_per_answer": cpu_ms, "answers_per_s": n / elapsed}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--answers", help="write every answer of one pass here first (JSON lines)")
    ap.add_argument("--concurrency", type=int, default=1, help="requests in flight (asyncio tasks), default 1")
    ap.add_argument("--passes", action="store_true", help="count the sentence model's forward passes in the first pass")
    args = ap.parse_args()
    asyncio.run(main(args.seconds, args.answers, args.concurrency, args.passes))
