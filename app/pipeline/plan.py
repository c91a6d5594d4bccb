"""Plan: the standalone question, 1-4 search queries and the freshness window.

With an LLM the planner proposes JSON {needs_search, queries, freshness_days}; code enforces the
contract (query count, cleaning, year for time-sensitive questions, primary-source query, clamped
window). Without one — or when the model fails twice — the heuristic planner does the same job.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import date

from app import metrics
from app.domain.types import Plan
from app.errors import UpstreamError
from app.language.question import AskedKind, analyse
from app.language.text import STOP_WORDS, strip_markers, words
from app.language.text import YEAR as _YEAR
from app.language.time import default_window
from app.pipeline.context import RunContext
from app.pipeline.route import is_time_sensitive
from app.providers.llm.base import ChatModel, parse_model_json

MAX_QUERIES = 4  # the API's max_queries ceiling: more queries cost more than they find
MIN_QUERY_CHARS = 3  # shorter planner output is noise, not a query
MAX_QUERY_CHARS = 300  # search APIs cut or refuse longer queries
PHRASE_EXTRA_KEYWORDS = 3  # keywords added to a quoted-phrase query to keep it specific
TOP_UP_OVERLAP = 0.6  # a heuristic query sharing this share of its words with a planned one adds nothing
MAX_FRESHNESS_DAYS = 3650  # the API's freshness_days ceiling (ten years)

log = logging.getLogger(__name__)

# A leading connective continues the conversation at any length ("And how do I go the other way,
# turning a dict back into a string?"); a pronoun only in a short question (a longer one states its subject).
_CONTINUES = re.compile(r"^\s*(and|what about|how about|also|and what|same for|what of)\b", re.I)
_REFERS_BACK = re.compile(r"\b(it|its|they|their|them|that|those|this|these|he|she|his|her)\b", re.I)
FOLLOW_UP_MAX_WORDS = 14  # a longer question states its own subject
CARRIED_TERMS = 4  # subject terms a follow-up borrows from the conversation
PLANNER_HISTORY_TURNS = 6  # earlier turns the LLM planner sees
PLANNER_TURN_CHARS = 400  # of each (an earlier answer is context for the subject, not evidence)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w+#-]*(?:\.[A-Za-z_][\w+#-]*)+|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*")
_TOKEN = re.compile(r"[\w.+#-]*\w[+#]*")


def is_follow_up(question: str) -> bool:
    """A question that continues the conversation ("what about …", "and …") or refers back ("its") in
    a short question."""
    return bool(_CONTINUES.search(question)) or (
        bool(_REFERS_BACK.search(question)) and len(words(question)) <= FOLLOW_UP_MAX_WORDS
    )


def standalone_question(turns: list[tuple[str, str]]) -> str:
    """Rewrite a follow-up ("what about its tasks?") into a standalone question by carrying the
    subject of the conversation: the anchors and names of the previous question (itself made
    standalone first), or, when it names none, what the previous answer is about. `turns` are (role,
    text), oldest first; earlier answers' citation markers are ignored."""
    users = [i for i, (role, text) in enumerate(turns) if role == "user" and text.strip()]
    question = turns[users[-1]][1].strip()
    if len(users) < 2 or not is_follow_up(question):
        return question
    previous = standalone_question(turns[: users[-2] + 1])
    answer = next((t for r, t in turns[users[-2] + 1 : users[-1]] if r == "assistant"), "")
    carried: list[str] = []
    # Whom the follow-up points back to: "his net worth" after "Who is the CEO of Nvidia?" means the
    # person the answer named; "its licence" after "Who maintains Quill?" still means Quill. So the
    # answer's subject leads only for a personal pronoun after a who-question; otherwise the previous
    # question's subject does, and the answer's only when the question names none. After a how-to,
    # the call the answer gave is what "do that with a timeout?" does: it leads.
    asked, answered = _subject_terms(previous), _answer_subject(answer)
    previous_kind = analyse(previous).kind
    person_ref = _PERSONAL.search(question) and previous_kind in (AskedKind.person, AskedKind.organisation)
    how_to_call = previous_kind is AskedKind.how_to and bool(answered) and bool(_IDENTIFIER.fullmatch(answered[0]))
    if person_ref:
        order = answered or asked
    elif how_to_call:
        order = answered + asked
    else:
        order = asked or answered
    for term in order:
        known = " ".join([question, *carried]).lower()
        if term.lower() not in known:
            carried.append(term)
    carried = carried[:CARRIED_TERMS]
    return f"{question} ({' '.join(carried)})" if carried else question


_PERSONAL = re.compile(r"\b(he|him|his|she|her|hers|they|them|their)\b", re.I)


def _subject_terms(question: str) -> list[str]:
    """The question's anchors and names as written, none inside another, in the question's order."""
    anchors = set(analyse(question).anchors)
    tokens = {t.strip(".") for t in _TOKEN.findall(question) if t.strip(".").lower() in anchors}
    out: list[str] = []
    for term in sorted(tokens | set(_entity_phrases(question)), key=len, reverse=True):
        if not any(term.lower() in kept.lower() for kept in out):
            out.append(term)
    return sorted(out, key=lambda term: question.find(term))


def _answer_subject(answer: str) -> list[str]:
    """What an earlier answer is about: the first code identifier (asyncio.TaskGroup) or name its
    first sentence mentions (a sentence's first word alone is not a name)."""
    first = re.split(r"(?<=[.!?])\s", strip_markers(answer).strip(), maxsplit=1)[0]
    found = [(m.start(), m.group(0).rstrip(".")) for m in _IDENTIFIER.finditer(first)]
    found += [(first.find(p), p) for p in _entity_phrases(first) if " " in p or not first.startswith(p)]
    return [min(found)[1]] if found else []


def _planner_history(conversation: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The earlier turns as the LLM planner sees them: user and assistant only, answers without
    their markers, each cut short."""
    earlier = [(r, t) for r, t in conversation[:-1] if r in ("user", "assistant") and t.strip()]
    return [
        {"role": r, "content": (strip_markers(t) if r == "assistant" else t)[:PLANNER_TURN_CHARS]}
        for r, t in earlier[-PLANNER_HISTORY_TURNS:]
    ]


def _entity_phrases(text: str) -> list[str]:
    """Capitalised words, versions and quoted phrases: what a follow-up refers back to."""
    found = re.findall(r'"([^"]+)"|\b([A-Z][\w.+-]*(?:\s+[A-Z0-9][\w.+-]*)*)|\b(\d+(?:\.\d+)+)\b', text)
    out: list[str] = []
    for quoted, cap, ver in found:
        phrase = quoted or cap or ver
        if phrase and phrase.lower() not in STOP_WORDS and phrase not in out:
            out.append(phrase)
    return out[:MAX_QUERIES]


def default_freshness(question: str, fallback: int) -> int:
    return default_window(analyse(question).time, fallback)


def clean_queries(raw: list, *, cap: int, question: str, today: date, primary_domains: list[str]) -> list[str]:
    """Enforce the query contract whatever proposed them."""
    out: list[str] = []
    seen: set[str] = set()
    for q in raw:
        if not isinstance(q, str):
            continue
        q = " ".join(q.split()).strip(" \"'")
        key = " ".join(sorted(set(words(q))))
        if len(q) < MIN_QUERY_CHARS or not key or key in seen:
            continue
        seen.add(key)
        out.append(q[:MAX_QUERY_CHARS])
    if primary_domains and out and not any("site:" in q for q in out):
        site = f"{_keywords(question) or out[0]} site:{primary_domains[0]}"
        out = out[: max(1, cap - 1)] + [site]
    if is_time_sensitive(question) and not _YEAR.search(question):
        # The explicit year keeps engines from ranking last year's pages first.
        out = [q if _YEAR.search(q) else f"{q} {today.year}" for q in out]
    return out[:cap]


def top_up(proposed: list[str], own: list[str], *, cap: int) -> list[str]:
    """The model's queries, then the heuristic planner's that say something new, up to `cap`: a plan
    never depends on the model alone for its reach. A query whose words mostly repeat an earlier one's
    (Jaccard >= TOP_UP_OVERLAP) finds the same pages and is left out."""
    out = list(proposed)
    seen = [set(words(q)) for q in out]
    for q in own:
        if len(out) >= cap:
            break
        w = set(words(q))
        if w and all(len(w & s) < TOP_UP_OVERLAP * len(w | s) for s in seen):
            out.append(q)
            seen.append(w)
    return out


def _keywords(question: str) -> str:
    return " ".join(w for w in re.findall(r"[\w.+#-]+", question) if w.lower() not in STOP_WORDS)


def heuristic_plan(
    question: str,
    *,
    max_queries: int,
    freshness_days: int | None,
    today: date,
    primary_domains: list[str],
    default_window: int,
) -> Plan:
    candidates = [question, _keywords(question)]
    phrases = _entity_phrases(question)
    if phrases:
        candidates.append(
            " ".join(
                phrases + [w for w in _keywords(question).split() if w not in " ".join(phrases)][:PHRASE_EXTRA_KEYWORDS]
            )
        )
    queries = clean_queries(
        candidates,
        cap=max(2, max_queries) if max_queries > 1 else 1,
        question=question,
        today=today,
        primary_domains=primary_domains,
    )
    window = freshness_days or default_freshness(question, default_window)
    return Plan(queries=queries[:max_queries] or [question], freshness_days=window, question=question)


PLANNER_PROMPT = """You plan web searches for a question-answering service. Today is {today}.
Return only JSON: {{"needs_search": true|false, "queries": ["..."], "freshness_days": N}}.
- queries: 2 to {cap} standalone search queries (no pronouns), keyword style, most specific first.
- Earlier turns only say what a follow-up refers to; plan for the last message.
- For time-dependent questions include the year {year} in the queries.
{primary}- freshness_days: how old evidence may be (1 for live data such as prices, 30 for news, 365+ for docs).
"""


async def llm_plan(
    llm: ChatModel,
    model: str,
    question: str,
    *,
    max_queries: int,
    freshness_days: int | None,
    today: date,
    primary_domains: list[str],
    default_window: int,
    timeout: float,
    ctx: RunContext,
    conversation: Sequence[tuple[str, str]] | None = None,
) -> Plan:
    """The model proposes, code disposes: invalid JSON gets one retry, then the heuristic planner.
    The model sees the earlier turns of the conversation (`conversation`: the request's turns,
    oldest first) before the standalone question."""

    def own_plan() -> Plan:
        """The heuristic planner's plan of the same question: the fallback, and the queries a short plan
        is topped up with."""
        return heuristic_plan(
            question,
            max_queries=max_queries,
            freshness_days=freshness_days,
            today=today,
            primary_domains=primary_domains,
            default_window=default_window,
        )

    primary = (
        f"- Include at least one query aimed at the official source, e.g. site:{primary_domains[0]}.\n"
        if primary_domains
        else ""
    )
    system = PLANNER_PROMPT.format(today=today.isoformat(), cap=max(2, max_queries), year=today.year, primary=primary)
    history = _planner_history(conversation or ())
    messages = [{"role": "system", "content": system}, *history, {"role": "user", "content": question}]
    for attempt in range(2):
        try:
            completion = await llm.complete(messages, model=model, temperature=0.0, timeout=timeout, json_mode=True)
        except UpstreamError as exc:
            log.warning("planner failed: %s", exc)
            metrics.UPSTREAM_CALLS.labels(kind="llm", provider="openai", outcome="error").inc()
            break
        metrics.UPSTREAM_CALLS.labels(kind="llm", provider="openai", outcome="ok").inc()
        ctx.charge_llm("plan", completion, messages)
        try:
            data = parse_model_json(_json_block(completion.text))
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            log.info("planner returned invalid JSON (attempt %d)", attempt + 1)
            continue
        queries = clean_queries(
            data.get("queries") or [], cap=max_queries, question=question, today=today, primary_domains=primary_domains
        )
        window = freshness_days or _clamp(data.get("freshness_days"), default_freshness(question, default_window))
        if data.get("needs_search") is False:
            # The model thinks no evidence is needed; queries are still planned in case the route
            # overrides it (mode=always, or the heuristics already decided).
            return Plan(
                queries=queries or own_plan().queries,
                freshness_days=window,
                question=question,
                by="llm",
                needs_search=False,
            )
        if not queries:
            # Asked for search (or said none needed) without a usable query: a routing fault, never
            # a silent ungrounded answer. Fall back to the heuristic queries.
            metrics.ROUTING_FAULTS.inc()
            log.warning("planner gave no usable query; heuristic queries used")
            break
        if len(queries) < max_queries:
            queries = top_up(queries, own_plan().queries, cap=max_queries)
        return Plan(queries=queries, freshness_days=window, question=question, by="llm")
    return own_plan()


def _clamp(value, fallback: int) -> int:
    try:
        return min(MAX_FRESHNESS_DAYS, max(1, int(value)))
    except (TypeError, ValueError):
        return fallback


def _json_block(text: str) -> str:
    m = re.search(r"\{.*\}", text, re.S)
    return m.group(0) if m else text
