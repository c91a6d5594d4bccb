"""Bad input gets a 400 in OpenAI's error shape naming the parameter; never a 422 or a stack trace."""

from __future__ import annotations

import httpx
import pytest

GOOD = [{"role": "user", "content": "What is tomllib?"}]
CASES = [
    ({"model": "x", "messages": GOOD, "n": 2}, "n"),
    ({"model": "x", "messages": GOOD, "tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ({"model": "x", "messages": GOOD, "functions": [{"name": "f"}]}, "functions"),
    ({"model": "x", "messages": GOOD, "tool_choice": "auto"}, "tool_choice"),
    ({"model": "x", "messages": GOOD, "response_format": {"type": "json_object"}}, "response_format"),
    (
        {
            "model": "x",
            "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://a.example/i.png"}}]}
            ],
        },
        "messages[0].content[0]",
    ),
    (
        {"model": "x", "messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
        "messages[0].content[0]",
    ),
    ({"model": "x", "messages": [{"role": "user", "content": "   "}]}, "messages"),
    ({"model": "x", "messages": [{"role": "system", "content": "be brief"}]}, "messages"),
    ({"model": "x", "messages": []}, "messages"),
    ({"model": "x"}, "messages"),
    ({"model": "x", "messages": GOOD, "temperature": 5}, "temperature"),
    ({"model": "x", "messages": GOOD, "grounding": {"max_queries": 9}}, "grounding.max_queries"),
    ({"model": "x", "messages": GOOD, "grounding": {"verification": "maybe"}}, "grounding.verification"),
    ({"model": "x", "messages": GOOD, "grounding": {"bogus": 1}}, "grounding.bogus"),
    ({"model": "x", "messages": GOOD, "grounding": {"token_budget": 10}}, "grounding.token_budget"),
    ({"model": "x", "messages": GOOD, "grounding": {"max_evidence": 51}}, "grounding.max_evidence"),
    ({"model": "x", "messages": [{"role": "tool", "content": "x"}, *GOOD]}, "messages[0].role"),
]


@pytest.fixture(scope="module")
def svc(request):
    from simulators import ServiceServer

    s = ServiceServer(api_keys=[]).start()
    request.addfinalizer(s.stop)
    return s


@pytest.mark.parametrize("body,param", CASES)
def test_bad_requests_are_400_in_openai_shape(svc, body, param):
    r = httpx.post(svc.url + "/v1/chat/completions", json=body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error"
    assert err["param"] == param
    assert err["message"] and "Traceback" not in r.text


def test_invalid_json_is_400(svc):
    r = httpx.post(svc.url + "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"


def test_unknown_route_is_404_in_openai_shape(svc):
    r = httpx.get(svc.url + "/v1/nothing")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_ignored_params_are_listed(svc):
    r = httpx.post(
        svc.url + "/v1/chat/completions",
        json={
            "model": "x",
            "messages": GOOD,
            "presence_penalty": 0.5,
            "logit_bias": {"1": 2},
            "temperature": 0.3,
            "seed": 7,
        },
    )
    assert r.status_code == 200
    ignored = r.json()["grounding"]["ignored_params"]
    # presence_penalty / logit_bias never apply; temperature and seed cannot apply to the extractive composer.
    assert {"presence_penalty", "logit_bias", "temperature", "seed"} <= set(ignored)


def test_api_keys_guard_the_api(service_factory):
    s = service_factory(api_keys=["sekret"])
    r = httpx.post(s.url + "/v1/chat/completions", json={"model": "x", "messages": GOOD})
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    ok = httpx.post(
        s.url + "/v1/chat/completions",
        json={"model": "x", "messages": GOOD},
        headers={"Authorization": "Bearer sekret"},
        timeout=30,
    )
    assert ok.status_code == 200
    assert httpx.get(s.url + "/healthz").status_code == 200  # probes stay open


def test_openapi_documents_the_chat_body_and_every_grounding_option(svc):
    schema = httpx.get(svc.url + "/openapi.json").json()
    body = schema["paths"]["/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/ChatCompletionRequest"}
    options = schema["components"]["schemas"]["GroundingOptions"]["properties"]
    for name in (
        "mode",
        "freshness_days",
        "include_domains",
        "exclude_domains",
        "primary_domains",
        "max_queries",
        "max_results",
        "max_fetches",
        "max_evidence",
        "token_budget",
        "min_sources",
        "require_primary",
        "verification",
        "on_conflict",
        "cache",
        "deadline_ms",
    ):
        assert name in options and options[name].get("description"), name
    assert options["max_queries"]["anyOf"][0]["maximum"] == 4
