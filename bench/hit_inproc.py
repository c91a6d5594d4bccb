"""Answer-cache hits in-process: CPU µs per hit through the app's ASGI stack, no sockets.

    .venv/bin/python -m bench.hit_inproc                  # service hit vs bench/bare_app.py
    .venv/bin/python -m bench.hit_inproc --middlewares    # ... and the app without each middleware

Embedded defaults (GA_AUTH=disabled): the first docs-corpus question of the labelled set is answered
once, then asked again and again (an answer-cache hit each time). Per variant: the fastest of
`--rounds` rounds of `--n` calls, by process CPU time (the machine is shared: the minimum is the
least disturbed). Where figure 3 measures hits over real sockets against wrk, this shows what the
app itself adds per hit and what each of its pure-ASGI middlewares costs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

import orjson

os.environ.setdefault("GA_AUTH", "disabled")
os.environ.setdefault("GA_LOG_LEVEL", "WARNING")

from app.main import create_app  # noqa: E402  (settings read from the environment set above)
from bench.bare_app import create_app as bare_app  # noqa: E402
from bench.fig_embedded import docs_questions  # noqa: E402

PATH = "/v1/chat/completions"
# RequestIdMiddleware is left in: the routes read the request id it sets.
MIDDLEWARES = ("BodyGuard", "QuotaHeaders", "CancelOnDisconnect", "AdmissionMiddleware", "HttpMetricsMiddleware")


async def call(app: Any, body: bytes) -> list[dict]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"x"), (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)  # no disconnect: the client waits for its answer
        return {"type": "http.disconnect"}

    out: list[dict] = []

    async def send(message: dict) -> None:
        out.append(message)

    await app(scope, receive, send)
    return out


def _cache_header(messages: list[dict]) -> bytes:
    start = next(m for m in messages if m["type"] == "http.response.start")
    return dict(start["headers"]).get(b"x-grounding-cache", b"")


async def _fastest(app: Any, body: bytes, n: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n):
            await call(app, body)
        best = min(best, (time.process_time() - t) / n * 1e6)
    return best


async def _service_hit_us(body: bytes, n: int, rounds: int, without: str = "") -> tuple[float, Any]:
    app = create_app()
    if without:
        app.user_middleware = [m for m in app.user_middleware if getattr(m.cls, "__name__", "") != without]
    async with app.router.lifespan_context(app):
        await call(app, body)
        hit = await call(app, body)
        if b"answer=hit" not in _cache_header(hit):
            raise SystemExit(f"the second answer was not an answer-cache hit: {_cache_header(hit)!r}")
        return await _fastest(app, body, n, rounds), hit


async def main(n: int, rounds: int, middlewares: bool) -> None:
    body = orjson.dumps({"model": "x", "messages": docs_questions()[0]})
    service, hit = await _service_hit_us(body, n, rounds)
    document = orjson.loads(b"".join(m.get("body", b"") for m in hit if m["type"] == "http.response.body"))
    bare = await _fastest(bare_app(document), body, n, rounds)
    print(f"service hit {service:.0f} µs, bare route {bare:.0f} µs, the app adds {service - bare:.0f} µs")
    if middlewares:
        for name in MIDDLEWARES:
            without, _ = await _service_hit_us(body, n, rounds, without=name)
            print(f"  without {name}: {without:.0f} µs ({service - without:+.0f})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--middlewares", action="store_true", help="also measure the app without each middleware")
    args = ap.parse_args()
    asyncio.run(main(args.n, args.rounds, args.middlewares))
