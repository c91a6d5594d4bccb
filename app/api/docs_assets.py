"""/docs (Swagger UI) and /redoc (ReDoc) that work offline: their JavaScript, CSS and favicon are
served by the service itself from the `fastapi-offline` package's static files, so the pages
reference no CDN (FastAPI's own pages load them from jsDelivr and are blank without the internet)."""

from __future__ import annotations

import mimetypes
from importlib import resources
from importlib.abc import Traversable

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

ASSETS_URL = "/docs/assets"
ASSET_NAMES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
_MISSING = (
    "<!doctype html><title>{title}</title><p>The {what} assets are not installed "
    "(<code>pip install fastapi-offline</code>). The schema is at <a href='{openapi}'>{openapi}</a>.</p>"
)


def _static() -> Traversable | None:
    try:
        return resources.files("fastapi_offline").joinpath("static")
    except ModuleNotFoundError:
        return None


def install_offline_docs(app: FastAPI) -> None:
    """Replace FastAPI's CDN-backed /docs and /redoc with pages whose assets this service serves."""
    docs_url, redoc_url = app.docs_url or "/docs", app.redoc_url or "/redoc"
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"
    replaced = {docs_url, redoc_url, oauth2_url}
    app.router.routes[:] = [r for r in app.router.routes if not (isinstance(r, Route) and r.path in replaced)]
    static = _static()
    cached: dict[str, bytes] = {}

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if static is None or name not in ASSET_NAMES:
            return Response(status_code=404)
        if name not in cached:
            cached[name] = static.joinpath(name).read_bytes()
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return Response(cached[name], media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})

    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        if static is None:
            return HTMLResponse(_MISSING.format(title=app.title, what="Swagger UI", openapi=root + openapi_url))
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=app.title + " - Swagger UI",
            oauth2_redirect_url=root + oauth2_url,
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        if static is None:
            return HTMLResponse(_MISSING.format(title=app.title, what="ReDoc", openapi=root + openapi_url))
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=app.title + " - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    async def oauth2_redirect(request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    routes: list[BaseRoute] = [
        Route(docs_url, swagger, methods=["GET"], include_in_schema=False),
        Route(oauth2_url, oauth2_redirect, methods=["GET"], include_in_schema=False),
        Route(f"{ASSETS_URL}/{{name}}", asset, methods=["GET"], include_in_schema=False),
        Route(redoc_url, redoc, methods=["GET"], include_in_schema=False),
    ]
    app.router.routes[:0] = routes
