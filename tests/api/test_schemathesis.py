"""The published OpenAPI schema, fuzzed (schemathesis): whatever a client sends that the schema
allows — and much that it does not — gets no server error, and every response matches the schema."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.main import create_app
from app.settings import Settings

KEY = "fuzz-key"
# Left out: "a schema-valid request is accepted". Some rules are not expressible in JSON Schema
# (the last message must be a non-empty user message; a domain must normalise to a host), so the
# schema is looser than the validator by design and such requests get a documented 400. Server
# errors and response conformance (status codes, content types, bodies, headers) are all checked.
EXCLUDED = [positive_data_acceptance]
RAW_SCHEMA = create_app(Settings(auth="disabled")).openapi()  # what /openapi.json serves
OPERATIONS = [
    (path, method.upper())
    for path, item in sorted(RAW_SCHEMA["paths"].items())
    for method in item
    if method in ("get", "post", "put", "delete", "patch")
]


@pytest.fixture(scope="module")
def fuzzed_service(request):
    from simulators import ServiceServer

    svc = ServiceServer(api_keys=[KEY], deadline_ms=5_000).start()
    request.addfinalizer(svc.stop)
    return svc


@pytest.mark.parametrize("path,method", OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_no_server_errors_and_responses_match_the_schema(fuzzed_service, path, method):
    served = schemathesis.openapi.from_url(fuzzed_service.url + "/openapi.json")
    operation = served[path][method]

    @given(case=operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def fuzz(case):
        case.call_and_validate(
            base_url=fuzzed_service.url,
            headers={"Authorization": f"Bearer {KEY}"},
            excluded_checks=EXCLUDED,
            timeout=30,
        )

    fuzz()
