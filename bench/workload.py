"""The benchmark workload: which question request i asks, which pages answer it, how slow each
upstream is. Deterministic from its parameters, so the harness (which computes critical paths and
token baselines) and the upstreams process (which serves the pages) agree without talking.

Request i asks about real pages from ../shared/bench-data/aeb: pages (6i + k) mod 181 for k < 6,
each served at a unique URL /r<i>/p<k> on its own site (127.0.0.x), so no URL repeats across
requests and no host carries more than two of the requests in flight (the fetcher's per-host
limit is a politeness rule, not what these figures measure).

With `cold_pages`, the copy served for request i also carries a word of its own at the end of every
sentence (`page_body`), so no content hash and no sentence repeats across requests: the service's
content-keyed memos (extracted pages, passages, sentence scores) start cold for every answer, as
they do for pages never seen before. Without it, 181 pages serve every request and from the second
round on those memos answer for most of the CPU work.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from functools import cached_property

from bench.common import BENCH_DATA, read_gz

AEB = BENCH_DATA / "aeb"
TOKEN_RE = re.compile(r"zb(\d{6})")
PLANNER_PREFIX = "You plan web searches"
_EVIDENCE_RE = re.compile(r'<(evidence-[0-9a-f]+) id="(S\d+)"[^>]*>\n(.*?)\n</\1>', re.S)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_SENTENCE_END_RE = re.compile(rb"([a-z]{2,})([.!?])(\s+[A-Z])")
PROSE_WORDS = 4  # a line of fewer words is a heading, byline or label, not a sentence to quote


@dataclass(frozen=True)
class Latencies:
    """Simulated upstream latencies in seconds; fetch delays are drawn per page in [min, max]."""

    plan_s: float = 0.0
    search_s: float = 0.0
    fetch_min_s: float = 0.0
    fetch_max_s: float = 0.0
    compose_s: float = 0.0


@dataclass(frozen=True)
class Workload:
    n_requests: int
    pages_per_answer: int = 6
    n_sites: int = 240
    latencies: Latencies = Latencies()
    seed: int = 7
    count_tokens: bool = False  # the chat simulator reports tiktoken usage (token figure)
    cold_pages: bool = False  # every served copy differs in every sentence (see the module's doc)

    # --- (de)serialisation between processes --------------------------------------------------

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Workload:
        data = json.loads(text)
        data["latencies"] = Latencies(**data["latencies"])
        return cls(**data)

    # --- the pages ----------------------------------------------------------------------------

    @cached_property
    def page_ids(self) -> list[str]:
        gold = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
        return sorted(gold)

    @cached_property
    def gold_text(self) -> dict[str, str]:
        gold = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
        return {pid: item["articleBody"] for pid, item in gold.items()}

    def page_html(self, page_id: str) -> bytes:
        return read_gz(AEB / "html" / f"{page_id}.html.gz")

    def page_body(self, raw: bytes, i: int, k: int) -> bytes:
        """What /r<i>/p<k> serves: the page itself, or with `cold_pages` a copy whose sentences
        each end in a word naming (i, k) — a letter word, so it reads as prose to every stage."""
        if not self.cold_pages:
            return raw
        word = _letters(self.pages_per_answer * i + k).encode()
        return _SENTENCE_END_RE.sub(rb"\1 " + word + rb"\2\3", raw)

    def pages_of(self, i: int) -> list[str]:
        n = len(self.page_ids)
        return [self.page_ids[(self.pages_per_answer * i + k) % n] for k in range(self.pages_per_answer)]

    def site_index(self, i: int, k: int) -> int:
        return (self.pages_per_answer * i + k) % self.n_sites

    @staticmethod
    def path(i: int, k: int) -> str:
        return f"/r{i}/p{k}"

    def fetch_delay_s(self, i: int, k: int) -> float:
        lat = self.latencies
        if lat.fetch_max_s <= 0:
            return 0.0
        rng = random.Random(self.seed * 1_000_003 + i * 101 + k)
        return round(rng.uniform(lat.fetch_min_s, lat.fetch_max_s), 3)

    # --- the questions ------------------------------------------------------------------------

    def keywords(self, i: int, n: int = 8) -> list[str]:
        """Content words from the first page's text: the question is about that page."""
        text = self.gold_text[self.pages_of(i)[0]]
        words = [w for w in _WORD_RE.findall(text[:2000]) if len(w) > 3]
        seen: list[str] = []
        for w in words:
            if w.lower() not in (s.lower() for s in seen):
                seen.append(w)
            if len(seen) >= n:
                break
        return seen or ["article"]

    def question(self, i: int) -> str:
        return f"What does the article say about {' '.join(self.keywords(i))}? (ref zb{i:06d})"

    def body(self, i: int, grounding: dict | None = None) -> dict:
        return {
            "model": "grounded-answer",
            "messages": [{"role": "user", "content": self.question(i)}],
            "grounding": {
                "mode": "always",
                "cache": "bypass",
                "min_sources": 1,
                "freshness_days": 3650,
                **(grounding or {}),
            },
        }

    def planner_queries(self, i: int) -> list[str]:
        kw = self.keywords(i)
        return [f"zb{i:06d} {' '.join(kw[:4])}", f"zb{i:06d} {' '.join(kw[4:8]) or 'article'}"]

    def critical_path_s(self, i: int, fetched_ks: list[int] | None = None, *, llm: bool = True) -> float:
        """Ideal: plan + slowest search + slowest needed fetch + compose (searches run together)."""
        ks = range(self.pages_per_answer) if fetched_ks is None else fetched_ks
        lat = self.latencies
        slowest = max((self.fetch_delay_s(i, k) for k in ks), default=0.0)
        return (lat.plan_s if llm else 0.0) + lat.search_s + slowest + (lat.compose_s if llm else 0.0)


def _letters(n: int) -> str:
    """n as a lowercase word: "qx" and base-26 letters (no digit, so tokenisers keep it one word)."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(97 + r) + out
        if n == 0:
            return "qx" + out


def request_of(query: str) -> int | None:
    m = TOKEN_RE.search(query)
    return int(m.group(1)) if m else None


def page_key(url: str) -> tuple[int, int] | None:
    """(request, k) from a served URL's /r<i>/p<k> path."""
    m = re.search(r"/r(\d+)/p(\d+)$", url)
    return (int(m.group(1)), int(m.group(2))) if m else None


def composer_reply_text(prompt: str) -> str:
    """What a faithful model answers: the first sentence of S1 and S2, each cited. The first sentence
    of a span's first line of prose: a model does not fold a heading or byline ("Key Points",
    "Associated Press") into the sentence after it (which the verifier cannot settle alone: one
    judge call more for ~15 % of answers, until 2026-12-04)."""
    spans = [(sid, text) for _, sid, text in _EVIDENCE_RE.findall(prompt)]
    out = []
    for sid, text in spans[:2]:
        lines = [line for line in text.splitlines() if len(line.split()) >= PROSE_WORDS] or [text]
        sentence = re.split(r"(?<=[.!?])\s+", " ".join(lines[0].split()))[0]
        words = sentence.rstrip(".!?").split()[:40]
        if words:
            out.append(f"{' '.join(words)} [{sid}].")
    return " ".join(out) or "The evidence says little [S1]."


def load_pages_bytes(workload: Workload) -> dict[str, bytes]:
    return {pid: workload.page_html(pid) for pid in workload.page_ids}
