"""Citations in code: parse the span references a draft wrote, refuse ones that do not exist,
strip every URL and link the model wrote, and render [1..k] in order of first use with
annotations whose offsets locate each cited sentence."""

from __future__ import annotations

import re

from app.domain.types import CitedAnswer, Claim, Evidence
from app.language.text import split_sentences, strip_links

MAX_REF_RANGE = 50  # "[S1-S9999]" expands to at most lo..lo+50: bounds a typo or a hostile draft

# [S1] [S1][S2] [S1, S2] [S1-S3] [S1–S3] [1] [1, 2] [1-3] [S1; S2]
_REF = re.compile(r"\[\s*S?\d+(?:\s*(?:,|;|-|–|—|and)\s*S?\d+)*\s*\]", re.I)
_ID = re.compile(r"\d+")
_LEADING_REFS = re.compile(r"^(?:\s*" + _REF.pattern + r")+", re.I)
LEADING_REFS = _LEADING_REFS  # markers opening a sentence belong to the sentence before (app/pipeline/stream.py)
_NON_FACTUAL = re.compile(
    r"^(the evidence does not|i (could not|couldn't|cannot|can't) find|no (information|evidence)|"
    r"here (is|are)|in summary|sources disagree)\b",
    re.I,
)


def expand_ref(ref: str) -> list[int]:
    """'[S1-S3]' -> [1, 2, 3]; '[S1, S4]' -> [1, 4]."""
    inner = ref.strip("[] ")
    out: list[int] = []
    for part in re.split(r"\s*(?:,|;|and)\s*", inner, flags=re.I):
        nums = [int(n) for n in _ID.findall(part)]
        if len(nums) == 2 and re.search(r"[-–—]", part):
            lo, hi = sorted(nums)
            out.extend(range(lo, min(hi, lo + MAX_REF_RANGE) + 1))
        else:
            out.extend(nums)
    return out


_CODE_SPAN = re.compile(r"`[^`]*`")
_S_PREFIX = re.compile(r"\[\s*S", re.I)
# What may stand right before a bare "[1]" that cites: a number ("in 2023[1]"), closing prose punctuation,
# or another marker's "]". Glued to a name, a call or a string ("a_tuple[0]", "f(x)[1]", "'ab'[0]") or
# after an operator ("t[0] += [3]") it indexes or builds a list in code the model quoted.
_BARE_AFTER_GLUED = re.compile(r"(?:(?<![\w.])[\d.,]*\d|[.,;:!?%’”]|\])$")
_BARE_AFTER_SPACE = re.compile(r"[\w.,;:!?%)’”\]\"']$")


def _markers(sentence: str) -> list[re.Match[str]]:
    """The citation markers of a sentence: "[S1]" anywhere outside `code`; a bare "[1]" (a model that
    dropped the S) only where a citation can stand, never as code's subscript or list."""
    code = [m.span() for m in _CODE_SPAN.finditer(sentence)]
    out = []
    for m in _REF.finditer(sentence):
        if any(a <= m.start() < b for a, b in code):
            continue
        if not _S_PREFIX.match(m.group(0)):
            before = sentence[: m.start()]
            stripped = before.rstrip()
            if stripped and not (
                _BARE_AFTER_GLUED.search(before) if stripped == before else _BARE_AFTER_SPACE.search(stripped)
            ):
                continue
        out.append(m)
    return out


def _without(sentence: str, found: list[re.Match[str]]) -> str:
    """The sentence with the given markers cut out."""
    parts, pos = [], 0
    for m in found:
        parts.append(sentence[pos : m.start()])
        pos = m.end()
    parts.append(sentence[pos:])
    return "".join(parts)


def is_factual(sentence: str) -> bool:
    s = sentence.strip()
    if not s or s.endswith("?") or s.endswith(":") or _NON_FACTUAL.match(s):
        return False
    return bool(re.search(r"\w", s))


# The space a removed marker leaves before punctuation ("released [S1] ." -> "released ."), not the space
# before a token that starts with a dot (".pyc files", "Fix .write() method"): punctuation that ends there.
_SPACE_BEFORE_STOP = re.compile(r"\s+([.,;:!?]+)(?=[\s\"'’”»)\]*`]|$)")


def parse_draft(text: str, evidence: list[Evidence]) -> CitedAnswer:
    """Claims with the span ids each sentence cites; invalid references are reported, never kept."""
    text, removed = strip_links(text)
    valid = {int(e.span_id[1:]) for e in evidence}
    invalid: list[str] = []
    claims: list[Claim] = []
    for sentence in split_sentences(text):
        lead = _LEADING_REFS.match(sentence)
        if lead and claims:
            # "… released. [S1] It is faster." — a marker after the period belongs to the sentence before.
            claims[-1].span_ids.extend(_ids(lead.group(0), valid, invalid))
            sentence = sentence[lead.end() :]
        found = _markers(sentence)
        ids = _ids(" ".join(m.group(0) for m in found), valid, invalid)
        clean = _without(sentence, found)
        clean = _SPACE_BEFORE_STOP.sub(r"\1", " ".join(clean.split())).strip()
        if not clean or not re.search(r"\w", clean):
            continue
        claims.append(Claim(text=clean, span_ids=ids, markers=[], factual=is_factual(clean)))
    for c in claims:
        c.span_ids = list(dict.fromkeys(c.span_ids))
    return CitedAnswer(
        content="", claims=claims, dropped_claims=[], cited=[], invalid_refs=invalid, removed_urls=removed
    )


def _ids(refs: str, valid: set[int], invalid: list[str]) -> list[str]:
    out = []
    for ref in _REF.findall(refs):
        for n in expand_ref(ref):
            if n in valid:
                out.append(f"S{n}")
            else:
                invalid.append(f"S{n}")
    return out


class Numbering:
    """Citation numbers [1..k] by first use per source URL (spans of one page share its number, so
    citations[n-1] is one URL), assigned sentence by sentence: a prefix of the sentences renders
    exactly as it does inside the whole answer (a verified stream releases them one at a time)."""

    def __init__(self, evidence: list[Evidence]):
        self.by_id = {e.span_id: e for e in evidence}
        self.number: dict[str, int] = {}  # url -> citation number
        self.cited: list[Evidence] = []

    def sentence(self, claim: Claim) -> str:
        """The claim with its markers before its final punctuation (sets claim.markers)."""
        for sid in claim.span_ids:
            url = self.by_id[sid].url
            if url not in self.number:
                self.number[url] = len(self.number) + 1
                self.cited.append(self.by_id[sid])
        claim.markers = sorted({self.number[self.by_id[s].url] for s in claim.span_ids})
        m = re.search(r"[.!?]+[\"')\]]*$", claim.text)
        body, end = (claim.text[: m.start()], m.group(0)) if m else (claim.text, ".")
        markers = "".join(f"[{n}]" for n in claim.markers)
        return f"{body} {markers}{end}" if markers else f"{body}{end}"


def render(answer: CitedAnswer, evidence: list[Evidence]) -> CitedAnswer:
    """Number cited sources [1..k] by first use; place markers before each sentence's final
    punctuation; record each claim's offsets in the content."""
    numbering = Numbering(evidence)
    parts: list[str] = []
    pos = 0
    for claim in answer.claims:
        sentence = numbering.sentence(claim)
        if parts:
            pos += 1  # the joining space
        claim.start, claim.end = pos, pos + len(sentence)
        parts.append(sentence)
        pos += len(sentence)
    answer.content = " ".join(parts)
    answer.cited = numbering.cited
    return answer
