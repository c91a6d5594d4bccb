"""The reference for cache hits: a bare FastAPI JSON route under the same uvicorn.

    python -m bench.bare_app --port 8099 --body-file response.json

POST /v1/chat/completions parses the JSON body (as FastAPI does for the service) and answers the
given document, serialised with orjson per request (as the service does). GET /healthz for start-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from fastapi import Body, FastAPI
from fastapi.responses import Response


def create_app(document: Any) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def answer(body: dict = Body(...)) -> Response:
        return Response(orjson.dumps(document), media_type="application/json")

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    return app


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--body-file", type=Path, required=True)
    args = ap.parse_args()
    app = create_app(orjson.loads(args.body_file.read_bytes()))
    # The same choices as `python -m uvicorn app.main:app` (auto = uvloop + httptools when installed).
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
