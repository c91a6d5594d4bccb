"""Issue-12 defects, each a regression test over HTTP against the real service and local upstreams:
malformed search-result URLs, integers past 64 bits, input limits, trace ownership."""

from __future__ import annotations

import json

import httpx
import pytest

from simulators.searxng import searx_result
from tests.api.helpers import ACME_REPORTS, TODAY, chat

QUESTION = "How much does the Acme Cloud Pro plan cost per month?"
MALFORMED = [
    "http://[::1/",
    "http://example.com:65536/x",
    "http://[not-an-ip]/",
    "https://exa mple.com/a",
    "http://:80/",
]


def _svc(searxng, web, service_factory, **extra):
    return service_factory(**searxng.settings_overrides(), **web.settings_overrides(), **extra)


def _acme_results(web):
    urls = []
    for i, paras in enumerate(ACME_REPORTS):
        site = web.site(f"news-{i}.test")
        urls.append(site.add_article("/acme", "Acme Cloud Pro price", paras, published=TODAY))
    return [searx_result(u, "Acme Cloud Pro", "Acme Cloud Pro plan price") for u in urls]


@pytest.mark.parametrize("route", ["/v1/grounded-answers", "/v1/context"])
def test_malformed_result_urls_are_dropped_not_a_500(searxng, web, service_factory, route):
    good = _acme_results(web)
    # Built by hand: a real SearXNG passes such URLs through as strings (parsed_url would not parse).
    bad = [{**good[0], "url": u, "parsed_url": [], "title": "bad"} for u in MALFORMED]
    searxng.set_default(bad + good)
    svc = _svc(searxng, web, service_factory)
    body = chat(QUESTION) if route.endswith("answers") else {"query": QUESTION}
    r = httpx.post(svc.url + route, json=body, timeout=30)
    assert r.status_code == 200, r.text
    text = r.text
    assert "65536" not in text and "[::1" not in text


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30])
def test_integers_past_64_bits_are_a_400_not_a_500(searxng, web, service_factory, value):
    svc = _svc(searxng, web, service_factory)
    for body in (
        {**chat(QUESTION), "seed": value},
        {**chat(QUESTION), "max_tokens": value},
        {**chat(QUESTION), "metadata": {"n": value}},
        chat(QUESTION, max_results=value),
    ):
        r = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=30)
        assert r.status_code in (200, 400), (body, r.status_code, r.text)
        assert "Traceback" not in r.text


# --- input limits ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(request):
    from simulators import ServiceServer

    s = ServiceServer(
        api_keys=["k1", "k2"], max_body_bytes=20_000, max_messages=5, max_request_chars=2_000, body_read_timeout_s=1.0
    ).start()
    request.addfinalizer(s.stop)
    return s


def _post(svc, body=None, *, key="k1", headers=None, **kw):
    headers = {**({"Authorization": f"Bearer {key}"} if key else {}), **(headers or {})}
    return httpx.post(svc.url + "/v1/chat/completions", json=body, headers=headers, timeout=30, **kw)


def _error(r, status, code):
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["code"] == code, err
    return err


def test_body_over_the_limit_is_413_before_auth(keyed):
    big = chat("x" * 30_000)
    _error(_post(keyed, big), 413, "request_too_large")
    # No key at all: the size is refused before the key is looked at (the body is never parsed).
    _error(_post(keyed, big, key=None), 413, "request_too_large")


def test_chunked_body_over_the_limit_is_413_while_reading(keyed):
    def chunks():
        for _ in range(50):
            yield b"x" * 1_000

    r = httpx.post(
        keyed.url + "/v1/chat/completions", content=chunks(), headers={"Authorization": "Bearer k1"}, timeout=30
    )
    _error(r, 413, "request_too_large")


def test_too_many_messages_and_characters_are_400(keyed):
    many = {"model": "x", "messages": [{"role": "user", "content": "hi"}] * 6}
    assert _error(_post(keyed, many), 400, "request_too_large")["param"] == "messages"
    long = chat("What is tomllib? " + "word " * 500)
    assert _error(_post(keyed, long), 400, "request_too_large")["param"] == "messages"


def test_seed_past_64_bits_is_400_and_max_tokens_is_clamped(keyed):
    assert _error(_post(keyed, {**chat("What is tomllib?"), "seed": 2**64}), 400, "invalid_request")["param"] == "seed"
    r = _post(keyed, {**chat("What is tomllib?"), "max_tokens": 2**70})
    assert r.status_code == 200, r.text


def test_control_characters_are_stripped_not_a_crash(keyed):
    r = _post(keyed, chat("What is\x00 tomllib?\x1b[31m\x07"))
    assert r.status_code == 200, r.text
    assert "\x00" not in r.text and "\\u0000" not in r.text


def test_a_body_that_trickles_in_is_cut_off(keyed):
    import socket
    import time

    host, port = keyed.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\n"
            b'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"model":'
        )
        started = time.monotonic()
        reply = sock.recv(4096)
        waited = time.monotonic() - started
    assert b" 408 " in reply.split(b"\r\n", 1)[0], reply[:200]
    assert b"request_timeout" in reply
    assert waited < 8  # the 1 s read timeout, generously: not the client's 10 s socket timeout


# --- traces belong to the key that made them; keys -------------------------------------------------


def test_traces_are_readable_only_by_their_key_and_ids_are_never_the_clients(keyed):
    r = _post(keyed, chat("What is tomllib?"), headers={"X-Request-Id": "victim-1"})
    assert r.status_code == 200
    rid = r.headers["X-Request-Id"]
    assert rid != "victim-1" and r.headers["X-Client-Request-Id"] == "victim-1"
    own = httpx.get(keyed.url + f"/v1/traces/{rid}", headers={"Authorization": "Bearer k1"})
    assert own.status_code == 200 and own.json()["plan"]["question"]
    other = httpx.get(keyed.url + f"/v1/traces/{rid}", headers={"Authorization": "Bearer k2"})
    _error(other, 404, "not_found")
    # Key 2 reusing key 1's client id neither overwrites nor reads key 1's trace.
    r2 = _post(keyed, chat("What is asyncio.TaskGroup?"), key="k2", headers={"X-Request-Id": "victim-1"})
    assert r2.headers["X-Request-Id"] != rid
    again = httpx.get(keyed.url + f"/v1/traces/{rid}", headers={"Authorization": "Bearer k1"}).json()
    assert again["plan"]["question"] == own.json()["plan"]["question"]
    assert _error(
        httpx.get(keyed.url + "/v1/traces/victim-1", headers={"Authorization": "Bearer k1"}), 404, "not_found"
    )


def test_stored_traces_keep_a_bounded_excerpt_of_the_question(keyed):
    long_question = "What is tomllib and how does it parse TOML files? " + "Please explain in detail. " * 60
    r = _post(keyed, chat(long_question))
    assert r.status_code == 200, r.text
    trace = httpx.get(keyed.url + "/v1/traces/" + r.headers["X-Request-Id"], headers={"Authorization": "Bearer k1"})
    assert len(trace.json()["plan"]["question"]) <= keyed.settings.trace_text_chars + 1


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_case_insensitive(keyed, scheme):
    r = httpx.get(keyed.url + "/v1/models", headers={"Authorization": f"{scheme} k1"})
    assert r.status_code == 200
    _error(httpx.get(keyed.url + "/v1/models", headers={"Authorization": f"{scheme} k3"}), 401, "invalid_api_key")
    _error(httpx.get(keyed.url + "/v1/models", headers={"Authorization": "Basic k1"}), 401, "invalid_api_key")


def test_keys_file_holds_digests_and_revocation_needs_no_restart(tmp_path, service_factory):
    import hashlib
    import time

    path = tmp_path / "keys"
    path.write_text(
        "# team keys\n"
        f"sha256:{hashlib.sha256(b'alpha').hexdigest()} alpha-team\n"
        f"sha256:{hashlib.sha256(b'beta').hexdigest()} beta-team\n"
    )
    svc = service_factory(api_keys_file=path, auth="required")

    def status(key):
        return httpx.get(svc.url + "/v1/models", headers={"Authorization": f"Bearer {key}"}).status_code

    assert (status("alpha"), status("beta"), status("gamma")) == (200, 200, 401)
    path.write_text(f"sha256:{hashlib.sha256(b'alpha').hexdigest()} alpha-team\n")
    import os

    os.utime(path, (time.time() + 5, time.time() + 5))  # a new mtime even on coarse clocks
    deadline = time.monotonic() + 10
    while status("beta") != 401 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (status("alpha"), status("beta")) == (200, 401)


def test_no_keys_and_auth_required_refuses_to_start():
    from app.api.keys import AuthMisconfigured, KeyRing
    from app.settings import Settings

    with pytest.raises(AuthMisconfigured, match="GA_AUTH=disabled"):
        KeyRing(Settings(auth="required", api_keys=[]))
    assert KeyRing(Settings(auth="disabled")).verify("anything") is not None


def test_an_unexpected_error_is_logged_with_the_request_id():
    import asyncio
    import io
    import logging

    from app.logs import JsonFormatter
    from app.main import RequestIdMiddleware

    async def boom(scope, receive, send):  # a handler bug that escaped every exception handler
        raise RuntimeError("kaboom")

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logging.getLogger("app.main").addHandler(handler)
    app = RequestIdMiddleware(boom)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

    async def go():
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.get("/")

    try:
        r = asyncio.run(go())
    finally:
        logging.getLogger("app.main").removeHandler(handler)
    assert r.status_code == 500 and r.json()["error"]["type"] == "server_error"
    logged = [line for line in stream.getvalue().splitlines() if "kaboom" in line]
    assert logged and f'"request_id":"{r.headers["X-Request-Id"]}"' in logged[0]


# --- slow clients ------------------------------------------------------------------------------


def _raw(svc):
    import socket

    host, port = svc.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=15)


@pytest.mark.parametrize("partial", [b"", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: "])
def test_a_client_that_never_finishes_its_headers_is_disconnected(service_factory, partial):
    import time

    svc = service_factory(header_read_timeout_s=1.0)
    with _raw(svc) as sock:
        sock.sendall(partial)
        started = time.monotonic()
        data = sock.recv(1024)  # b"" once the service closes the connection
        waited = time.monotonic() - started
    assert data == b"" and waited < 10  # closed after ~1 s, long before the client's 15 s timeout


def test_the_header_deadline_does_not_cut_a_kept_alive_connection(service_factory):
    import time

    svc = service_factory(header_read_timeout_s=1.0)
    with httpx.Client(base_url=svc.url) as client:
        assert client.get("/healthz").status_code == 200
        time.sleep(1.5)  # idle between requests: the keep-alive timer's business (5 s), not the header deadline
        assert client.get("/healthz").status_code == 200


def test_a_client_that_leaves_before_its_body_arrives_is_not_an_error(keyed):
    # Soak finding: a client that gave up (e.g. while queued for admission) disconnects before its
    # body is read; Starlette raises ClientDisconnect, which was logged as an unhandled error.
    import io
    import logging
    import socket
    import time

    from app import metrics
    from app.logs import JsonFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logging.getLogger("app").addHandler(handler)
    before = metrics.CLIENT_DISCONNECTS._value.get()
    host, port = keyed.url.removeprefix("http://").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\n"
                b'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"model":'
            )
        deadline = time.monotonic() + 5
        while metrics.CLIENT_DISCONNECTS._value.get() == before and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        logging.getLogger("app").removeHandler(handler)
    assert metrics.CLIENT_DISCONNECTS._value.get() == before + 1
    assert "unhandled error" not in stream.getvalue(), stream.getvalue()[:500]
    assert httpx.get(keyed.url + "/healthz").status_code == 200


@pytest.mark.parametrize("cache", ["bypass", "use"])
def test_an_unpaired_surrogate_from_the_engine_is_not_a_500(searxng, web, service_factory, cache):
    """JSON may carry "\\ud800"; before, the response (or the search cache) could not encode it: 500,
    or the engine's whole answer lost."""
    good = _acme_results(web)
    searxng.set_default([{**r, "title": r["title"] + " \ud800", "content": "\udfff " + r["content"]} for r in good])
    svc = _svc(searxng, web, service_factory)
    for stream in (False, True):
        r = httpx.post(
            svc.url + "/v1/grounded-answers", json={**chat(QUESTION, cache=cache), "stream": stream}, timeout=30
        )
        assert r.status_code == 200, r.text
        if not stream:
            assert r.json()["grounding"]["status"] == "grounded", r.json()["grounding"].get("abstention")


def test_an_unpaired_surrogate_from_a_search_api_is_not_a_500(tavily, web, service_factory):
    """The same through a web search API's provider (Tavily's protocol): its simulator sends ASCII
    JSON with escapes, as a real API may, so "\\ud800" reaches the client as an escape."""
    from simulators.search_apis import api_hit

    good = _acme_results(web)
    tavily.set_default([api_hit(r["url"], r["title"] + " \ud800", "\udfff " + r["content"]) for r in good])
    svc = service_factory(**tavily.settings_overrides(), **web.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION, cache="bypass"), timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["grounding"]["status"] == "grounded", r.json()["grounding"].get("abstention")
    assert tavily.requests.last().path == "/search"


def test_an_unpaired_surrogate_from_the_model_keeps_its_answer(searxng, web, llm, service_factory):
    from tests.api.helpers import planner_or

    searxng.set_default(_acme_results(web))
    llm.default = planner_or("Acme Cloud Pro costs $30 per month \ud800 [S1].")
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION), timeout=30)
    assert r.status_code == 200, r.text
    # The model's answer is kept (before, its text failed downstream and the extractive fallback answered).
    assert r.json()["grounding"]["composer"].startswith("llm:"), r.json()["grounding"]["composer"]


def _completion(content, *, usage=None, finish="stop", model="gpt-4o") -> str:
    return json.dumps(
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": usage,
        }
    )


ANSWER = "Acme Cloud Pro costs $30 per month [S1]."
# What OpenAI-compatible servers send besides the SDK's types: before, each of these was a 500.
ODD_COMPLETIONS = {
    "content as a list of parts": (
        _completion([{"type": "reasoning", "text": "The user wants a price. "}, {"type": "text", "text": ANSWER}]),
        "llm:",
    ),
    "negative and huge usage": (
        _completion(ANSWER, usage={"prompt_tokens": -5, "completion_tokens": 10**12, "total_tokens": "x"}),
        "llm:",
    ),
    "usage as strings": (_completion(ANSWER, usage={"prompt_tokens": "10", "completion_tokens": None}), "llm:"),
    "content a number": (_completion(42), "extractive:fallback"),  # malformed: a technical error, then the fallback
}


@pytest.mark.parametrize("name", list(ODD_COMPLETIONS))
def test_odd_but_parseable_completions_are_not_a_500(searxng, web, llm, service_factory, name):
    from tests.api.helpers import planner_or

    raw, composer = ODD_COMPLETIONS[name]
    searxng.set_default(_acme_results(web))
    llm.default = planner_or({"raw": raw})
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION), timeout=30)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["composer"].startswith(composer), g["composer"]
    assert all(v >= 0 for t in g["cost"]["tokens"].values() for v in t.values())
    assert "The user wants" not in r.json()["choices"][0]["message"]["content"]  # a reasoning part is not the answer


def test_an_upstreams_model_names_cannot_grow_the_metric_labels(searxng, web, llm, service_factory):
    from tests.api.helpers import planner_or

    searxng.set_default(_acme_results(web))
    llm.default = planner_or({"raw": _completion(ANSWER, model="made-up-model-7f3a")})
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION), timeout=30)
    assert r.status_code == 200 and "made-up-model-7f3a" in r.json()["grounding"]["cost"]["tokens"]
    exposition = httpx.get(svc.url + "/metrics", timeout=10).text
    assert "made-up-model-7f3a" not in exposition
    assert 'model="other"' in exposition


def test_an_unpaired_surrogate_inside_the_planners_json_is_not_a_500(searxng, web, llm, service_factory):
    """The plan is JSON inside the model's text: its "\\ud800" appears only once the plan is parsed."""
    searxng.set_default(_acme_results(web))

    def reply(body):
        if "You plan web searches" in body["messages"][0]["content"]:
            return '{"needs_search": true, "queries": ["acme cloud \\ud800 pro price"], "freshness_days": 30}'
        return ANSWER

    llm.default = reply
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION), timeout=30)
    assert r.status_code == 200, r.text
    assert any("\ufffd" in q for q in r.json()["grounding"]["queries"]), r.json()["grounding"]["queries"]


def test_a_reply_naming_a_cheaper_model_is_booked_at_the_price_asked_for(searxng, web, llm, service_factory):
    """The composer asked gpt-4o; an upstream that names gpt-4o-mini in its reply cannot shrink the
    booked cost (max_cost_usd, spend budgets)."""
    from app.pipeline.context import TOKENS_PER_PRICE_UNIT
    from tests.api.helpers import planner_or

    searxng.set_default(_acme_results(web))
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    llm.default = planner_or({"raw": _completion(ANSWER, usage=usage, model="gpt-4o-mini")})
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION), timeout=30)
    g = r.json()["grounding"]
    assert g["composer"] == "llm:gpt-4o-mini"
    gpt_4o = svc.settings.llm_prices["gpt-4o"]
    expected = (1000 * gpt_4o[0] + 100 * gpt_4o[1]) / TOKENS_PER_PRICE_UNIT
    assert abs(g["cost"]["by_stage_usd"]["compose"] - expected) < 1e-9, g["cost"]


def test_an_article_after_a_megabyte_of_inline_script_and_css_is_read(searxng, web, service_factory):
    """Two of the 181 benchmark news pages put over 1 MB of inline JavaScript and CSS before the
    article; the extraction bound cut them off and they came out empty (`empty_extraction`)."""
    head = (
        "<html><head><title>Acme Cloud Pro price</title><script>"
        + "window.cfg = {a: 1};" * 60_000
        + "</script><style>"
        + ".nav-item{color:red}" * 25_000
        + '</style><script type="application/ld+json">{"@type": "NewsArticle", "datePublished": "'
        + TODAY.isoformat()
        + '"}</script></head><body><article><h1>Acme Cloud Pro price</h1>'
    )
    body = "".join(f"<p>{p}</p>" for p in ACME_REPORTS[0]) + "</article></body></html>"
    site = web.site("news-0.test")
    url = site.add_page("/acme-heavy", head + body)
    assert len(head) > 1_000_000
    searxng.set_default([searx_result(url, "Acme Cloud Pro", "Acme Cloud Pro plan price")])
    svc = _svc(searxng, web, service_factory)
    r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION, min_sources=1), timeout=30)
    g = r.json()["grounding"]
    assert [f["outcome"] for f in g["fetches"]] == ["ok"], g["fetches"]
    assert g["status"] == "grounded", g.get("abstention")
    assert "$30" in r.json()["choices"][0]["message"]["content"]
    assert g["sources"][0]["date_source"] == "json-ld"  # the JSON-LD past the first megabyte is read too
