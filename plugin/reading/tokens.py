"""How many tokens a model will count for a text: an estimate, made without a tokenizer.

Models' tokenizers are byte-pair encodings whose vocabularies we do not ship. The estimate counts what
drives their counts, piece by piece as a BPE pre-tokenizer splits text: a Latin-script word one token,
or one per `LATIN_CHARS_PER_TOKEN` characters when longer (a common English word is one token whatever
its length, a word of a language the vocabulary saw less is several); a number one per 3 digits; a
Cyrillic word one per 1.8 letters, a word of another alphabet (Greek, Arabic, Thai …) one per 1.5; a
CJK character 1.1, a Hangul syllable 1.35; a punctuation mark or symbol 0.9; a line break 0.25; and
the sum times `SAFETY` (1.1), rounded up, so the estimate errs high.

The weights were fitted to the larger of o200k_base's and cl100k_base's counts (OpenAI's BPE
vocabularies, through the `bpe-openai` package, which ships them; a bench-only extra, never a
dependency) on passages, 1,200-character slices and whole pages of the article corpus. The error, as
`python scripts/passage_bench.py --tokens` measures it, is in the README ("Token budgets"): real
counts above the estimate by at most 23 % (o200k_base) and 45 % (cl100k_base, on Indonesian text), on
about 1 % and 3 % of texts. A budget (`max_tokens`) is met against this estimate.
"""

from __future__ import annotations

import math
import re

LATIN_CHARS_PER_TOKEN = 4.0
SAFETY = 1.1
_WEIGHTS = {"hangul": 1.35, "cjk": 1.1, "newline": 0.25, "mark": 0.9}
_PIECE = re.compile(r"(?P<hangul>[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f])"
                    r"|(?P<cjk>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef])"
                    r"|(?P<latin>[A-Za-z\u00c0-\u024f]+)|(?P<digits>\d+)|(?P<cyrillic>[\u0400-\u04ff]+)"
                    r"|(?P<other>[^\W\d_]+)|(?P<newline>\n)|(?P<space>\s+)|(?P<mark>.)", re.S)


def estimate_tokens(text: str) -> int:
    """Tokens a BPE tokenizer (o200k_base, cl100k_base and alike) is expected to count in `text`,
    erring high."""
    count = 0.0
    for found in _PIECE.finditer(text):
        kind = found.lastgroup
        if kind == "latin":
            count += max(1.0, len(found.group(0)) / LATIN_CHARS_PER_TOKEN)
        elif kind == "digits":
            count += math.ceil(len(found.group(0)) / 3)
        elif kind == "cyrillic":
            count += max(1.0, len(found.group(0)) / 1.8)
        elif kind == "other":
            count += max(1.0, len(found.group(0)) / 1.5)
        elif kind != "space":
            count += _WEIGHTS[kind]  # type: ignore[index]
    return math.ceil(count * SAFETY)


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
