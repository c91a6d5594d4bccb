"""Figure 8 — time to first verified sentence: a streamed answer's first content byte against the
non-streamed total for the same question.

The service runs as its own process over simulated upstreams in the harness process: SearXNG-shaped
search, two publishers' pages, and an OpenAI-compatible model that answers with four cited
sentences written word by word (`CHUNK_DELAY_S` per word after `FIRST_TOKEN_S`; the non-streamed
call takes the same time for the whole reply). Each run asks the question twice with the answer
cache bypassed: streamed (time to the first chunk with content) and not (time to the whole body).
"""

from __future__ import annotations

import json
import re
import statistics
import time
from datetime import date, timedelta

import httpx

from bench.config import BenchConfig
from bench.procs import ServiceProcess

NAME = "ttfs"
TITLE = "8. Time to first verified sentence"
CHUNK_DELAY_S = 0.03  # per streamed word: ~33 words/s, a typical hosted model's pace
FIRST_TOKEN_S = 0.3  # the model's time to its first token (every call: planner, composer)
GOAL = 0.6  # issue 11: the first sentence at most this share of the non-streamed total
QUESTION = "What does the Acme Cloud Pro plan cost?"
ANSWER = " ".join(
    [
        "Acme Cloud raised the price of its Pro plan to $30 per month [S1][S2].",
        "The Pro plan includes unlimited projects and priority support [S1][S2].",
        "Existing customers keep their current price until their next renewal date [S1][S2].",
        "Customers who signed up before the change pay the old price until their plan renews [S1][S2].",
    ]
)
PAGES = [
    [
        "Acme Cloud raised the price of its Pro plan to $30 per month on November 3, the company said.",
        "The Pro plan includes unlimited projects, priority support and single sign-on for every team member.",
        "Acme Cloud said existing customers keep their current price until their next renewal date.",
    ],
    [
        "Blog B has learned that the Acme Cloud Pro plan now costs $30 per month, up from $25 earlier this year.",
        "The Pro plan includes unlimited projects and priority support, which our reviewers rate highly for teams.",
        "Customers who signed up before the change will pay the old price until their plan renews, Acme told us.",
    ],
]


def _model_reply(body: dict):
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    if "You plan web searches" in system:
        question = body["messages"][-1]["content"]
        plan = {"needs_search": True, "queries": [question], "freshness_days": 30}
        return {"content": json.dumps(plan), "delay_s": FIRST_TOKEN_S}
    if "You check whether a claim" in system:
        return {"content": json.dumps({"supported": True, "quote": ""}), "delay_s": FIRST_TOKEN_S}
    if body.get("stream"):
        return {"content": ANSWER, "delay_s": FIRST_TOKEN_S, "chunk_delay_s": CHUNK_DELAY_S}
    words = len(re.findall(r"\S+\s*", ANSWER))
    return {"content": ANSWER, "delay_s": FIRST_TOKEN_S + words * CHUNK_DELAY_S}


def _first_sentence_s(client: httpx.Client, url: str, body: dict) -> tuple[float, float, str]:
    """(seconds to the first content chunk, seconds to [DONE], the streamed status)."""
    t0 = time.perf_counter()
    first, status = None, ""
    with client.stream("POST", url, json={**body, "stream": True}) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if first is None and chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                first = time.perf_counter() - t0
            status = (chunk.get("grounding") or {}).get("status", status)
    return first if first is not None else float("nan"), time.perf_counter() - t0, status


def run(cfg: BenchConfig) -> dict:
    from simulators import OpenAIChatServer, SearxngServer, WebServer, searx_result

    runs = 2 if cfg.quick else 9
    searxng, web, llm = SearxngServer(), WebServer(), OpenAIChatServer()
    for server in (searxng, web, llm):
        server.start()
    try:
        urls = [
            web.site(name).add_article(
                f"/acme-{i}", f"Acme Cloud Pro price ({name})", paragraphs, published=date.today() - timedelta(days=2)
            )
            for i, (name, paragraphs) in enumerate(zip(("news-a.test", "blog-b.test"), PAGES))
        ]
        searxng.set_default(
            [searx_result(u, f"Acme Cloud Pro price {i}", "Acme Cloud Pro price") for i, u in enumerate(urls)]
        )
        llm.default = _model_reply
        env = {
            "GA_SEARCH_PROVIDERS": "searxng",
            "GA_SEARXNG_URL": searxng.url,
            "GA_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
            "GA_FETCH_ALLOWED_PORTS": str(web.port),
            "GA_LLM_BASE_URL": llm.url + "/v1",
            "GA_LLM_API_KEY": "sk-bench",
            "GA_LLM_MAX_RETRIES": "0",
        }
        body = {"model": "grounded-answer", "messages": [{"role": "user", "content": QUESTION}]}
        body["grounding"] = {"cache": "bypass", "freshness_days": 30}
        rows = []
        with ServiceProcess(env) as svc, httpx.Client(timeout=60, trust_env=False) as client:
            url = svc.url + "/v1/chat/completions"
            client.post(url, json=body)  # warm-up: connections, tiktoken, first imports
            for _ in range(runs):
                t0 = time.perf_counter()
                whole = client.post(url, json=body).json()
                total = time.perf_counter() - t0
                first, streamed, status = _first_sentence_s(client, url, body)
                rows.append(
                    {
                        "first_sentence_s": first,
                        "stream_total_s": streamed,
                        "non_streamed_s": total,
                        "status": whole["grounding"]["status"],
                        "stream_status": status,
                        "composer": whole["grounding"]["composer"],
                    }
                )
    finally:
        for server in (llm, web, searxng):
            server.stop()
    first = statistics.median(r["first_sentence_s"] for r in rows)
    total = statistics.median(r["non_streamed_s"] for r in rows)
    ratio = first / total if total else None
    return {
        "runs": runs,
        "rows": rows,
        "chunk_delay_s": CHUNK_DELAY_S,
        "first_token_s": FIRST_TOKEN_S,
        "first_sentence_s": first,
        "stream_total_s": statistics.median(r["stream_total_s"] for r in rows),
        "non_streamed_s": total,
        "ratio": ratio,
        "targets": {"first_sentence_share": {"value": ratio, "met": None if ratio is None else ratio <= GOAL}},
    }


def render(res: dict) -> str:
    statuses = sorted({r["status"] for r in res["rows"]} | {r["stream_status"] for r in res["rows"]})
    return "\n".join(
        [
            f"A four-sentence cited answer from the simulated model ({res['first_token_s'] * 1000:.0f} ms to the "
            f"first token, then one word every {res['chunk_delay_s'] * 1000:.0f} ms; the non-streamed call takes "
            f"as long for the whole reply), search and two pages on the simulated upstreams, answer cache "
            f"bypassed; median over {res['runs']} runs (answers: {', '.join(statuses)}).",
            "",
            "| | seconds |",
            "|---|---|",
            f"| `stream: true`, first verified sentence (first content chunk) | {res['first_sentence_s']:.3f} |",
            f"| `stream: true`, whole stream (to `[DONE]`) | {res['stream_total_s']:.3f} |",
            f"| not streamed, whole answer | {res['non_streamed_s']:.3f} |",
            "",
            f"First sentence / non-streamed total: **{res['ratio']:.2f}** (goal ≤ {GOAL}). The first sentence "
            "leaves once the second has begun and the first is verified (lexical support; the judge only for "
            "an undecided sentence), so it costs the model's first-token latency plus one sentence of writing.",
        ]
    )
