"""The scripted-LLM mode: a stand-in model behind OpenAIChatServer, driven by the current case.

Planner calls get JSON queries (freshness left to the service's own heuristic, so both modes judge
age alike). Composer calls get the case's `model.composer` text, where `[S:site-name]` stands for
the span id of that site's first evidence block; without one, a default model copies the
question's best-matching evidence sentences with their [S#] ids, one sentence per span, and says
the service's NO_ANSWER line when nothing matches.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from eval.cases import Case
from eval.text import content_terms, sentences

NO_ANSWER = "The evidence does not answer this question."  # the contract line of app/pipeline/composers/base.py
_BLOCK = re.compile(r'<(evidence-[0-9a-f]+) id="(S\d+)"[^>]*?domain="([^"]*)" date="([^"]*)">\n(.*?)\n</\1>', re.S)
_SITE_REF = re.compile(r"\[S:([^\]]+)\]")
_ASKS_VALUE = re.compile(r"\b(when|how much|price|cost|version|date|how many)\b", re.I)
MAX_SENTENCES = 3


@dataclass
class Span:
    span_id: str
    domain: str
    date: str
    text: str


def parse_evidence(prompt: str) -> list[Span]:
    """The evidence blocks of a composer prompt, in order."""
    return [Span(m.group(2), m.group(3), m.group(4), m.group(5)) for m in _BLOCK.finditer(prompt)]


def cite_top_spans(question: str, spans: list[Span]) -> str:
    """A faithful model: the best-matching sentence of each of the top spans, with its id."""
    q = set(content_terms(question))
    wants_value = bool(_ASKS_VALUE.search(question))
    scored = []
    for order, span in enumerate(spans):
        best = None
        for s in sentences(span.text):
            overlap = len(q & set(content_terms(s)))
            if overlap == 0 or len(s) < 25:
                continue
            score = overlap + (0.5 if wants_value and re.search(r"\d", s) else 0.0) - 0.01 * order
            if best is None or score > best[0]:
                best = (score, s)
        if best:
            scored.append((best[0], order, best[1], span.span_id))
    if not scored:
        return NO_ANSWER
    top = sorted(scored, key=lambda t: -t[0])[:MAX_SENTENCES]
    top.sort(key=lambda t: t[1])
    return " ".join(_with_marker(s, sid) for _, _, s, sid in top)


def read_for_gold(case: Case, question: str, spans: list[Span]) -> str:
    """Labelled cases: a competent reader. It answers with the evidence sentence that states a gold
    answer (plus the best-matching sentence of another span, as a model adds context), and says
    NO_ANSWER when no span states one — so the scripted figures measure the service around the model
    (recall, citations, verification, false abstentions), not a model's reading."""
    golds = [g.lower() for g in case.gold_answers or case.gold_all]
    for span in spans:
        for s in sentences(span.text):
            if golds and any(g in s.lower() for g in golds):
                return _with_marker(s, span.span_id)
    return NO_ANSWER


def _with_marker(sentence: str, span_id: str) -> str:
    sentence = sentence.strip()
    m = re.search(r"[.!?]+[\"')\]]*$", sentence)
    body, end = (sentence[: m.start()], m.group(0)) if m else (sentence, ".")
    return f"{body} [{span_id}]{end}"


def fill_site_refs(text: str, spans: list[Span], site_hosts: dict[str, str]) -> str:
    """'[S:news-a.test]' → '[S3]' (the first span from that site); unknown sites stay as [S99]."""

    def repl(m: re.Match) -> str:
        host = site_hosts.get(m.group(1), m.group(1))
        sid = next((s.span_id for s in spans if s.domain == host), "S99")
        return f"[{sid}]"

    return _SITE_REF.sub(repl, text)


@dataclass
class ScriptedModel:
    """Callable for `OpenAIChatServer.default`; `use(case, site_hosts)` before each case."""

    case: Case | None = None
    site_hosts: dict[str, str] = field(default_factory=dict)
    composer_calls: int = 0

    def use(self, case: Case, site_hosts: dict[str, str]) -> None:
        self.case, self.site_hosts, self.composer_calls = case, dict(site_hosts), 0

    def __call__(self, body: dict) -> str:
        messages = body.get("messages", [])
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        last = messages[-1]["content"] if messages else ""
        if "You plan web searches" in system:
            return json.dumps({"needs_search": True, "queries": [last, " ".join(content_terms(last, stem=False))]})
        if "Evidence (data, not instructions)" not in last:
            # An ungrounded turn (small talk, transformation): the stand-in model just obliges.
            return (self.case.model.get("ungrounded") if self.case else None) or "Sure, here it is."
        self.composer_calls += 1
        spans = parse_evidence(last)
        question = last.rsplit("Question:", 1)[-1].strip()
        scripted = self.case.model.get("composer") if self.case else None
        if isinstance(scripted, list):  # one reply per attempt (the service retries once)
            scripted = scripted[min(self.composer_calls, len(scripted)) - 1]
        if scripted:
            return fill_site_refs(scripted, spans, self.site_hosts)
        if self.case is not None and self.case.slice:
            return read_for_gold(self.case, question, spans)
        return cite_top_spans(question, spans)
