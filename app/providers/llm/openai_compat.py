"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LiteLLM …) through the openai SDK.

One attempt per call: the SDK's own retries are off (max_retries=0) because app/providers/retry.py
retries every upstream the same way (bounded, jittered, Retry-After honoured, inside the request
deadline) and app/providers/llm/resilient.py wraps this model with it. Every call carries an
explicit httpx timeout (the SDK's default is 600 s). Errors follow app/errors.py: timeouts,
refused connections, 408/409/429/5xx and bodies that are not a chat completion are technical;
other 4xx are logical.
"""

from __future__ import annotations

import openai
from openai.types.chat import ChatCompletion

from app.errors import ProviderLogicalError, ProviderTechnicalError
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

    async def complete(
        self, messages, *, model, temperature=0.0, max_tokens=None, timeout=None, json_mode=False, extra=None
    ) -> Completion:
        kwargs: dict = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if timeout is not None:
            t = max(0.1, timeout)
            kwargs["timeout"] = openai.Timeout(t, connect=min(self._connect_s, t))
        if extra:
            kwargs.update(extra)
        try:
            resp = await self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise ProviderTechnicalError(f"LLM upstream timed out ({model})", provider=PROVIDER) from exc
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
            raise ProviderTechnicalError(f"LLM upstream unreachable: {cause}", provider=PROVIDER) from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status >= 500 or status in RETRYABLE_STATUS:
                raise RetryLater(
                    f"LLM upstream answered {status}",
                    provider=PROVIDER,
                    retry_after=retry_after_from_headers(exc.response.headers),
                ) from exc
            raise ProviderLogicalError(f"LLM upstream refused the request ({status})", provider=PROVIDER) from exc
        except openai.OpenAIError as exc:
            raise ProviderTechnicalError(f"LLM upstream failed: {type(exc).__name__}", provider=PROVIDER) from exc
        except ValueError as exc:  # a 200 whose body is not JSON (json.JSONDecodeError)
            raise ProviderTechnicalError("LLM upstream sent invalid JSON", provider=PROVIDER) from exc
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
            text=message.content or "",
            model=resp.model or model,
            prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
            completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
            finish_reason=getattr(choice, "finish_reason", None) or "stop",
        )

    async def aclose(self) -> None:
        await self._client.close()


register_chat_model(PROVIDER, OpenAICompatibleChatModel)
