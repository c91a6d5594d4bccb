"""POST /v1/context: the request and the evidence blocks it returns, for agents that compose
themselves."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.protocol.common import Wire, domain_list
from app.api.protocol.grounding import CostOut


class ContextRequest(BaseModel):
    """POST /v1/context: evidence blocks for agents that compose themselves."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(..., min_length=1, max_length=2000, description="The question to gather evidence for.")
    token_budget: int = Field(4000, ge=256, le=32000, description="Upper bound of total_tokens (256-32000).")
    depth: int = Field(6, ge=1, le=20, description="Pages to read (1-20).")
    include_domains: list[str] = Field(default_factory=list, max_length=50)
    exclude_domains: list[str] = Field(default_factory=list, max_length=50)
    freshness_days: int | None = Field(None, ge=1, le=3650)
    cache: Literal["use", "bypass", "refresh"] = "use"

    @field_validator("include_domains", "exclude_domains")
    @classmethod
    def _domains(cls, v: list[str]) -> list[str]:
        return domain_list(v)

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must not be blank")
        return v.strip()


class ContextBlock(Wire):
    text: str
    url: str
    title: str
    published_at: str | None
    score: float
    tokens: int = Field(..., description="Tokens of text (tiktoken).")
    also_reported_by: list[str]


class ContextResponse(Wire):
    blocks: list[ContextBlock] = Field(..., description="Best first.")
    total_tokens: int = Field(..., description="Sum of the blocks' tokens; never above token_budget.")
    request_id: str
    queries: list[str]
    cost: CostOut
