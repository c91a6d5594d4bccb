"""Planted instructions in page text.

Evidence is data: a sentence that addresses the reader as a model ("ignore previous instructions",
"you are now…", "say X") carries no fact worth citing and is removed before the composer sees it,
so a draft that obeys it finds no span to support it and is dropped by verification.
"""

from __future__ import annotations

import re

from app.language.text import split_sentences

_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget|override)\b[^.]{0,30}\b(previous|prior|above|earlier|preceding|all|any|your|their|these|the)\b"
    r"[^.]{0,20}\b(instructions?|prompts?|directions|guidelines)\b"
    r"|\b(ai|assistants?|language models?|llms?|chatbots?|bots?)\b[^.]{0,40}\b(reading|processing|summari[sz]ing|crawling|"
    r"viewing|answering from)\b[^.]{0,15}\bthis\b"
    r"|\b(you are|act as|pretend to be|you must now|from now on,? you)\b[^.]{0,40}\b(ai|assistant|model|chatbot|llm|gpt)\b"
    r"|\b(system prompt|developer message|jailbreak)\b"
    r"|\b(anyone|whoever|readers?|tools?|services?)\b[^.]{0,20}\b(summari[sz]ing|quoting|citing|answering|rewriting)\b"
    r"[^.]{0,60}\b(must|should|has to|is required to)\b"
    r"|\b(include|add|insert)\s+(this|that|the following)\s+(link|url|text|phrase)\b"
    r"|\b(assistant|ai|model|chatbot|llm)s?\b[^.]{0,40}\b(must|should|shall)\b[^.]{0,30}\b(say|reply|respond|answer|output|write|"
    r"include|tell|inform|ignore)\b"
    r"|^\s*(say|reply|respond|answer|output|print|write)\s+(only\s+)?[\"'“]?[A-Z0-9_-]{3,}[\"'”]?\s*[.!]?\s*$",
    re.I,
)


def is_instruction(sentence: str) -> bool:
    return bool(_INSTRUCTION.search(sentence))


def strip_instructions(text: str) -> tuple[str, int]:
    """Remove instruction-like sentences; returns (text, removed count). Paragraph breaks survive."""
    removed = 0
    paragraphs = []
    for paragraph in text.split("\n"):
        kept = []
        for sentence in split_sentences(paragraph):
            if is_instruction(sentence):
                removed += 1
            else:
                kept.append(sentence)
        if kept:
            paragraphs.append(" ".join(kept))
    return ("\n".join(paragraphs), removed) if removed else (text, 0)
