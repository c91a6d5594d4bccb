"""One exception root, one error shape (OpenAI's).

Technical errors (an upstream timed out, refused, answered 5xx or 429) may be retried or handed to
the next provider; logical errors (bad request, bad credentials) fail at once.
"""

from __future__ import annotations


class GroundingError(Exception):
    """Root of every error this service raises on purpose."""

    status_code = 500
    error_type = "server_error"
    code: str | None = "internal_error"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code

    def to_body(self) -> dict:
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }


class InvalidRequest(GroundingError):
    status_code = 400
    error_type = "invalid_request_error"
    code = "invalid_request"


class Unauthorized(GroundingError):
    status_code = 401
    error_type = "authentication_error"
    code = "invalid_api_key"


class NotFound(GroundingError):
    status_code = 404
    error_type = "invalid_request_error"
    code = "not_found"


class UpstreamError(GroundingError):
    """A provider failed. `technical` errors may be retried or failed over."""

    status_code = 502
    error_type = "upstream_error"
    code = "upstream_error"

    def __init__(self, message: str, *, provider: str = "", technical: bool = True, **kw):
        super().__init__(message, **kw)
        self.provider = provider
        self.technical = technical


class ProviderTechnicalError(UpstreamError):
    """Timeout, connection error, 5xx, 429: try again later or try the next provider."""


class ProviderLogicalError(UpstreamError):
    """Bad credentials, malformed request, unsupported: retrying will not help."""

    def __init__(self, message: str, *, provider: str = "", **kw):
        super().__init__(message, provider=provider, technical=False, **kw)
