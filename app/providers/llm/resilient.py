"""The chat model the pipeline sees: any registered ChatModel behind the shared retry loop and a
circuit breaker per model (app/providers/retry.py, app/providers/breaker.py).

`complete(timeout=…)` treats `timeout` as the caller's whole budget (the pipeline passes the time
left before the request deadline): attempts are retried inside it, each one bounded by
`llm_timeout_s`. When `llm_fallback_base_url` is set, calls for `llm_fallback_model` go to that
endpoint's client; otherwise every model shares the primary endpoint. Which model to fall back to
is the composer's decision (app/pipeline/composers/llm.py), so it can report it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from app.providers.breaker import BreakerBoard
from app.providers.llm.base import ChatModel, Completion, CompletionStream, build_chat_model
from app.providers.retry import RetryPolicy, call_with_retries
from app.settings import Settings

KIND = "llm"


class StartedStream:
    """A stream whose first delta has been read (inside the retry loop): it is given back first."""

    def __init__(self, upstream: CompletionStream, deltas: AsyncIterator[str], first: str | None):
        self._upstream, self._deltas, self._first = upstream, deltas, first

    @property
    def completion(self) -> Completion:
        return self._upstream.completion

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    async def _read(self) -> AsyncIterator[str]:
        if self._first is None:
            return
        yield self._first
        async for delta in self._deltas:
            yield delta

    async def aclose(self) -> None:
        await self._upstream.aclose()


class ResilientChatModel:
    def __init__(
        self,
        primary: ChatModel,
        settings: Settings,
        breakers: BreakerBoard,
        *,
        fallback_endpoint: ChatModel | None = None,
    ):
        self.inner = primary
        self.name = primary.name
        self._fallback_endpoint = fallback_endpoint
        self._settings = settings
        self.policy = RetryPolicy.from_settings(settings)
        self.breakers = breakers

    @classmethod
    def build(cls, settings: Settings, breakers: BreakerBoard) -> ResilientChatModel:
        primary = build_chat_model(settings.llm_provider, settings)
        other = None
        if settings.llm_fallback_model and settings.llm_fallback_base_url:
            other = build_chat_model(
                settings.llm_provider, settings.model_copy(update={"llm_base_url": settings.llm_fallback_base_url})
            )
        return cls(primary, settings, breakers, fallback_endpoint=other)

    def _client_for(self, model: str) -> ChatModel:
        if self._fallback_endpoint is not None and model == self._settings.llm_fallback_model:
            return self._fallback_endpoint
        return self.inner

    def breaker_name(self, model: str) -> str:
        return model

    async def complete(
        self,
        messages: list[dict],
        *,
        model: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
        json_mode: bool = False,
        extra: dict | None = None,
    ) -> Completion:
        client = self._client_for(model)
        budget = self._settings.llm_timeout_s * self.policy.max_attempts if timeout is None else timeout

        async def attempt(t: float) -> Completion:
            return await client.complete(
                messages,
                model=model,
                temperature=temperature,
                max_tokens=max_tokens,
                timeout=t,
                json_mode=json_mode,
                extra=extra,
            )

        return await call_with_retries(
            attempt,
            policy=self.policy,
            deadline=time.monotonic() + max(0.0, budget),
            attempt_timeout=self._settings.llm_timeout_s,
            kind=KIND,
            provider=model,
            breaker=self.breakers.get(KIND, self.breaker_name(model)),
        )

    async def stream(
        self,
        messages: list[dict],
        *,
        model: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
        extra: dict | None = None,
    ) -> CompletionStream:
        """Retries and the breaker cover the request up to its first delta; after that the stream
        is the answer being written, and a failure is an error for the reader, never a retry."""
        client = self._client_for(model)
        budget = self._settings.llm_timeout_s * self.policy.max_attempts if timeout is None else timeout

        async def attempt(t: float) -> StartedStream:
            upstream = await client.stream(
                messages, model=model, temperature=temperature, max_tokens=max_tokens, timeout=t, extra=extra
            )
            deltas = aiter(upstream)
            try:
                first = await anext(deltas)
            except StopAsyncIteration:
                return StartedStream(upstream, deltas, None)
            except BaseException:
                await upstream.aclose()
                raise
            return StartedStream(upstream, deltas, first)

        started: StartedStream = await call_with_retries(
            attempt,
            policy=self.policy,
            deadline=time.monotonic() + max(0.0, budget),
            attempt_timeout=self._settings.llm_timeout_s,
            kind=KIND,
            provider=model,
            breaker=self.breakers.get(KIND, self.breaker_name(model)),
        )
        return started

    async def aclose(self) -> None:
        await self.inner.aclose()
        if self._fallback_endpoint is not None:
            await self._fallback_endpoint.aclose()
