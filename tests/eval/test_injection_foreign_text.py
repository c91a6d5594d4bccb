"""eval/injection_foreign_text.table: reads and false removals per operating point of the head."""

from __future__ import annotations

from eval.injection_foreign_text import table


def test_each_operating_point_counts_its_reads_and_removals():
    head = {
        "lexical_threshold": 0.85,
        "gate": 0.6,
        "operating_points": [
            {"gate": 0.0, "lexical_weight": 0.0, "threshold": 1.0},
            {"gate": 0.6, "lexical_weight": 0.0, "threshold": 1.0},
        ],
    }
    rows = [  # (page, sentence, lexical probability, head logit)
        ("a", "s1", 0.9, -5.0),  # the lexical model removes it alone: never read
        ("a", "s2", 0.7, 2.0),  # read at both gates, removed
        ("b", "s3", 0.1, 3.0),  # read only at gate 0, removed there
        ("b", "s4", 0.1, -1.0),  # read only at gate 0, kept
    ]
    alone, low, default = table(rows, head)
    assert alone == {"point": "lexical alone", "removed_sentences": 1, "pages_losing_a_sentence": 1}
    assert (low["read_share"], low["removed_sentences"], low["pages_losing_a_sentence"]) == (0.75, 3, 2)
    assert (default["read_share"], default["removed_sentences"], default["default"]) == (0.25, 2, True)
