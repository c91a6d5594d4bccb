"""What the chat, context and Responses bodies share: the `grounding` request options, the domain
lists they validate, the base of the response models (documented in OpenAPI, built as plain dicts
on the hot path), the error body and the model list."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def domain_list(values: list[str]) -> list[str]:
    """'https://www.Example.com/x' -> 'example.com'; blanks and junk are refused."""
    from app.urls import normalize_domain

    out = [normalize_domain(d) for d in values]
    for d in out:
        if not d or " " in d:
            raise ValueError(f"not a domain: {d!r}")
    return list(dict.fromkeys(out))


class GroundingOptions(BaseModel):
    """Per-request grounding controls. Unset fields take the server's configured defaults."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["auto", "always", "never"] = Field(
        "auto", description="auto: the router decides whether to search; always / never override."
    )
    freshness_days: int | None = Field(
        None,
        ge=1,
        le=3650,
        description="Evidence age window in days (1-3650). Default: from the planner "
        "(short for time-sensitive questions), else GA_DEFAULT_FRESHNESS_DAYS.",
    )
    include_domains: list[str] = Field(
        default_factory=list, max_length=50, description="Only these domains (and subdomains). Default: any."
    )
    exclude_domains: list[str] = Field(
        default_factory=list, max_length=50, description="Never these domains (and subdomains)."
    )
    primary_domains: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Official sources for the subject; boosted and "
        "required when require_primary. Default: GA_PRIMARY_DOMAINS.",
    )
    max_queries: int | None = Field(None, ge=1, le=4, description="Search queries planned (1-4). Default 3.")
    max_results: int | None = Field(None, ge=1, le=50, description="Results asked per query (1-50). Default 8.")
    max_fetches: int | None = Field(None, ge=0, le=20, description="Pages fetched (0-20). Default 6.")
    max_evidence: int | None = Field(
        None,
        ge=1,
        le=50,
        description="Most evidence spans shown to the composer (1-50); the token budget packs them. Default 40.",
    )
    token_budget: int | None = Field(
        None, ge=256, le=32000, description="Token budget of the evidence block (256-32000). Default 5000."
    )
    min_sources: int | None = Field(
        None, ge=1, le=10, description="Independent registrable domains required (1-10). Default 2."
    )
    require_primary: bool = Field(False, description="Abstain unless a primary source is among the evidence.")
    verification: Literal["drop", "flag", "off"] = Field(
        "drop", description="Unsupported sentences: drop them, flag them in grounding.claims, or skip checking."
    )
    on_conflict: Literal["surface", "prefer", "abstain"] = Field(
        "surface", description="When sources disagree: state both, prefer the authoritative/recent one, or abstain."
    )
    cache: Literal["use", "bypass", "refresh"] = Field("use", description="Cache policy for this request.")
    deadline_ms: int | None = Field(
        None, ge=500, le=120_000, description="Whole-request deadline (500-120000 ms). Default GA_DEADLINE_MS."
    )
    max_cost_usd: float | None = Field(None, ge=0, description="Stop before spending more than this (USD).")
    max_searches: int | None = Field(None, ge=0, le=40, description="Stop before more search calls than this.")

    @field_validator("include_domains", "exclude_domains", "primary_domains")
    @classmethod
    def _domains(cls, v: list[str]) -> list[str]:
        return domain_list(v)


# --- response (documented in OpenAPI; built as plain dicts on the hot path) -------------------
#
# These models are never instantiated on the answer path: app/api/render.py, sse.py, context.py
# and routes.py build the bodies as dicts. They describe those dicts exactly, for the published
# schema: every field that is always emitted is required (no defaults), nullable only where the
# code can emit null, and no model allows a field it does not declare (additionalProperties:
# false). tests/api/test_openapi_contract.py validates real responses against /openapi.json.


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def omitted(description: str) -> Any:
    """A field that is sometimes left out of the body (never sent as null): not required, no default."""
    return Field(None, description=description, json_schema_extra=_no_default)


class ErrorDetail(Wire):
    message: str
    type: str = Field(
        ...,
        description="invalid_request_error, authentication_error, rate_limit_error, upstream_error or server_error.",
    )
    param: str | None
    code: str | None


class ErrorResponse(Wire):
    """Every error, in OpenAI's shape."""

    error: ErrorDetail


class ModelCard(Wire):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(Wire):
    object: Literal["list"]
    data: list[ModelCard]
