"""The answer inspector's page: GET /inspect and its two static files (docs/INSPECTOR.md).

The page is static and self-contained (no build step, no external fonts or scripts; the Content
Security Policy below forbids loading anything from another origin). It loads without a key and then
calls the API with the key the user types (`Authorization: Bearer`), so it sees exactly what that
caller may see. `GA_INSPECTOR_ENABLED=false` turns all three routes into 404s.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from app.api.deps import get_state
from app.errors import NotFound
from app.state import ServiceState

router = APIRouter()

# name → media type: the only files served (no path ever reaches the filesystem).
ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "inspector.js": "text/javascript; charset=utf-8",
    "inspector.css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = {
    # Same-origin only: the page can talk to this service and nothing else, and no one can frame it.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@lru_cache(maxsize=len(ASSETS))
def asset(name: str) -> bytes:
    return files("app.inspect").joinpath("static", name).read_bytes()


def _serve(name: str, state: ServiceState) -> Response:
    if not state.settings.inspector_enabled or name not in ASSETS:
        raise NotFound("not found", param="path")
    return Response(asset(name), media_type=ASSETS[name], headers=SECURITY_HEADERS)


@router.get("/inspect", include_in_schema=False)
async def inspect_page(state: ServiceState = Depends(get_state)) -> Response:
    return _serve("index.html", state)


@router.get("/inspect/{name}", include_in_schema=False)
async def inspect_asset(name: str, state: ServiceState = Depends(get_state)) -> Response:
    return _serve(name, state)
