"""Simulated upstreams in their own process: SearXNG, the web (240 sites), the OpenAI chat model.

    python -m bench.upstreams '<Workload JSON>'

Prints one JSON line {"searxng_url", "llm_url", "web_port", "env"} once every server listens, then
answers line commands on stdin: "stats" prints request counts; "quit" (or EOF) stops everything.
Running them here keeps the service's process (and its GIL) to itself.
"""

from __future__ import annotations

import json
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.workload import PLANNER_PREFIX, Workload, composer_reply_text, load_pages_bytes, request_of  # noqa: E402
from simulators import OpenAIChatServer, SearxngServer, WebServer, searx_result  # noqa: E402

HTML = "text/html; charset=utf-8"


class Upstreams:
    def __init__(self, workload: Workload):
        self.workload = workload
        self.searxng = SearxngServer()
        self.web = WebServer(n_sites=workload.n_sites)
        self.llm = OpenAIChatServer()
        self._tokens = None
        if workload.count_tokens:
            from app.settings import Settings
            from app.tokens import TokenCounter

            settings = Settings()
            self._tokens = TokenCounter(settings.tiktoken_cache_dir, settings.token_encoding)

    def start(self) -> None:
        for server in (self.searxng, self.web, self.llm):
            server.start()
        self._serve_pages()
        lat = self.workload.latencies
        self.searxng.latency_s = lat.search_s
        self.searxng.set_default(self._search)
        self.llm.default = self._chat

    def stop(self) -> None:
        for server in (self.llm, self.web, self.searxng):
            server.stop()

    def _serve_pages(self) -> None:
        w = self.workload
        bodies = load_pages_bytes(w)
        sites = [self.web.site(f"s{j}.test") for j in range(w.n_sites)]
        for i in range(w.n_requests):
            for k, pid in enumerate(w.pages_of(i)):
                sites[w.site_index(i, k)].add_page(
                    w.path(i, k), w.page_body(bodies[pid], i, k), content_type=HTML, delay_s=w.fetch_delay_s(i, k)
                )

    def url(self, i: int, k: int) -> str:
        return f"http://127.0.0.{2 + self.workload.site_index(i, k)}:{self.web.port}{self.workload.path(i, k)}"

    # --- scripted behaviour ---------------------------------------------------------------------

    def _search(self, query: str, params: dict) -> list[dict]:
        i = request_of(query)
        if i is None or i >= self.workload.n_requests:
            return []
        w = self.workload
        published = date.today() - timedelta(days=30)
        out = []
        for k, pid in enumerate(w.pages_of(i)):
            text = w.gold_text[pid]
            out.append(
                searx_result(
                    self.url(i, k),
                    " ".join(text.split()[:8]),
                    " ".join(text.split()[:30]),
                    published=published,
                    position=k + 1,
                )
            )
        return out

    def _chat(self, body: dict) -> dict:
        messages = body.get("messages") or []
        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        lat = self.workload.latencies
        if isinstance(system, str) and system.startswith(PLANNER_PREFIX):
            i = request_of(user)
            queries = self.workload.planner_queries(i) if i is not None else [user[:100]]
            return {"content": {"needs_search": True, "queries": queries, "freshness_days": 365}, "delay_s": lat.plan_s}
        reply: dict = {"content": composer_reply_text(user if isinstance(user, str) else ""), "delay_s": lat.compose_s}
        if self._tokens is not None:
            # Report usage the way the real API does (tiktoken counts), so cost.prompt_tokens is true.
            prompt = sum(self._tokens.count(m.get("content") or "") + 4 for m in messages)
            reply["usage"] = {"prompt_tokens": prompt}
        return reply

    def stats(self) -> dict:
        return {
            "search_requests": len(self.searxng.requests.all()),
            "web_requests": len(self.web.requests.all()),
            "llm_requests": len(self.llm.requests.all()),
            "llm_unscripted": self.llm.unscripted,
        }

    def describe(self) -> dict:
        env = {
            "GA_SEARCH_PROVIDERS": "searxng",
            "GA_SEARXNG_URL": self.searxng.url,
            "GA_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
            "GA_FETCH_ALLOWED_PORTS": str(self.web.port),
        }
        return {
            "searxng_url": self.searxng.url,
            "llm_url": self.llm.url + "/v1",
            "web_port": self.web.port,
            "env": env,
            "llm_env": {
                "GA_LLM_BASE_URL": self.llm.url + "/v1",
                "GA_LLM_API_KEY": "sk-bench",
                "GA_LLM_MAX_RETRIES": "0",
            },
        }


def main() -> None:
    workload = Workload.from_json(sys.argv[1])
    up = Upstreams(workload)
    up.start()
    print(json.dumps(up.describe()), flush=True)
    try:
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "stats":
                print(json.dumps(up.stats()), flush=True)
            elif cmd == "quit":
                break
    finally:
        up.stop()


if __name__ == "__main__":
    main()
