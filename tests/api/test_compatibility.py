"""OpenAI compatibility details: max_tokens cut at sentence boundaries (with only the kept
sentences' citations), usage, unsupported OpenAI routes, and /docs and /redoc served offline."""

from __future__ import annotations

import re
from types import SimpleNamespace

import httpx
import pytest

from app.api.render import conversation_tokens, within_limit
from app.domain.types import Claim
from simulators import ServiceServer

QUESTION = "How do I create a virtual environment with venv?"
GROUNDING = {"freshness_days": 3650, "min_sources": 1}


@pytest.fixture(scope="module")
def svc():
    service = ServiceServer()
    service.start()
    try:
        yield service
    finally:
        service.stop()


# --- max_tokens ----------------------------------------------------------------------------------


def words(text: str) -> int:
    return len(text.split())


def _answer(sentences: list[tuple[str, list[int]]], *, finish: str = "stop", abstained: bool = False):
    """A pipeline result as render sees it: sentences with their markers, joined as cite.render does."""
    claims, parts, pos = [], [], 0
    for text, markers in sentences:
        if parts:
            pos += 1
        claims.append(Claim(text=text, span_ids=[], markers=markers, start=pos, end=pos + len(text)))
        parts.append(text)
        pos += len(text)
    cited = sorted({n for _, m in sentences for n in m})
    return SimpleNamespace(
        content=" ".join(parts),
        claims=claims,
        cited=[f"source-{n}" for n in cited],
        finish_reason=finish,
        abstention=object() if abstained else None,
    )


def test_within_limit_keeps_whole_sentences_and_their_sources_only():
    result = _answer([("One two three [1].", [1]), ("Four five six [1][2].", [1, 2]), ("Seven eight [3].", [3])])
    assert within_limit(result, None, words).finish_reason == "stop"
    assert within_limit(result, 100, words).content == result.content
    kept = within_limit(result, 5, words)  # the first sentence is 4 words, the second would reach 8
    assert (kept.content, kept.finish_reason) == ("One two three [1].", "length")
    assert [c.text for c in kept.claims] == ["One two three [1]."] and kept.cited == ["source-1"]
    kept = within_limit(result, 8, words)
    assert kept.cited == ["source-1", "source-2"] and len(kept.claims) == 2
    nothing = within_limit(result, 3, words)
    assert (nothing.content, nothing.claims, nothing.cited, nothing.finish_reason) == ("", [], [], "length")


def test_within_limit_on_prose_without_claims():
    # An ungrounded answer the model cut mid-sentence: the fragment goes, finish_reason stays length.
    result = SimpleNamespace(
        content="First sentence here. Second one! A fragment that", claims=[], cited=[], finish_reason="length"
    )
    result.abstention = None
    kept = within_limit(result, 50, words)
    assert (kept.content, kept.finish_reason) == ("First sentence here. Second one!", "length")
    # An abstention's message is prose too; its draft's claims are not the content.
    abstained = _answer([("Draft sentence one [1].", [1])], abstained=True)
    abstained.content = "The sources I found do not answer this question."
    assert within_limit(abstained, 4, words).content == ""


def test_conversation_tokens_count_messages_as_openai_does():
    assert conversation_tokens([("user", "one two")], words) == 2 + 3 + 3
    assert conversation_tokens([("system", "a"), ("user", "b c")], words) == 1 + 3 + 2 + 3 + 3


def test_max_tokens_over_http(svc):
    def ask(**kw) -> dict:
        body = {"messages": [{"role": "user", "content": QUESTION}], "grounding": GROUNDING, **kw}
        r = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=60)
        assert r.status_code == 200, r.text
        return r.json()

    full, cut = ask(), ask(max_tokens=80)
    assert full["choices"][0]["finish_reason"] == "stop" and len(full["grounding"]["claims"]) >= 2
    content = cut["choices"][0]["message"]["content"]
    assert cut["choices"][0]["finish_reason"] == "length" and 0 < cut["usage"]["completion_tokens"] <= 80
    assert full["choices"][0]["message"]["content"].startswith(content)
    kept, whole = cut["grounding"]["claims"], full["grounding"]["claims"]
    # the answer's first sentences, fewer than in full, each with its claim
    assert 0 < len(kept) < len(whole) and [c["text"] for c in kept] == [c["text"] for c in whole[: len(kept)]]
    assert content.startswith(kept[0]["text"].rstrip("."))
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", content)}
    assert len(cut["citations"]) == len(numbers)
    assert all(a["url_citation"]["end_index"] <= len(content) for a in cut["choices"][0]["message"]["annotations"])
    ids = {s["id"] for s in cut["grounding"]["sources"]} - {None}
    assert ids == numbers
    assert full["usage"]["prompt_tokens"] == cut["usage"]["prompt_tokens"] > 0


# --- unsupported routes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/completions"),
        ("POST", "/v1/embeddings"),
        ("POST", "/v1/images/generations"),
        ("POST", "/v1/audio/speech"),
        ("POST", "/v1/audio/transcriptions"),
        ("GET", "/v1/files"),
        ("POST", "/v1/files"),
        ("POST", "/v1/moderations"),
        ("GET", "/v1/fine_tuning/jobs"),
        ("POST", "/v1/batches"),
        ("DELETE", "/v1/responses/resp_x/input_items"),
    ],
)
def test_unsupported_openai_routes_are_404_naming_the_supported_ones(svc, method, path):
    r = httpx.request(method, svc.url + path, json={}, timeout=30)
    assert r.status_code == 404, r.text
    error = r.json()["error"]
    assert set(r.json()) == {"error"} and set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["code"] == "not_found"
    assert path in error["message"]
    for supported in ("POST /v1/chat/completions", "POST /v1/responses", "GET /v1/models"):
        assert supported in error["message"]


def test_the_catch_all_is_not_published(svc):
    paths = httpx.get(svc.url + "/openapi.json", timeout=30).json()["paths"]
    assert not any("{path" in p for p in paths)
    assert {"/v1/responses", "/v1/responses/{response_id}"} <= set(paths)


# --- offline docs --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_their_assets_from_the_service(svc, page):
    r = httpx.get(svc.url + page, timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert not re.search(r"(?:src|href)=[\"']?(?:https?:)?//", html), "an external asset in " + page
    assert "cdn" not in html.lower() and "fonts.googleapis" not in html
    assets = re.findall(r"(?:src|href)=[\"']([^\"']+)[\"']", html)
    assert assets and all(a.startswith("/docs/assets/") for a in assets), assets
    for asset in assets:
        got = httpx.get(svc.url + asset, timeout=30)
        assert got.status_code == 200 and len(got.content) > 1000, asset
        kind = got.headers["content-type"]
        assert ("javascript" in kind) if asset.endswith(".js") else True
        assert ("css" in kind) if asset.endswith(".css") else True
    assert "/openapi.json" in html


def test_unknown_assets_are_404(svc):
    assert httpx.get(svc.url + "/docs/assets/../../app/settings.py", timeout=30).status_code == 404
    assert httpx.get(svc.url + "/docs/assets/evil.js", timeout=30).status_code == 404
