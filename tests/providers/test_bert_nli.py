"""The numpy BERT NLI cross-encoder (GA_SUPPORT_MODEL=bert-nli) against a plain reference forward pass,
its label mapping, truncation and start-up errors. The model folders are tiny and random
(simulators/nli_model.py): no real NLI weights are reachable offline."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.errors import GroundingError
from app.providers.entailment.base import build_entailment
from app.providers.entailment.bert_nli import BertNLI, _label_index
from app.providers.rerank.minilm import read_safetensors
from app.settings import Settings
from simulators.nli_model import write_bert_nli


def _reference_logits(folder, premise: str, hypothesis: str) -> np.ndarray:
    """BERT for sequence classification written out step by step, one pair, one head at a time."""
    from tokenizers import Tokenizer

    config = json.loads((folder / "config.json").read_text())
    w = {k: v.astype(np.float64) for k, v in read_safetensors(folder / "model.safetensors").items()}
    enc = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(premise, hypothesis)
    heads, eps = config["num_attention_heads"], config["layer_norm_eps"]

    def norm(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
    n = len(enc.ids)
    e = "bert.embeddings."
    x = (
        w[e + "word_embeddings.weight"][enc.ids]
        + w[e + "position_embeddings.weight"][:n]
        + w[e + "token_type_embeddings.weight"][enc.type_ids]
    )
    x = norm(x, e + "LayerNorm")
    size = x.shape[1] // heads
    for i in range(config["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        q, k, v = (dense(x, f"{p}attention.self.{m}") for m in ("query", "key", "value"))
        outs = []
        for h in range(heads):
            s = slice(h * size, (h + 1) * size)
            scores = q[:, s] @ k[:, s].T / math.sqrt(size)
            attn = np.exp(scores - scores.max(-1, keepdims=True))
            attn /= attn.sum(-1, keepdims=True)
            outs.append(attn @ v[:, s])
        x = norm(
            x + dense(np.concatenate(outs, axis=1), p + "attention.output.dense"), p + "attention.output.LayerNorm"
        )
        x = norm(x + dense(gelu(dense(x, p + "intermediate.dense")), p + "output.dense"), p + "output.LayerNorm")
    pooled = np.tanh(dense(x[0], "bert.pooler.dense"))
    return dense(pooled, "classifier")


def test_logits_match_a_plain_reference_forward_pass(tmp_path):
    folder = write_bert_nli(tmp_path / "nli", seed=3)
    model = BertNLI(folder)
    pairs = [
        ("Acme raised the Pro plan price to $30 per month.", "Pro costs $30 monthly."),
        ("The queue is infinite when maxsize is zero.", "A zero maxsize means no limit on the queue's size."),
        ("Short.", "A much longer hypothesis than its premise, to pad the batch."),
    ]
    got = model.logits(pairs)  # one batch of three lengths: padding and token types must not leak
    for row, (premise, hypothesis) in zip(got, pairs):
        assert np.allclose(row, _reference_logits(folder, premise, hypothesis), atol=1e-4)
    # the three probabilities of a verdict sum to one, and differ with the text for random weights
    verdicts = model.entail(pairs)
    assert all(abs(v.entailment + v.contradiction + v.neutral - 1) < 1e-5 for v in verdicts)
    assert len({round(v.entailment, 6) for v in verdicts}) == 3


@pytest.mark.parametrize(
    "labels", [("contradiction", "entailment", "neutral"), ("ENTAILMENT", "neutral", "CONTRADICTION")]
)
def test_the_classes_are_read_from_id2label_in_any_order(tmp_path, labels):
    model = BertNLI(write_bert_nli(tmp_path / "nli", labels=labels, says=labels[0]))
    [v] = model.entail([("premise text", "hypothesis text")])
    if labels[0].lower().startswith("entail"):
        assert v.entailment > 0.99 and v.contradiction < 0.01
    else:
        assert v.contradiction > 0.99 and v.entailment < 0.01


def test_a_two_class_model_has_no_contradiction():
    assert _label_index({"0": "not_entailment", "1": "entailment"}) == {"entail": 1}
    assert _label_index({"0": "LABEL_0", "1": "LABEL_1"}) == {}


def test_a_long_premise_is_cut_and_the_claim_kept_whole(tmp_path):
    model = BertNLI(write_bert_nli(tmp_path / "nli", positions=64))
    claim = "the claim stays"
    enc = model._encode("premise " * 200, claim)
    assert len(enc.ids) == 64
    assert "".join(t.removeprefix("##") for t, k in zip(enc.tokens, enc.type_ids) if k == 1) == "theclaimstays[SEP]"
    [v] = model.entail([("premise " * 200, claim)])  # within the model's positions
    assert 0.0 <= v.entailment <= 1.0


def test_start_up_fails_clearly_on_a_bad_folder(tmp_path):
    with pytest.raises(GroundingError, match="lacks config.json, tokenizer.json, model.safetensors"):
        BertNLI(tmp_path)
    folder = write_bert_nli(tmp_path / "twoclass", labels=("LABEL_0", "LABEL_1"))
    with pytest.raises(GroundingError, match="no entailment class"):
        BertNLI(folder)
    with pytest.raises(GroundingError, match="needs GA_SUPPORT_MODEL_PATH"):
        build_entailment(Settings(support_model="bert-nli"))
    with pytest.raises(GroundingError, match="unknown support model"):
        build_entailment(Settings(support_model="nope"))
    assert build_entailment(Settings()) is None  # off by default


def test_settings_build_the_model(tmp_path):
    import app.providers.entailment.bert_nli  # noqa: F401  (registers "bert-nli", as the lifespan does)

    folder = write_bert_nli(tmp_path / "nli", says="entailment")
    model = build_entailment(Settings(support_model="bert-nli", support_model_path=folder))
    assert model is not None and model.name == "bert-nli"
    assert model.entail([("a", "b")])[0].entailment > 0.99
