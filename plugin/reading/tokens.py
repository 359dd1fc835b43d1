"""How many tokens a model will count for a text: an estimate, made without a tokenizer.

Models' tokenizers are byte-pair encodings whose vocabularies we do not ship. The estimate counts what
drives their counts: a short common Latin word is one token and a long one a few (one per
`LATIN_CHARS_PER_TOKEN` characters, at least one); a number one token per 3 digits; each punctuation mark
or symbol one; a word in another alphabet (Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai …) one per
`OTHER_CHARS_PER_TOKEN` characters; a CJK character or Hangul syllable `CJK_TOKENS_PER_CHAR`; a line break
one. The constants were fitted to o200k_base and cl100k_base (OpenAI's BPE vocabularies, through the
`bpe-openai` package, which ships them; a bench-only extra, never a dependency) on the article corpus
and then set so the estimate errs high: measured with `python scripts/passage_bench.py --tokens`, the
README's "Token budgets" gives the error. A budget (`max_tokens`) is met against this estimate.
"""

from __future__ import annotations

import math
import re

LATIN_CHARS_PER_TOKEN = 4.5
OTHER_CHARS_PER_TOKEN = 2.6
CJK_TOKENS_PER_CHAR = 1.0
DIGITS_PER_TOKEN = 3
# Pieces in the order a BPE pre-tokenizer sees them.
_PIECE = re.compile(r"(?P<cjk>[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
                    r"\uf900-\ufaff\uff00-\uffef])|(?P<latin>[A-Za-z\u00c0-\u024f]+)|(?P<digits>\d+)"
                    r"|(?P<other>[^\W\d_]+)|(?P<newline>\n)|(?P<space>\s+)|(?P<mark>.)", re.S)


def estimate_tokens(text: str) -> int:
    """Tokens a BPE tokenizer (o200k_base, cl100k_base, and alike) is expected to count in `text`,
    erring high."""
    count = 0.0
    for found in _PIECE.finditer(text):
        kind = found.lastgroup
        if kind == "latin":
            count += max(1.0, len(found.group(0)) / LATIN_CHARS_PER_TOKEN)
        elif kind == "cjk":
            count += CJK_TOKENS_PER_CHAR
        elif kind == "digits":
            count += math.ceil(len(found.group(0)) / DIGITS_PER_TOKEN)
        elif kind == "other":
            count += max(1.0, len(found.group(0)) / OTHER_CHARS_PER_TOKEN)
        elif kind in ("newline", "mark"):
            count += 1
    return math.ceil(count)


def chars_within(text: str, tokens: int) -> int:
    """How many leading characters of `text` fit in `tokens` estimated tokens (at least 0)."""
    if tokens <= 0:
        return 0
    if estimate_tokens(text) <= tokens:
        return len(text)
    low, high = 0, len(text)
    while low < high:  # the estimate only grows with the prefix: bisect on it
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return low
