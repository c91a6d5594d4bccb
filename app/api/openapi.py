"""The OpenAPI document, with the chat request schema the answer routes parse themselves."""
from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.api.protocol import ChatCompletionRequest


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        request = ChatCompletionRequest.model_json_schema(ref_template="#/components/schemas/{model}")
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.update(request.pop("$defs", {}))
        components["ChatCompletionRequest"] = request
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
