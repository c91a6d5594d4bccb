"""Which natural language a sentence is in, by py3langid (langid.py's model, maintained fork; the
model ships in its wheel). Used where a component reads one language only: the fine-tuned injection
encoder knows English word pieces only (app/pipeline/injection_encoder.py). On the 4,548 lines of
eval/labelled/injection.jsonl (13 languages, each labelled by its author) it calls 2,408 of the 2,436
English lines English and no other line, at ~0.3 ms a line (`python -m eval.injection_cascade
--languages`)."""

from __future__ import annotations


def language_of(text: str) -> str:
    """ISO 639-1 code of the most likely language ("en", "de", …); the model loads on first use."""
    import py3langid

    return str(py3langid.classify(text)[0])
