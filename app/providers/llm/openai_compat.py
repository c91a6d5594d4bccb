"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LiteLLM …) through the openai SDK.

One attempt per call: the SDK's own retries are off (max_retries=0) because app/providers/retry.py
retries every upstream the same way (bounded, jittered, Retry-After honoured, inside the request
deadline) and app/providers/llm/resilient.py wraps this model with it. Every call carries an
explicit httpx timeout (the SDK's default is 600 s). Errors follow app/errors.py: timeouts,
refused connections, 408/409/429/5xx and bodies that are not a chat completion are technical;
other 4xx are logical.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.language.text import well_formed
from app.providers.llm.base import Completion, register_chat_model
from app.providers.retry import RetryLater, retry_after_from_headers
from app.settings import Settings

PROVIDER = "openai"
RETRYABLE_STATUS = (408, 409, 429)


class OpenAICompatibleChatModel:
    name = PROVIDER

    def __init__(self, settings: Settings, *, base_url: str | None = None):
        self._connect_s = settings.llm_connect_timeout_s
        self._client = openai.AsyncOpenAI(
            base_url=base_url or settings.llm_base_url,
            api_key=settings.llm_api_key or "not-needed",
            timeout=openai.Timeout(settings.llm_timeout_s, connect=settings.llm_connect_timeout_s),
            max_retries=0,
        )

    def _kwargs(self, messages, model, temperature, max_tokens, timeout, extra) -> dict:
        kwargs: dict = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if timeout is not None:
            t = max(0.1, timeout)
            kwargs["timeout"] = openai.Timeout(t, connect=min(self._connect_s, t))
        if extra:
            kwargs.update(extra)
        return kwargs

    async def complete(
        self, messages, *, model, temperature=0.0, max_tokens=None, timeout=None, json_mode=False, extra=None
    ) -> Completion:
        kwargs = self._kwargs(messages, model, temperature, max_tokens, timeout, extra)
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            resp = await self._client.chat.completions.create(**kwargs)
        except (openai.OpenAIError, ValueError) as exc:
            raise upstream_error(exc, model) from exc
        # A 200 with JSON of another shape (or a non-JSON content type) parses into something else.
        if not isinstance(resp, ChatCompletion) or not isinstance(resp.choices, list):
            raise ProviderTechnicalError(
                "LLM upstream sent a malformed response (not a chat completion)", provider=PROVIDER
            )
        if not resp.choices:
            raise ProviderTechnicalError("LLM upstream returned no choices", provider=PROVIDER)
        choice = resp.choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise ProviderTechnicalError("LLM upstream sent a malformed response (no message)", provider=PROVIDER)
        usage = resp.usage
        return Completion(
            text=message_text(getattr(message, "content", None)),
            model=_model_name(resp.model, model),
            prompt_tokens=token_count(getattr(usage, "prompt_tokens", None)),
            completion_tokens=token_count(getattr(usage, "completion_tokens", None)),
            finish_reason=_finish_reason(getattr(choice, "finish_reason", None)),
            requested=model,
        )

    async def stream(
        self, messages, *, model, temperature=0.0, max_tokens=None, timeout=None, extra=None
    ) -> OpenAICompletionStream:
        """`stream=True` with `stream_options.include_usage`: the usage arrives in the last chunk."""
        kwargs = self._kwargs(messages, model, temperature, max_tokens, timeout, extra)
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
        try:
            raw = await self._client.chat.completions.create(**kwargs)
        except (openai.OpenAIError, ValueError) as exc:
            raise upstream_error(exc, model) from exc
        if not isinstance(raw, openai.AsyncStream):
            raise ProviderTechnicalError("LLM upstream did not stream", provider=PROVIDER)
        return OpenAICompletionStream(raw, model)

    async def aclose(self) -> None:
        await self._client.close()


def upstream_error(exc: BaseException, model: str) -> ProviderTechnicalError | ProviderLogicalError:
    """The app/errors.py class of an SDK (or transport) failure."""
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        return ProviderTechnicalError(f"LLM upstream timed out ({model})", provider=PROVIDER)
    if isinstance(exc, openai.APIConnectionError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
        return ProviderTechnicalError(f"LLM upstream unreachable: {cause}", provider=PROVIDER)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            return RetryLater(
                f"LLM upstream answered {status}",
                provider=PROVIDER,
                retry_after=retry_after_from_headers(exc.response.headers),
            )
        return ProviderLogicalError(f"LLM upstream refused the request ({status})", provider=PROVIDER)
    if isinstance(exc, httpx.HTTPError):  # mid-stream: the connection dropped or a read failed
        return ProviderTechnicalError(f"LLM upstream stream broke: {type(exc).__name__}", provider=PROVIDER)
    if isinstance(exc, openai.OpenAIError):
        return ProviderTechnicalError(f"LLM upstream failed: {type(exc).__name__}", provider=PROVIDER)
    # a 200 whose body (or an event of a stream) is not JSON (json.JSONDecodeError)
    return ProviderTechnicalError("LLM upstream sent invalid JSON", provider=PROVIDER)


# What an OpenAI-compatible server sends is checked where it enters: servers differ (content as a
# list of parts), and a broken one must cost a retry or a fallback, never a 500 further down.
MAX_TOKEN_COUNT = 10**9  # usage beyond this is not a count (booked as our own count instead)
MAX_NAME_CHARS = 200  # a model name or finish reason longer than this is not one
_TEXT_PARTS = (None, "text", "output_text")  # content part types that hold the answer's text


def message_text(content: object) -> str:
    """A message's text: a string, or the text parts of a list of parts; anything else is malformed."""
    if content is None:
        return ""
    if isinstance(content, str):
        return well_formed(content)
    if isinstance(content, list):
        # Text parts only: a server's "reasoning" or "refusal" part is not the answer.
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            if kind in _TEXT_PARTS and isinstance(text, str):
                texts.append(text)
        return well_formed("".join(texts))
    raise ProviderTechnicalError("LLM upstream sent a malformed response (content is not text)", provider=PROVIDER)


def token_count(value: object) -> int | None:
    """A usage count when it is one (a non-negative integer), else None: counted with tiktoken."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    return None


def _model_name(value: object, requested: str) -> str:
    return well_formed(value) if isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS else requested


def _finish_reason(value: object) -> str:
    return well_formed(value) if isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS else "stop"


class OpenAICompletionStream:
    """The SDK's chunk stream as text deltas; `completion` is complete once the deltas end."""

    def __init__(self, raw: openai.AsyncStream[ChatCompletionChunk], model: str):
        self._raw = raw
        self.completion = Completion(text="", model=model, requested=model)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._deltas()

    async def _deltas(self) -> AsyncIterator[str]:
        parts: list[str] = []
        done = self.completion
        try:
            async for chunk in self._raw:
                if chunk.model:
                    done.model = _model_name(chunk.model, done.model)
                if chunk.usage is not None:
                    done.prompt_tokens = token_count(getattr(chunk.usage, "prompt_tokens", None))
                    done.completion_tokens = token_count(getattr(chunk.usage, "completion_tokens", None))
                for choice in chunk.choices or []:
                    finish = getattr(choice, "finish_reason", None)
                    if finish:
                        done.finish_reason = _finish_reason(finish)
                    delta = getattr(choice, "delta", None)
                    text = message_text(getattr(delta, "content", None)) if delta is not None else ""
                    if text:
                        parts.append(text)
                        done.text = "".join(parts)
                        yield text
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:
            raise upstream_error(exc, done.model) from exc

    async def aclose(self) -> None:
        # Also when the reader is being cancelled (a client gone): the connection must close now.
        with anyio.CancelScope(shield=True):
            await self._raw.close()


register_chat_model(PROVIDER, OpenAICompatibleChatModel)
