"""GA_EXTRACT_PROCESSES over HTTP: pages extracted in worker processes give the answer the threads give,
and a service process started with two such processes has them as descendants (app/cpu_processes.py)."""

from __future__ import annotations

import os

import httpx

from bench.procs import process_tree
from simulators.searxng import searx_result
from tests.api.helpers import ACME_REPORTS, TODAY, chat

QUESTION = "How much does the Acme Cloud Pro plan cost per month?"


def _answer(svc) -> dict:
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION, cache="bypass"), timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def test_pages_extracted_in_worker_processes_answer_as_the_threads_do(searxng, web, service_factory):
    urls = [
        web.site(f"news-{i}.test").add_article("/acme", "Acme Cloud Pro price", p, published=TODAY)
        for i, p in enumerate(ACME_REPORTS)
    ]
    searxng.set_default([searx_result(u, "Acme Cloud Pro", "Acme Cloud Pro plan price") for u in urls])
    upstreams = {**searxng.settings_overrides(), **web.settings_overrides()}
    before = set(process_tree(os.getpid()))
    threads = service_factory(**upstreams)
    in_threads = _answer(threads)
    processes = service_factory(**upstreams, extract_processes=2)
    # its two children (and the fork server, unless an earlier test started it), there before the
    # service answers its first request
    assert len(set(process_tree(os.getpid())) - before) >= 2
    in_processes = _answer(processes)

    assert in_processes["grounding"]["status"] == in_threads["grounding"]["status"] == "grounded"
    assert in_processes["choices"][0]["message"]["content"] == in_threads["choices"][0]["message"]["content"]
    assert [s["url"] for s in in_processes["grounding"]["sources"]] == [
        s["url"] for s in in_threads["grounding"]["sources"]
    ]
    assert "$30" in in_processes["choices"][0]["message"]["content"]
