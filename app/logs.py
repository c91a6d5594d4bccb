"""Structured JSON logs carrying the request id."""

from __future__ import annotations

import contextvars
import logging
import sys

import orjson

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
# A client's own id for the request (X-Client-Request-Id): logged beside ours, never trusted as a key.
client_request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("client_request_id", default="")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": request_id_var.get(),
        }
        client_id = client_request_id_var.get()
        if client_id:
            entry["client_request_id"] = client_id
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure_logging(level: str = "INFO") -> None:
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    # httpx logs every outbound request at INFO: the metrics and traces already count them.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root.level))
    # trafilatura (the extraction fallback) warns about every element it discards: page content, not
    # a service condition; and htmldate about unparsable dates.
    for noisy in ("trafilatura", "htmldate"):
        logging.getLogger(noisy).setLevel(max(logging.ERROR, root.level))
