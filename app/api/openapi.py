"""The OpenAPI document, with the chat request schema the answer routes parse themselves."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from app.api.protocol import ChatCompletionChunk, ChatCompletionRequest


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
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
