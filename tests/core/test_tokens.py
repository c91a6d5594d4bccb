"""Token counting: offline encodings, in the composing model's encoding."""

from __future__ import annotations

from app.settings import Settings
from app.tokens import TokenCounter


def test_counts_in_the_composing_models_encoding():
    assert TokenCounter.for_settings(Settings()).encoding == "o200k_base"  # no model: GA_TOKEN_ENCODING
    gpt4o = Settings(llm_base_url="http://127.0.0.1:1/v1", composer_model="gpt-4o")
    assert TokenCounter.for_settings(gpt4o).encoding == "o200k_base"
    gpt4 = Settings(llm_base_url="http://127.0.0.1:1/v1", composer_model="gpt-4-turbo")
    counter = TokenCounter.for_settings(gpt4)
    assert counter.encoding == "cl100k_base"
    assert counter.count("hello world") == 2
