"""The published OpenAPI document describes what goes on the wire.

Real responses from the service running over HTTP (the local sample corpus with the extractive
composer; scripted search, web and model upstreams) are validated with `jsonschema` against the
schemas /openapi.json publishes for each route and status, every `$ref` resolved inside that
document: grounded answers (extractive and LLM), an ungrounded answer, abstentions, a cache hit,
each `data:` event of SSE streams (the usage chunk included), /v1/context, /v1/models and errors.

The schemas must be closed (additionalProperties false), so a field the code emits but the schema
does not declare fails; every always-emitted field must be required; and every declared field must
be seen on the wire at least once, so the schema does not describe fields nobody sends.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from simulators import ServiceServer
from simulators.searxng import searx_result
from tests.api.helpers import TODAY, chat, planner_or, publish_acme

KEY = "sk-contract"
AUTH = {"Authorization": f"Bearer {KEY}"}
DOC_URI = "urn:grounded-answers:openapi.json"
CHAT_ROUTES = ("/v1/chat/completions", "/v1/grounded-answers")

# The only fields a response may leave out (they are never sent as null): everything else is required.
OPTIONAL_BY_DESIGN = {
    ("CostOut", "cached"),
    ("CostOut", "original_usd"),  # only on answers served from the answer cache
    ("ChatCompletionChunk", "citations"),
    ("ChatCompletionChunk", "grounding"),  # the final chunk
    ("ChatCompletionChunk", "usage"),  # the usage chunk (stream_options.include_usage)
    ("ChunkDelta", "role"),
    ("ChunkDelta", "content"),
    ("ChunkDelta", "annotations"),
}


def _pointer(*parts: str) -> str:
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def json_schema(path: str, method: str, status: str = "200") -> str:
    return _pointer("paths", path, method, "responses", status, "content", "application/json", "schema")


def chunk_schema(path: str) -> str:
    """FastAPI's convention for SSE (OpenAPI 3.2 itemSchema): each event's `data` is JSON whose
    schema is contentSchema."""
    return _pointer(
        "paths",
        path,
        "post",
        "responses",
        "200",
        "content",
        "text/event-stream",
        "itemSchema",
        "properties",
        "data",
        "contentSchema",
    )


class Contract:
    """The published document: schema lookup by JSON pointer, validation, closedness, coverage."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.registry = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(doc))

    def at(self, pointer: str) -> Any:
        node: Any = self.doc
        for part in pointer.removeprefix("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise KeyError(pointer)
            node = node[part]
        return node

    def has(self, pointer: str) -> bool:
        try:
            self.at(pointer)
        except KeyError:
            return False
        return True

    def published(self, pointer: str, what: str) -> str:
        if not self.has(pointer):
            pytest.fail(f"/openapi.json publishes no schema for {what} (expected at {pointer})", pytrace=False)
        return pointer

    def errors(self, pointer: str, instance: Any) -> list[str]:
        validator = Draft202012Validator({"$ref": DOC_URI + pointer}, registry=self.registry)
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        ]

    def validate(self, pointer: str, instance: Any, what: str) -> None:
        problems = self.errors(pointer, instance)
        assert not problems, f"{what} does not match {pointer}:\n" + "\n".join(problems[:20])

    # --- walking the schemas -----------------------------------------------------------------
    # A schema is named by its component (after a $ref), an inline one by its place under it
    # ("GroundingOut.filtered{}"), so nested inline objects are checked on their own.

    def deref(self, schema: dict, name: str) -> tuple[dict, str]:
        while "$ref" in schema:
            ref = schema["$ref"]
            assert ref.startswith("#/"), f"$ref outside the document: {ref}"
            name = ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else ref
            schema = self.at(ref)
        return schema, name

    @staticmethod
    def children(schema: dict, name: str) -> Iterator[tuple[dict, str]]:
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for i, branch in enumerate(schema.get(key, [])):
                yield branch, f"{name}.{key}[{i}]"
        for key, mark in (("items", "[]"), ("additionalProperties", "{}"), ("contentSchema", "")):
            if isinstance(schema.get(key), dict):
                yield schema[key], name + mark
        for prop, child in schema.get("properties", {}).items():
            yield child, f"{name}.{prop}"

    def objects(self, pointer: str) -> dict[str, dict]:
        """Every object schema reachable from `pointer`, by name."""
        found: dict[str, dict] = {}

        def visit(schema: dict, name: str) -> None:
            schema, name = self.deref(schema, name)
            if name in found:
                return
            if schema.get("type") == "object" or "properties" in schema:
                found[name] = schema
            for child, child_name in self.children(schema, name):
                visit(child, child_name)

        visit(self.at(pointer), pointer)
        return found

    def observe(self, pointer: str, instance: Any, seen: dict[str, set[str]]) -> None:
        """Record which properties of which (named) schema the instance carries."""

        def walk(schema: dict, value: Any, name: str) -> None:
            schema, name = self.deref(schema, name)
            for i, branch in enumerate(schema.get("anyOf", [])):
                if value is not None and self.deref(branch, name)[0].get("type") != "null":
                    walk(branch, value, f"{name}.anyOf[{i}]")
            if isinstance(value, dict):
                props = schema.get("properties", {})
                for key, v in value.items():
                    if key in props:
                        seen[name].add(key)
                        walk(props[key], v, f"{name}.{key}")
                    elif isinstance(schema.get("additionalProperties"), dict):
                        walk(schema["additionalProperties"], v, name + "{}")
            elif isinstance(value, list) and isinstance(schema.get("items"), dict):
                for v in value:
                    walk(schema["items"], v, name + "[]")

        walk(self.at(pointer), instance, pointer)


# --- the service, its upstreams, and what they sent ----------------------------------------------


def post(svc: ServiceServer, path: str, body: dict, **kw) -> httpx.Response:
    return httpx.post(svc.url + path, json=body, headers=kw.pop("headers", AUTH), timeout=60, **kw)


def sse_events(svc: ServiceServer, body: dict) -> list[str]:
    with httpx.stream(
        "POST", svc.url + "/v1/chat/completions", json={**body, "stream": True}, headers=AUTH, timeout=60
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream"), r.read()
        return [line.removeprefix("data: ") for line in r.iter_lines() if line.startswith("data: ")]


def response_events(svc: ServiceServer, body: dict) -> list[dict]:
    """A Responses stream: `event: <type>` and `data: <json>` per event, no [DONE]."""
    with httpx.stream("POST", svc.url + "/v1/responses", json={**body, "stream": True}, headers=AUTH, timeout=60) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream"), r.read()
        lines = list(r.iter_lines())
    kinds = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    events = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    assert kinds == [e["type"] for e in events], "each event's `event:` line names its type"
    return events


def _price_pages(web, searxng, company: str, *pages: tuple[str, str, int]) -> None:
    """Two publishers, each in its own words, giving `company`'s Pro plan price (site, price, age in days)."""
    words = [
        lambda price: [
            f"{company} charges {price} per month for its Pro plan, the company said when it announced "
            "the plan to customers.",
            "The Pro plan includes ten projects, email support and a shared workspace for small teams in one region.",
        ],
        lambda price: [
            f"{company} now charges {price} per month for its Pro plan after a price change announced to "
            "customers this week.",
            f"The new Pro plan adds unlimited projects and priority support, according to the announcement "
            f"from {company}.",
        ],
    ]
    urls = []
    for (site_name, price, days), paragraphs in zip(pages, words):
        urls.append(
            web.site(site_name).add_article(
                "/p", f"{company} Pro pricing", paragraphs(price), published=TODAY - timedelta(days=days)
            )
        )
    searxng.set_default([searx_result(u, f"{company} Pro pricing", f"{company} Pro plan price") for u in urls])


@pytest.fixture(scope="module")
def wire(_searxng_server, _web_server, _llm_server) -> Iterator[dict]:
    """Every response the contract is checked on, gathered once: {kind: [instance, ...]} plus the
    published document (fetched over HTTP from the running service)."""
    searxng, web, llm = _searxng_server, _web_server, _llm_server
    for server in (searxng, web, llm):
        server.reset()
    services: list[ServiceServer] = []

    def start(**overrides) -> ServiceServer:
        svc = ServiceServer(api_keys=[KEY], **overrides)
        svc.start()
        services.append(svc)
        return svc

    out: dict[str, Any] = defaultdict(list)
    try:
        # The service out of the box: local sample corpus, extractive composer, in-process cache.
        embedded = start()
        r = httpx.get(embedded.url + "/openapi.json", timeout=30)
        assert r.status_code == 200
        out["openapi"] = r.json()

        for route in CHAT_ROUTES:
            r = post(embedded, route, chat("What is asyncio.TaskGroup?", freshness_days=365))
            assert r.status_code == 200, r.text
            out["answers"].append((route, r.json()))
        first, hit = out["answers"][0][1], out["answers"][1][1]
        assert first["grounding"]["status"] == "grounded" and first["grounding"]["composer"] == "extractive"
        assert first["grounding"]["cache"].get("answer") == "miss", first["grounding"]["cache"]
        assert hit["grounding"]["cost"].get("cached") is True, "the second identical question is an answer-cache hit"

        abstained = post(embedded, "/v1/grounded-answers", chat("What is the price of Bitcoin today?")).json()
        assert abstained["grounding"]["status"] == "abstained"
        out["answers"].append(("/v1/grounded-answers", abstained))

        events = sse_events(
            embedded,
            {**chat("What does the tomllib module do?", cache="bypass"), "stream_options": {"include_usage": True}},
        )
        out["streams"].append(("extractive, include_usage", events))
        out["streams"].append(
            ("abstention", sse_events(embedded, chat("What is the price of Bitcoin today?", cache="bypass")))
        )

        r = post(embedded, "/v1/context", {"query": "asyncio TaskGroup structured concurrency", "token_budget": 1000})
        assert r.status_code == 200 and r.json()["blocks"], r.text
        out["context"].append(r.json())

        r = httpx.get(embedded.url + "/v1/models", headers=AUTH, timeout=30)
        assert r.status_code == 200, r.text
        out["models"].append(r.json())

        for path, body, status in [
            ("/v1/chat/completions", {"model": "x", "messages": [{"role": "user", "content": "hi"}], "n": 2}, 400),
            ("/v1/grounded-answers", {"model": "x", "messages": []}, 400),
            ("/v1/context", {"query": "x", "depth": 0}, 400),
        ]:
            r = post(embedded, path, body)
            assert r.status_code == status, r.text
            out["errors"].append((path, "post", str(status), r.json()))
        r = httpx.post(
            embedded.url + "/v1/chat/completions",
            content=b"{not json",
            timeout=30,
            headers={**AUTH, "content-type": "application/json"},
        )
        assert r.status_code == 400
        out["errors"].append(("/v1/chat/completions", "post", "400", r.json()))
        r = httpx.get(embedded.url + "/v1/traces/req_never_recorded", headers=AUTH, timeout=30)
        assert r.status_code == 404, r.text
        out["errors"].append(("/v1/traces/{trace_id}", "get", "404", r.json()))
        for path, method in [
            ("/v1/chat/completions", "post"),
            ("/v1/context", "post"),
            ("/v1/models", "get"),
            ("/v1/traces/{trace_id}", "get"),
        ]:
            r = httpx.request(method.upper(), embedded.url + path.replace("{trace_id}", "req_x"), json={}, timeout=30)
            assert r.status_code == 401, r.text
            out["errors"].append((path, method, "401", r.json()))

        # The Responses API: completed, cut at max_output_tokens, abstained, stored, streamed, failed.
        question = {"input": "What is asyncio.TaskGroup?", "grounding": {"freshness_days": 365}}
        for body in [
            {**question, "instructions": "Be brief.", "metadata": {"k": "v"}},
            {
                **question,
                "input": [{"role": "user", "content": [{"type": "input_text", "text": "What is asyncio.TaskGroup?"}]}],
                "max_output_tokens": 20,
            },
            {"input": "What is the price of Bitcoin today?", "store": False},
        ]:
            r = post(embedded, "/v1/responses", body)
            assert r.status_code == 200, r.text
            out["responses"].append(("/v1/responses", "post", r.json()))
        statuses = [b["status"] for _, _, b in out["responses"]]
        assert statuses == ["completed", "incomplete", "completed"], statuses
        stored = out["responses"][0][2]
        r = httpx.get(embedded.url + f"/v1/responses/{stored['id']}", headers=AUTH, timeout=30)
        assert r.status_code == 200 and r.json() == stored
        out["responses"].append(("/v1/responses/{response_id}", "get", r.json()))
        out["response_streams"].append(("completed", response_events(embedded, question)))
        out["response_streams"].append(("incomplete", response_events(embedded, {**question, "max_output_tokens": 20})))
        with pytest.MonkeyPatch.context() as patch:
            import app.api.responses as responses_module
            from app.errors import UpstreamError

            async def fail(*args, **kwargs):
                raise UpstreamError("every search provider failed", provider="contract")

            patch.setattr(responses_module, "serve_chat", fail)
            out["response_streams"].append(("failed", response_events(embedded, question)))
        for path, method, body, status in [
            ("/v1/responses", "post", {"input": "x", "tools": [{"type": "web_search"}]}, "400"),
            ("/v1/responses", "post", {"input": "x", "previous_response_id": "resp_none"}, "404"),
            ("/v1/responses/{response_id}", "get", None, "404"),
        ]:
            url = embedded.url + path.replace("{response_id}", "resp_none")
            r = httpx.request(method.upper(), url, json=body, headers=AUTH, timeout=30)
            assert r.status_code == int(status), r.text
            out["errors"].append((path, method, status, r.json()))
        for path, method in [("/v1/responses", "post"), ("/v1/responses/{response_id}", "get")]:
            r = httpx.request(
                method.upper(), embedded.url + path.replace("{response_id}", "resp_x"), json={}, timeout=30
            )
            assert r.status_code == 401, r.text
            out["errors"].append((path, method, "401", r.json()))

        # Searched web, extractive composer: conflicts, selection decisions, search errors, a snippet source.
        searched = start(**searxng.settings_overrides(), **web.settings_overrides())
        _price_pages(web, searxng, "Zephyr Cloud", ("old-zephyr.test", "$25", 20), ("new-zephyr.test", "$30", 2))
        conflicted = post(
            searched,
            "/v1/chat/completions",
            chat("How much does the Zephyr Cloud Pro plan cost per month?", cache="bypass"),
        ).json()
        assert conflicted["grounding"]["conflicts"], json.dumps(conflicted["grounding"], indent=1)
        out["answers"].append(("/v1/chat/completions", conflicted))

        _price_pages(
            web, searxng, "Quasar Cloud", ("ancient-quasar.test", "$20", 1000), ("fresh-quasar.test", "$35", 3)
        )
        stale = post(
            searched,
            "/v1/chat/completions",
            chat("What is the current price of the Quasar Cloud Pro plan?", min_sources=1, cache="bypass"),
        ).json()
        assert stale["grounding"]["selection"], stale["grounding"]
        out["answers"].append(("/v1/chat/completions", stale))

        site = web.site("nimbus.test")
        url = site.add_article(
            "/pricing",
            "Nimbus Cloud pricing",
            [
                "Nimbus Cloud Pro costs $40 per month per workspace, billed monthly or yearly, with all features of the plan.",
                "Every plan includes single sign-on, audit logs and priority support from the Nimbus team at no extra cost.",
            ],
            published=TODAY,
        )
        searxng.set_default(
            [
                searx_result(
                    url,
                    "Nimbus Cloud pricing",
                    "Nimbus Cloud Pro plan costs $40 per month per workspace.",
                    published=TODAY,
                )
            ]
        )
        snippet = post(
            searched,
            "/v1/chat/completions",
            chat(
                "How much does the Nimbus Cloud Pro plan cost?",
                primary_domains=[url.split("/")[2].split(":")[0]],
                cache="bypass",
            ),
        ).json()
        assert any(s["via"] == "snippet" for s in snippet["grounding"]["sources"]), snippet["grounding"]
        out["answers"].append(("/v1/chat/completions", snippet))

        searxng.fail(500, times=None)
        failed = post(
            searched, "/v1/chat/completions", chat("What is the latest Orbit Analytics release?", cache="bypass")
        ).json()
        assert failed["grounding"]["search_errors"], failed["grounding"]
        out["answers"].append(("/v1/chat/completions", failed))
        searxng.reset()

        # A scripted model composes: LLM composer, a dropped claim, a stream, an ungrounded answer.
        publish_acme(web, searxng)
        llm.default = planner_or(
            "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. "
            "Acme Cloud was founded on the Moon in 1802 by penguins [S2]. "
            "The Pro plan includes unlimited projects and priority support [S2]."
        )
        modelled = start(**searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides())
        composed = post(
            modelled, "/v1/chat/completions", chat("What does the Acme Cloud Pro plan cost?", cache="bypass")
        ).json()
        g = composed["grounding"]
        assert g["status"] == "grounded" and g["composer"].startswith("llm:") and g["dropped_claims"], g
        out["answers"].append(("/v1/chat/completions", composed))
        out["streams"].append(
            ("llm", sse_events(modelled, chat("What does the Acme Cloud Pro plan cost?", cache="bypass")))
        )
        ungrounded = post(modelled, "/v1/grounded-answers", chat("Say hello in French.", mode="never")).json()
        assert ungrounded["grounding"]["status"] == "ungrounded", ungrounded["grounding"]
        out["answers"].append(("/v1/grounded-answers", ungrounded))
        yield out
    finally:
        for svc in reversed(services):
            svc.stop()
        for server in (searxng, web, llm):
            server.reset()


@pytest.fixture(scope="module")
def contract(wire) -> Contract:
    return Contract(wire["openapi"])


def _chunks(events: list[str]) -> list[dict]:
    assert events and events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


def _all_instances(wire: dict) -> Iterator[tuple[str, Any]]:
    """(schema pointer, instance) for everything gathered."""
    for route, body in wire["answers"]:
        yield json_schema(route, "post"), body
    for _, events in wire["streams"]:
        for chunk in _chunks(events):
            yield chunk_schema("/v1/chat/completions"), chunk
    for path, method, body in wire["responses"]:
        yield json_schema(path, method), body
    for _, events in wire["response_streams"]:
        for event in events:
            yield chunk_schema("/v1/responses"), event
    for body in wire["context"]:
        yield json_schema("/v1/context", "post"), body
    for body in wire["models"]:
        yield json_schema("/v1/models", "get"), body
    for path, method, status, body in wire["errors"]:
        yield json_schema(path, method, status), body


def _roots(contract: Contract) -> list[str]:
    roots = [json_schema(r, "post") for r in CHAT_ROUTES] + [chunk_schema(r) for r in CHAT_ROUTES]
    roots += [json_schema("/v1/context", "post"), json_schema("/v1/models", "get")]
    roots += [json_schema("/v1/responses", "post"), json_schema("/v1/responses/{response_id}", "get")]
    roots += [chunk_schema("/v1/responses")]
    for path, item in contract.doc["paths"].items():
        for method, op in item.items():
            roots += [json_schema(path, method, s) for s in op.get("responses", {}) if s.startswith("4")]
    return roots


# --- the tests ---------------------------------------------------------------------------------


def test_grounded_answers_match_the_schema(wire, contract):
    for route, body in wire["answers"]:
        contract.validate(
            contract.published(json_schema(route, "post"), f"POST {route} 200"),
            body,
            f"{route} ({body['grounding']['status']}, {body['grounding']['composer']})",
        )
    statuses = {b["grounding"]["status"] for _, b in wire["answers"]}
    composers = {b["grounding"]["composer"].split(":")[0] for _, b in wire["answers"]}
    assert statuses == {"grounded", "abstained", "ungrounded"} and {"extractive", "llm"} <= composers


def test_each_sse_chunk_matches_the_chunk_schema(wire, contract):
    for route in CHAT_ROUTES:
        pointer = contract.published(chunk_schema(route), f"the SSE chunks of POST {route}")
    for label, events in wire["streams"]:
        chunks = _chunks(events)
        for i, chunk in enumerate(chunks):
            contract.validate(pointer, chunk, f"{label} stream, data event {i}")
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        final = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
        assert len(final) == 1 and "grounding" in final[0]
        usage = [c for c in chunks if "usage" in c]
        if "include_usage" in label:
            assert usage == [chunks[-1]] and chunks[-1]["choices"] == []
        else:
            assert not usage


def test_responses_match_the_schema(wire, contract):
    for path, method, body in wire["responses"]:
        pointer = contract.published(json_schema(path, method), f"{method.upper()} {path} 200")
        contract.validate(pointer, body, f"{method.upper()} {path} ({body['status']})")
    assert {b["grounding"]["status"] for _, _, b in wire["responses"]} == {"grounded", "abstained"}


def test_each_responses_event_matches_the_event_schema(wire, contract):
    pointer = contract.published(chunk_schema("/v1/responses"), "the SSE events of POST /v1/responses")
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}
    for label, events in wire["response_streams"]:
        for i, event in enumerate(events):
            contract.validate(pointer, event, f"{label} Responses stream, event {i} ({event['type']})")
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        assert events[0]["type"] == "response.created" and events[-1]["type"] == terminal[label]
        assert len({e["response"]["id"] for e in events if "response" in e}) == 1


def test_context_response_matches_the_schema(wire, contract):
    pointer = contract.published(json_schema("/v1/context", "post"), "POST /v1/context 200")
    for body in wire["context"]:
        contract.validate(pointer, body, "/v1/context")


def test_models_response_matches_the_schema(wire, contract):
    pointer = contract.published(json_schema("/v1/models", "get"), "GET /v1/models 200")
    for body in wire["models"]:
        contract.validate(pointer, body, "/v1/models")
    for name, schema in contract.objects(pointer).items():
        assert "properties" in schema, f"GET /v1/models publishes a free-form object ({name}), not the model list"


def test_errors_match_the_published_error_schema(wire, contract):
    for path, method, status, body in wire["errors"]:
        pointer = contract.published(json_schema(path, method, status), f"{method.upper()} {path} {status}")
        contract.validate(pointer, body, f"{method.upper()} {path} {status}")
    for path, item in contract.doc["paths"].items():
        for method, op in item.items():
            # Validation errors leave as 400 in OpenAI's shape: a documented 422 would be a lie.
            assert "422" not in op.get("responses", {}), f"{method.upper()} {path} publishes a 422 it never sends"


def test_published_response_schemas_are_closed_and_require_what_is_always_sent(wire, contract):
    optional = set()
    for root in _roots(contract):
        if not contract.has(root):
            continue  # a missing schema fails in the test for its route
        for name, schema in contract.objects(root).items():
            if "properties" in schema:
                assert schema.get("additionalProperties") is False, f"{name} accepts undeclared fields"
                optional |= {(name, p) for p in set(schema["properties"]) - set(schema.get("required", []))}
            else:  # a map: its values typed
                assert isinstance(schema.get("additionalProperties"), dict), f"{name} is a free-form object"
    assert optional <= OPTIONAL_BY_DESIGN, (
        f"optional in the schema, though always sent: {sorted(optional - OPTIONAL_BY_DESIGN)}"
    )


def test_the_checks_catch_undeclared_and_missing_fields(wire, contract):
    """The validation is live: a body with an extra field, or without a required one, fails."""
    route, body = next((r, b) for r, b in wire["answers"] if b["grounding"]["sources"] and b["grounding"]["claims"])
    pointer = json_schema(route, "post")
    assert not contract.errors(pointer, body)
    mutations = [
        lambda b: b.__setitem__("system_fingerprint", "x"),
        lambda b: b["grounding"].__setitem__("debug", {}),
        lambda b: b["grounding"]["sources"][0].__setitem__("snippet", "x"),
        lambda b: b["grounding"]["claims"][0].__setitem__("confidence", 1.0),
        lambda b: b["grounding"]["cost"].__setitem__("currency", "USD"),
        lambda b: b["grounding"].pop("selection"),
        lambda b: b["grounding"]["sources"][0].pop("via"),
        lambda b: b["grounding"]["claims"][0].pop("judged"),
        lambda b: b["choices"][0]["message"].pop("refusal"),
        lambda b: b["grounding"].__setitem__("status", "maybe"),
        lambda b: b["grounding"]["route"].__setitem__("needs_search", None),
    ]
    for i, mutate in enumerate(mutations):
        broken = copy.deepcopy(body)
        mutate(broken)
        assert contract.errors(pointer, broken), f"mutation {i} passed validation"


def test_every_published_field_is_sent(wire, contract):
    """The schema describes nothing the service never emits: every declared property was seen."""
    seen: dict[str, set[str]] = defaultdict(set)
    declared: dict[str, set[str]] = {}
    for pointer, instance in _all_instances(wire):
        if not contract.has(pointer):
            continue  # a missing schema fails in the test for its route
        contract.observe(pointer, instance, seen)
        for name, schema in contract.objects(pointer).items():
            declared[name] = set(schema.get("properties", {}))
    never = {name: sorted(props - seen[name]) for name, props in declared.items() if props - seen[name]}
    assert not never, f"declared but never sent: {never}"
