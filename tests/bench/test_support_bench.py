"""bench/support.py's `lexical+model` scorer (the command that calibrates GA_SUPPORT_MODEL_ENTAIL_AT and
_CONTRADICT_AT): the model is asked only about what the lexical check leaves undecided, and its
confident verdict settles those claims. The model folders are tiny and pinned to one verdict
(simulators/nli_model.py): this checks the tool, not an NLI model's reading."""

from __future__ import annotations

import pytest

from bench import support as support_bench
from simulators.nli_model import write_bert_nli


@pytest.mark.parametrize("says", ["entailment", "contradiction", "neutral"])
def test_the_model_settles_only_what_lexical_support_leaves_open(tmp_path, says):
    rows = support_bench.load()
    lexical = support_bench.evaluate(support_bench.Lexical(), rows)
    scorer = support_bench.LexicalThenModel(write_bert_nli(tmp_path / says, says=says), 0.9, 0.9)
    both = support_bench.evaluate(scorer, rows)
    open_before = [a for a in lexical if not a["decisive"]]
    assert scorer.asked == len(open_before) > 0
    assert scorer.settled == (0 if says == "neutral" else scorer.asked)
    for a, b in zip(lexical, both):
        if a["decisive"]:  # a lexical verdict that was final stays final: the model never overrides it
            assert (b["score"], b["decisive"]) == (a["score"], True)
        elif says == "neutral":
            assert (b["score"], b["decisive"]) == (a["score"], False)
        else:
            assert b["decisive"] and b["pred"] == (says == "entailment")
