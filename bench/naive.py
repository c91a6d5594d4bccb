"""The naive baseline: the same work done one step at a time against the same simulators.

Plan (one model call), search each query in turn, fetch each result page in turn, compose (one model
call). No extraction, no ranking: it only shows what doing the I/O sequentially costs.
"""

from __future__ import annotations

import json
import time

import httpx

from bench.workload import PLANNER_PREFIX, Workload


def naive_answer(client: httpx.Client, info: dict, workload: Workload, i: int) -> float:
    """One answer, sequentially; returns its wall seconds."""
    t0 = time.perf_counter()
    question = workload.question(i)
    llm = info["llm_url"] + "/chat/completions"
    plan = client.post(
        llm,
        json={
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": PLANNER_PREFIX + " (naive baseline). Return JSON."},
                {"role": "user", "content": question},
            ],
        },
    ).json()
    queries = json.loads(plan["choices"][0]["message"]["content"])["queries"]
    urls: list[str] = []
    for q in queries:
        results = client.get(info["searxng_url"] + "/search", params={"q": q, "format": "json"}).json()["results"]
        urls += [r["url"] for r in results if r["url"] not in urls]
    texts = []
    for url in urls[: workload.pages_per_answer]:
        texts.append(client.get(url).text[:2000])
    client.post(
        llm,
        json={
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You answer the user's question using only the evidence."},
                {"role": "user", "content": "\n\n".join(texts) + "\n\nQuestion: " + question},
            ],
        },
    )
    return time.perf_counter() - t0


def run_naive(info: dict, workload: Workload, indices: list[int]) -> list[float]:
    with httpx.Client(timeout=60.0, trust_env=False) as client:
        return [naive_answer(client, info, workload, i) for i in indices]
