"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LiteLLM …) through the openai SDK."""

from __future__ import annotations

import openai

from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.llm.base import Completion, register_chat_model
from app.settings import Settings


class OpenAICompatibleChatModel:
    name = "openai"

    def __init__(self, settings: Settings):
        # Explicit timeouts: the SDK's default is 600 s, far beyond any answer's deadline.
        self._client = openai.AsyncOpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key or "not-needed",
            timeout=openai.Timeout(settings.llm_timeout_s, connect=settings.llm_connect_timeout_s),
            max_retries=settings.llm_max_retries,
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
            kwargs["timeout"] = max(0.1, timeout)
        if extra:
            kwargs.update(extra)
        try:
            resp = await self._client.chat.completions.create(**kwargs)
        except (
            openai.APITimeoutError,
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        ) as exc:
            raise ProviderTechnicalError(f"LLM upstream failed: {type(exc).__name__}", provider="openai") from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                raise ProviderTechnicalError(f"LLM upstream answered {exc.status_code}", provider="openai") from exc
            raise ProviderLogicalError(
                f"LLM upstream refused the request ({exc.status_code})", provider="openai"
            ) from exc
        except openai.OpenAIError as exc:
            raise ProviderTechnicalError(f"LLM upstream failed: {type(exc).__name__}", provider="openai") from exc
        if not resp.choices:
            raise ProviderTechnicalError("LLM upstream returned no choices", provider="openai")
        choice = resp.choices[0]
        usage = resp.usage
        return Completion(
            text=choice.message.content or "",
            model=resp.model or model,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            finish_reason=choice.finish_reason or "stop",
        )

    async def aclose(self) -> None:
        await self._client.close()


register_chat_model("openai", OpenAICompatibleChatModel)
