"""`uvicorn tests.deploy.multiworker_app:app --workers N`: the production app (app.main:app) with the
HTTP metrics middleware ensured (idempotent, so it stays right once app/main.py installs it) and
/metrics answered by app.metrics_export.render_metrics (until app/api/routes.py uses it)."""
from __future__ import annotations

from fastapi import Response

from app.main import app as _production_app
from app.metrics_export import install_http_metrics, render_metrics


def _metrics_route() -> Response:
    body, content_type = render_metrics()
    return Response(body, media_type=content_type)


def _with_multiprocess_metrics(app):
    install_http_metrics(app)
    # Shadow the router's /metrics: same path (same route label), matched first.
    app.add_api_route("/metrics", _metrics_route, methods=["GET"], include_in_schema=False)
    app.router.routes.insert(0, app.router.routes.pop())
    return app


app = _with_multiprocess_metrics(_production_app)
