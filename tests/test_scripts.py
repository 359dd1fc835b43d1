"""The one table of scripts written without spaces (engines.script), read by the search's relevance gate and
by passages (plugin.reading.terms, .verify). It replaced three copies of the ranges; these tests pin that
every reader sees exactly what its own copy said, code point by code point."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from engines.script import CJK_CHARS, SPACELESS_SCRIPTS, char_class
from plugin.pipeline import relevance
from plugin.reading import sentences, terms, verify

# The copies as they were (engines/script.py, plugin/pipeline/relevance.py, plugin/reading/sentences.py).
_OLD_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_OLD_GATE_SPACELESS = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")
_OLD_SPACELESS_SCRIPTS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF),
                          (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
                          (0xAC00, 0xD7AF), (0xF900, 0xFAFF))
_OLD_RUN = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _OLD_SPACELESS_SCRIPTS) + "]")


def _classes():
    cjk = re.compile(f"[{CJK_CHARS}]")
    run = re.compile(f"[{char_class(SPACELESS_SCRIPTS)}]")
    return [(cjk, _OLD_CJK), (relevance._SPACELESS, _OLD_GATE_SPACELESS), (run, _OLD_RUN)]


def _agree(code: int) -> None:
    ch = chr(code)
    for new, old in _classes():
        assert (new.match(ch) is None) == (old.match(ch) is None), (hex(code), new.pattern)


def test_every_code_point_is_classed_as_each_copy_classed_it():
    """Each class is a union of ranges, so two of them agree everywhere when they agree at every range's
    ends and just beyond them (between those points neither changes)."""
    assert SPACELESS_SCRIPTS == _OLD_SPACELESS_SCRIPTS and sentences.SPACELESS_SCRIPTS is SPACELESS_SCRIPTS
    ends = {0, 0x10FFFF}
    for pattern in (CJK_CHARS, char_class(SPACELESS_SCRIPTS), relevance._SPACELESS.pattern, _OLD_CJK.pattern,
                    _OLD_GATE_SPACELESS.pattern, _OLD_RUN.pattern):
        text = pattern.encode().decode("unicode_escape") if "\\" in pattern else pattern
        ends |= {ord(ch) for ch in text if ch not in "[]-"}
    for end in ends:
        for code in (end - 1, end, end + 1):
            if 0 <= code <= 0x10FFFF:
                _agree(code)
    assert verify._spaceless("ข") and not verify._spaceless("a")
    assert terms._BIGRAM_SCRIPTS.fullmatch("中文ข้าว한국") and not terms._BIGRAM_SCRIPTS.match("a")


@given(st.characters())
def test_any_character_is_classed_as_each_copy_classed_it(ch):
    _agree(ord(ch))
