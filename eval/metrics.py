"""Per-case scores and suite aggregates. How each one is computed is documented in
docs/EVALUATION.md; the service's own verdicts (claims[].supported) are reported beside the
harness's independent ones, never instead of them."""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from eval.cases import Case
from eval.real_pages import corpus_text
from eval.text import lexical_support, normalised, sentences, strip_markers
from eval.web import InstalledWeb

SUPPORT_THRESHOLD = 0.6  # harness's own lexical-support floor for a cited sentence
_ATTRIBUTION = re.compile(r"^according to \S+ \([^)]*\),\s*", re.I)
_NON_FACTUAL = re.compile(r"^(the evidence does not|sources disagree|here (is|are)|in summary)\b", re.I)
# The service's markers: a run of "[n]" after a space, before a sentence's closing punctuation
# (app/pipeline/cite.py renders them so); code the answer quotes ("a_tuple[0]", "exc_info()[1]") is not one.
_MARKER_RUN = re.compile(r"(?<= )((?:\[\d+\])+)(?=[.!?\"')\]]*(?:\s|$))")


def _markers(content: str) -> list[int]:
    return [int(n) for run in _MARKER_RUN.findall(content) for n in re.findall(r"\d+", run)]


def states(low: str, gold: str) -> bool:
    """Whether lower-cased text holds a gold answer (case-insensitive). A gold that starts or ends with a
    digit must not be part of a longer number there: "79" is not in "bpo-33679", nor "3.5%" in "13.5%"."""
    g = gold.lower()
    if not g or not (g[0].isdigit() or g[-1].isdigit()):
        return g in low
    pattern = ("(?<!\\d)" if g[0].isdigit() else "") + re.escape(g) + ("(?!\\d)" if g[-1].isdigit() else "")
    return re.search(pattern, low) is not None


@dataclass
class ClaimScore:
    text: str
    cited_urls: list[str]
    service_supported: bool
    service_score: float
    own_support: float
    quote_in_source: bool

    @property
    def precise(self) -> bool:
        return self.own_support >= SUPPORT_THRESHOLD


@dataclass
class CaseResult:
    id: str
    mode: str
    tags: list[str]
    expected_status: str
    status: str = "error"
    expected_reason: str | None = None
    reason: str | None = None
    error: str = ""
    status_ok: bool = False
    reason_ok: bool = True
    answer_ok: bool | None = None  # expected grounded: gold present; None otherwise
    leaks: list[str] = field(default_factory=list)  # forbidden strings found in the answer
    citations_valid: bool | None = None  # None when there is no grounded answer
    citation_problems: list[str] = field(default_factory=list)
    claims: list[ClaimScore] = field(default_factory=list)
    factual_sentences: int = 0
    cited_sentences: int = 0
    evidence_recall: bool | None = None  # None when the case names no gold URL
    gold_in_evidence: bool | None = None  # labelled cases: a passage holding a gold answer reached the composer
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    service_ms: float = 0.0
    content: str = ""
    request_id: str = ""

    @property
    def passed(self) -> bool:
        return (
            self.status_ok
            and self.reason_ok
            and not self.leaks
            and self.answer_ok is not False
            and self.citations_valid is not False
            and all(c.precise for c in self.claims)
        )

    @property
    def failures(self) -> list[str]:
        out = []
        if not self.status_ok:
            out.append(f"status {self.status} (expected {self.expected_status})")
        if not self.reason_ok:
            out.append(f"reason {self.reason} (expected {self.expected_reason})")
        if self.answer_ok is False:
            out.append("gold answer missing")
        if self.leaks:
            out.append(f"forbidden in answer: {self.leaks}")
        if self.citations_valid is False:
            out.append(f"invalid citations: {self.citation_problems}")
        out.extend(f"imprecise claim ({c.own_support}): {c.text[:80]}" for c in self.claims if not c.precise)
        if self.error:
            out.append(self.error)
        return out


def _check_citations(body: dict, content: str) -> list[str]:
    citations: list[str] = body.get("citations") or []
    g = body["grounding"]
    sources = {s["url"] for s in g.get("sources", [])}
    fetched = {
        f["final_url"]
        for f in g.get("fetches", [])
        if f["outcome"] in ("ok", "not_modified", "cached", "from_provider")
    }
    # A primary source answered by its search snippet is not fetched by design; it says so (via: snippet).
    fetched |= {s["url"] for s in g.get("sources", []) if s.get("via") == "snippet"}
    problems = [f"[{n}] > {len(citations)} citations" for n in _markers(content) if not 1 <= n <= len(citations)]
    problems += [f"citation not among sources: {u}" for u in citations if u not in sources]
    problems += [f"citation never fetched: {u}" for u in citations if u not in fetched]
    used = set(_markers(content))
    problems += [f"citation [{i}] never referenced" for i in range(1, len(citations) + 1) if i not in used]
    for a in body["choices"][0]["message"].get("annotations") or []:
        uc = a["url_citation"]
        if uc["url"] not in citations:
            problems.append(f"annotation URL not cited: {uc['url']}")
        if not (0 <= uc["start_index"] < uc["end_index"] <= len(content)):
            problems.append(f"annotation offsets outside the content: {uc['start_index']}..{uc['end_index']}")
    return problems


def _score_claims(body: dict, installed: InstalledWeb) -> list[ClaimScore]:
    citations: list[str] = body.get("citations") or []
    out = []
    for claim in body["grounding"].get("claims", []):
        if not claim.get("source_ids"):
            continue
        urls = [citations[n - 1] for n in claim["source_ids"] if 1 <= n <= len(citations)]
        text = _ATTRIBUTION.sub("", claim["text"])
        pages = [installed.page_text.get(u) or corpus_text(u) for u in urls]
        own = max((lexical_support(text, p) for p in pages), default=0.0)
        quote = normalised(claim.get("quote") or "")
        out.append(
            ClaimScore(
                text=claim["text"],
                cited_urls=urls,
                service_supported=bool(claim.get("supported")),
                service_score=float(claim.get("support_score") or 0.0),
                own_support=own,
                quote_in_source=bool(quote) and any(quote in normalised(p) for p in pages),
            )
        )
    return out


def _coverage(content: str) -> tuple[int, int]:
    factual = cited = 0
    for s in sentences(content):
        plain = strip_markers(s).strip()
        if len(plain.split()) < 4 or plain.endswith("?") or _NON_FACTUAL.match(plain):
            continue
        factual += 1
        cited += bool(_markers(s))
    return factual, cited


def score_case(
    case: Case, mode: str, installed: InstalledWeb, body: dict | None, latency_ms: float, error: str = ""
) -> CaseResult:
    r = CaseResult(
        id=case.id,
        mode=mode,
        tags=case.tags,
        expected_status=case.expected_status,
        expected_reason=case.expected_reason,
        latency_ms=round(latency_ms, 1),
        error=error,
    )
    if body is None or "grounding" not in body:
        r.error = error or f"no grounded-answer body: {str(body)[:200]}"
        r.reason_ok = case.expected_reason is None
        return r
    g = body["grounding"]
    content = body["choices"][0]["message"]["content"] or ""
    r.content, r.request_id, r.status = content, g.get("request_id", ""), g["status"]
    r.reason = (g.get("abstention") or {}).get("reason")
    r.status_ok = r.status == case.expected_status
    r.reason_ok = case.expected_reason is None or r.reason == case.expected_reason
    r.cost_usd = float((g.get("cost") or {}).get("usd") or 0.0)
    r.service_ms = float((g.get("timings_ms") or {}).get("total") or 0.0)
    low = content.lower()
    r.leaks = [f for f in case.forbidden if f.lower() in low]
    if case.gold_urls:
        gold = {installed.url_of(u) for u in case.gold_urls}
        seen = {s["url"] for s in g.get("sources", [])} | {
            u for s in g.get("sources", []) for u in s.get("also_reported_by", [])
        }
        r.evidence_recall = bool(gold & seen)
    if case.expected_status == "grounded":
        has_any = not case.gold_answers or any(states(low, a) for a in case.gold_answers)
        r.answer_ok = r.status == "grounded" and has_any and all(states(low, a) for a in case.gold_all)
    if r.status == "grounded":
        r.citation_problems = _check_citations(body, content)
        r.citations_valid = not r.citation_problems
        r.claims = _score_claims(body, installed)
        r.factual_sentences, r.cited_sentences = _coverage(content)
    return r


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


def aggregate(results: list[CaseResult]) -> dict[str, Any]:
    """Suite numbers for one mode (see docs/EVALUATION.md for each definition)."""
    grounded = [r for r in results if r.status == "grounded"]
    claims = [c for r in results for c in r.claims]
    expect_answer = [r for r in results if r.expected_status == "grounded"]
    expect_abstain = [r for r in results if r.expected_status == "abstained"]
    recall = [r.evidence_recall for r in expect_answer if r.evidence_recall is not None]
    fresh = [r for r in results if "stale_vs_fresh" in r.tags or r.leaks or any(t in r.tags for t in ("undated",))]
    latencies = [r.latency_ms for r in results if not r.error]
    return {
        "cases": len(results),
        "passed": sum(r.passed for r in results),
        "errors": sum(bool(r.error) for r in results),
        "status_accuracy": _ratio(sum(r.status_ok for r in results), len(results)),
        "false_abstentions": sum(r.status == "abstained" and r.expected_status != "abstained" for r in results),
        "false_answers": sum(r.status != "abstained" and r.expected_status == "abstained" for r in results),
        "abstained_when_expected": _ratio(sum(r.status == "abstained" for r in expect_abstain), len(expect_abstain)),
        "answered_when_expected": _ratio(sum(r.status == "grounded" for r in expect_answer), len(expect_answer)),
        "reason_accuracy": _ratio(
            sum(r.reason_ok for r in results if r.expected_reason and r.status_ok),
            sum(1 for r in results if r.expected_reason and r.status_ok),
        ),
        "answer_accuracy": _ratio(sum(bool(r.answer_ok) for r in expect_answer), len(expect_answer)),
        "citation_validity": _ratio(sum(bool(r.citations_valid) for r in grounded), len(grounded)),
        "citation_precision": _ratio(sum(c.precise for c in claims), len(claims)),
        "service_precision": _ratio(sum(c.service_supported for c in claims), len(claims)),
        "quote_in_source": _ratio(sum(c.quote_in_source for c in claims), len(claims)),
        "citation_coverage": _ratio(
            sum(r.cited_sentences for r in grounded), sum(r.factual_sentences for r in grounded)
        ),
        "evidence_recall": _ratio(sum(recall), len(recall)),
        "gold_in_evidence": _ratio(
            sum(bool(r.gold_in_evidence) for r in expect_answer if r.gold_in_evidence is not None),
            sum(1 for r in expect_answer if r.gold_in_evidence is not None),
        ),
        "freshness_correct": _ratio(
            sum(not r.leaks and r.answer_ok is not False and r.status_ok for r in fresh), len(fresh)
        ),
        "forbidden_leaks": sum(bool(r.leaks) for r in results),
        "claims": len(claims),
        "cost_usd_mean": round(statistics.fmean([r.cost_usd for r in results]), 6) if results else 0.0,
        "latency_ms_p50": _pct(latencies, 0.5),
        "latency_ms_p95": _pct(latencies, 0.95),
    }


def by_tag(results: list[CaseResult]) -> dict[str, dict[str, Any]]:
    tags = sorted({t for r in results for t in r.tags if t != "ci"})
    return {
        t: {
            "cases": sum(t in r.tags for r in results),
            "passed": sum(r.passed for r in results if t in r.tags),
            "status_ok": sum(r.status_ok for r in results if t in r.tags),
        }
        for t in tags
    }


def as_json(r: CaseResult) -> dict:
    d = asdict(r)
    d["passed"], d["failures"] = r.passed, r.failures
    return d
