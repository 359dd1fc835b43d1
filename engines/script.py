"""Which writing system a text is in: CJK text has no spaces between words."""

from __future__ import annotations

import re

# Han ideographs (incl. extension A and compatibility), kana, hangul, CJK punctuation excluded.
CJK_CHARS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # a character class body
_CJK = re.compile(f"[{CJK_CHARS}]")


def is_cjk_char(char: str) -> bool:
    return bool(_CJK.match(char))


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))
