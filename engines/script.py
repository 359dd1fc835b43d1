"""Which writing system a text is in: CJK text has no spaces between words.

The one table of the scripts written without spaces between words, as Unicode blocks (first, last code
point): the CJK ones the search's CJK gate reads in bigrams, the others (Thai and Lao, Myanmar, Khmer)
whose words the gate finds glued to their neighbours, and the Hangul Jamo that passages cut into bigrams
with the rest (plugin.reading.terms, .verify).
"""

from __future__ import annotations

import re

# Kana, Han ideographs (extension A, unified, compatibility) and Hangul syllables; CJK punctuation excluded.
CJK_BLOCKS = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))
# Thai and Lao, Myanmar, Khmer.
SOUTHEAST_ASIAN_BLOCKS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))
# Hangul Jamo and Hangul compatibility Jamo.
HANGUL_JAMO_BLOCKS = ((0x1100, 0x11FF), (0x3130, 0x318F))
SPACELESS_SCRIPTS = tuple(sorted(CJK_BLOCKS + SOUTHEAST_ASIAN_BLOCKS + HANGUL_JAMO_BLOCKS))


def char_class(blocks: tuple[tuple[int, int], ...]) -> str:
    """The body of a regular-expression character class holding `blocks` (put it between [ and ])."""
    return "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in blocks)


CJK_CHARS = char_class(CJK_BLOCKS)  # a character class body
_CJK = re.compile(f"[{CJK_CHARS}]")


def is_cjk_char(char: str) -> bool:
    return bool(_CJK.match(char))


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))
