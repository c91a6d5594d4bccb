"""A local entailment model (GA_SUPPORT_MODEL=bert-nli) between the lexical support check and the LLM
judge, over HTTP against the real local upstreams. Its model folders are tiny, random and pinned to one
verdict (simulators/nli_model.py): these tests check how the service uses a verdict (who settles a
sentence, what the judge is still asked, what a hard lexical failure keeps), not an NLI model's reading."""

from __future__ import annotations

import httpx
import pytest

from simulators.nli_model import write_bert_nli
from tests.api.helpers import chat, planner_or, publish_acme

# A faithful paraphrase: few of its words are in the span, so the lexical check cannot settle it.
PARAPHRASE = "Subscribers of Acme Cloud Pro now pay $30 monthly after the increase [S1]."
ANSWER = "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. " + PARAPHRASE
QUESTION = "What does the Acme Cloud Pro plan cost?"
JUDGE_PROMPT_START = "You check whether a claim"


def _judging(composer: str, judge_says: str):
    base = planner_or(composer)

    def reply(body):
        if body["messages"][0]["content"].startswith(JUDGE_PROMPT_START):
            return judge_says
        return base(body)

    return reply


def _judge_calls(llm) -> int:
    return sum(b["messages"][0]["content"].startswith(JUDGE_PROMPT_START) for b in llm.bodies())


@pytest.fixture
def nli_service(tmp_path, searxng, web, llm, service_factory):
    """nli_service(says) -> a service whose entailment model gives every pair the verdict `says`."""

    def start(says: str, judge_says: str = '{"supported": false, "quote": ""}'):
        publish_acme(web, searxng)
        llm.default = _judging(ANSWER, judge_says)
        folder = write_bert_nli(tmp_path / says, says=says)
        return service_factory(
            **searxng.settings_overrides(),
            **web.settings_overrides(),
            **llm.settings_overrides(),
            support_model="bert-nli",
            support_model_path=folder,
        )

    return start


def _ask(svc, **extra) -> dict:
    return httpx.post(svc.url + "/v1/chat/completions", json={**chat(QUESTION), **extra}, timeout=30).json()


def _paraphrase(claims: list[dict]) -> dict | None:
    return next((c for c in claims if c["text"].startswith("Subscribers")), None)


def test_an_entailed_paraphrase_is_kept_without_asking_the_judge(nli_service, llm):
    svc = nli_service("entailment")
    body = _ask(svc)
    g = body["grounding"]
    claim = _paraphrase(g["claims"])
    assert g["status"] == "grounded", g["abstention"]
    assert claim is not None and claim["supported"] and claim["judged"] is True and claim["judged_by"] == "entailment"
    assert "Subscribers" in body["choices"][0]["message"]["content"]
    assert _judge_calls(llm) == 0
    # the sentence the lexical check settled was not sent to the model
    first = next(c for c in g["claims"] if c["text"].startswith("Acme Cloud raised"))
    assert first["judged"] is None and first["judged_by"] is None
    metrics = httpx.get(svc.url + "/metrics", timeout=10).text
    assert 'grounded_entailment_verdicts_total{verdict="entailed"}' in metrics


def test_a_contradicted_paraphrase_is_dropped_without_asking_the_judge(nli_service, llm):
    body = _ask(nli_service("contradiction", judge_says='{"supported": true, "quote": ""}'))
    dropped = _paraphrase(body["grounding"]["dropped_claims"])
    assert dropped is not None and dropped["judged"] is False and dropped["judged_by"] == "entailment"
    assert "Subscribers" not in body["choices"][0]["message"]["content"]
    assert _judge_calls(llm) == 0


def test_an_unsure_model_leaves_the_sentence_to_the_judge(nli_service, llm):
    body = _ask(
        nli_service(
            "neutral",
            judge_says='{"supported": true, "quote": "Acme Cloud raised the price of its Pro plan to $30 per month"}',
        )
    )
    claim = _paraphrase(body["grounding"]["claims"])
    assert claim is not None and claim["judged"] is True and claim["judged_by"] == "llm"
    assert _judge_calls(llm) == 1


def test_a_model_that_entails_everything_cannot_rescue_a_changed_number(nli_service, web, searxng, llm):
    svc = nli_service("entailment")
    # The number check is a hard lexical failure: decisive, so the model is never asked about it.
    llm.default = _judging(
        "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. Acme Cloud Pro now costs $45 a month [S1].",
        '{"supported": true, "quote": ""}',
    )
    body = _ask(svc)
    dropped = [c for c in body["grounding"]["dropped_claims"] if "$45" in c["text"]]
    assert dropped and dropped[0]["judged"] is None and not dropped[0]["supported"]
    assert "$45" not in body["choices"][0]["message"]["content"]


def test_the_verified_stream_asks_the_model_too(nli_service, llm):
    svc = nli_service("entailment")
    judge_or_plan = llm.default
    # The composer's streamed call, word by word: each sentence is verified as it completes, so the
    # paraphrase goes first (the stream's last sentence is settled with the whole answer).
    streamed = PARAPHRASE + " The Pro plan includes unlimited projects and priority support [S1][S2]."
    llm.default = lambda body: (
        {"content": streamed, "chunk_delay_s": 0.01} if body.get("stream") else judge_or_plan(body)
    )
    with httpx.stream(
        "POST", svc.url + "/v1/chat/completions", json={**chat(QUESTION), "stream": True}, timeout=30
    ) as resp:
        text = "".join(resp.iter_text())
    assert "Subscribers" in text
    assert sum(bool(b.get("stream")) for b in llm.bodies()) == 1  # the model's own stream, not a replay
    assert _judge_calls(llm) == 0
