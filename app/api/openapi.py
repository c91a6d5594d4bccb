"""The OpenAPI document, with the request schemas the answer routes parse themselves and the SSE
event schemas; /docs and /redoc served offline (app/api/docs_assets.py)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from app.api.docs_assets import install_offline_docs
from app.api.protocol import ChatCompletionChunk, ChatCompletionRequest, ResponsesRequest, ResponseStreamEvent


def _publish(components: dict[str, Any], model: type[BaseModel], mode: Literal["validation", "serialization"]) -> None:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode=mode)
    for name, definition in schema.pop("$defs", {}).items():
        components.setdefault(name, definition)  # FastAPI's own where it already published the model
    components[model.__name__] = schema


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        _publish(components, ChatCompletionRequest, "validation")
        _publish(components, ChatCompletionChunk, "serialization")  # the text/event-stream 200's events
        _publish(components, ResponsesRequest, "validation")
        _publish(components, ResponseStreamEvent, "serialization")  # POST /v1/responses' stream events
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    install_offline_docs(app)  # /docs and /redoc with assets served from a package, no CDN
