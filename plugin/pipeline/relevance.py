"""The relevance gate: drop rows that are not about the query.

CJK queries: overlapping two-character tokens of the query; a row must
accumulate `min_units` units of overlap in its title, snippet or URL, where a
shared bigram is one unit and a shared ASCII word of a mixed query is two
(so `如何配置 postgres 逻辑复制` keeps a PostgreSQL page on `postgres` alone,
and `如何（汉语词语）_百度百科` is dropped).

Space-separated scripts: the gate judges the engine's whole list, because a
single relevant page may share no word with a short query (`onimai` answered
by "Oniichan wa Oshimai!") while a list answering a different query shares
words with almost none of its pages. A row matches when it shares the query's
content words after case and diacritic folding (stop words ignored): one word
for queries of one or two content words, two of them for longer queries. A
query word of five letters or more also matches a page word a typing slip away
(Damerau-Levenshtein 1 up to eight letters, 2 beyond): people misspell, and an
engine that shows no "Including results for" still answers the right question. The
list is kept whole when at least `LATIN_MIN_MATCHING` of its rows match, and
dropped whole otherwise (Bing answering `tình hình thời tiết`, "weather
situation", with love poems that share only `tình`).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Protocol, Sequence, TypeVar
from urllib.parse import unquote

from engines.script import CJK_CHARS, SOUTHEAST_ASIAN_BLOCKS, char_class, has_cjk, is_cjk_char
from plugin.infra import memo

_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#-]*[A-Za-z0-9+#]|[A-Za-z]{2,}|\d{4,}")
_WORD = re.compile(r"\w+")
_NON_WORD = re.compile(r"\W+")
_ASCII_GAPS = re.compile(r"[\s._-]+")  # what may separate the parts of a Latin name: iPhone 15, GPT-4, node.js
# Scripts written without spaces that the CJK gate does not read (Thai, Lao, Myanmar, Khmer; the CJK ones
# are in engines.script): a query's word in them is glued to its neighbours on the page ("ข้าวผัด" in
# "สูตรข้าวผัดกุ้ง"), so it matches anywhere in the row's text, whatever its length.
_SPACELESS = re.compile(f"[{char_class(SOUTHEAST_ASIAN_BLOCKS)}]")

# Question words and particles: a bigram made of them says nothing about the topic.
CJK_FUNCTION_WORDS = (
    "为什么", "怎么样", "是什么", "有哪些", "什么", "怎么", "怎样", "如何", "哪些", "哪个", "哪里", "请问",
    "一下", "关于", "有关", "以及", "对于", "进行", "可以", "能否", "是否", "应该", "需要", "的话", "还是",
    "我们", "你们", "他们", "这个", "那个", "这些", "那些", "一个", "之间",
    # Single characters only where they are (almost) never part of a content word.
    "吗", "呢", "吧", "啊", "的", "了",
)
_CJK_STOP_BIGRAMS = frozenset(w for w in CJK_FUNCTION_WORDS if len(w) == 2)

STOP_WORDS = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being it its this that these
those what which who whom whose when where why how do does did done can could should would will shall may might
must i me my we our you your he him his she her they them their not no yes so than then there here about into
over under up down out off again very just also only any some such more most other own same too via vs
today latest current recent now top best new
le la les un une des du de et ou en au aux el los las y o del der die das und oder ein eine zu im mit von
""".split())


# Share of an engine's rows that must match a space-separated query for its list to stand.
LATIN_MIN_MATCHING = 0.4


class _RowLike(Protocol):
    title: str
    snippet: str
    url: str


R = TypeVar("R", bound=_RowLike)


def fold(text: str) -> str:
    """Lower-case with diacritics removed (tình -> tinh, Ærø -> aerø)."""
    if text.isascii():  # most rows: nothing to decompose, and casefold is lower
        return text.lower()
    text = text.replace("đ", "d").replace("Đ", "D")
    return unicodedata.normalize("NFKD", text).translate(_combining_marks()).casefold()


@memo.register_table
@functools.lru_cache(maxsize=1)
def _combining_marks() -> dict[int, None]:
    """Every combining mark (canonical combining class > 0; all below U+20000), for str.translate."""
    return {cp: None for cp in range(0x300, 0x20000) if unicodedata.combining(chr(cp))}


def _row_text(title: str, snippet: str, url: str) -> str:
    return f"{title} {snippet} {unquote(url)}"


@dataclass(frozen=True)
class Gate:
    """A compiled gate for one query; `keeps(title, snippet, url)` decides a row."""

    kind: str  # "cjk", "latin" or "none"
    bigrams: frozenset[str] = frozenset()
    ascii_words: frozenset[str] = frozenset()
    words: tuple[str, ...] = ()
    required: int = 0
    min_units: int = 2  # what the gate was built with, for a gate built again from a correction

    def score(self, title: str, snippet: str, url: str) -> int:
        text = _row_text(title, snippet, url)
        if self.kind == "cjk":
            lowered = text.lower()
            # "iPhone15价格" asks for pages that write "iPhone 15" or "GPT-4" apart: compared without the gaps too.
            squeezed = _ASCII_GAPS.sub("", lowered)
            return sum(1 for b in self.bigrams if b in text) + 2 * sum(
                1 for w in self.ascii_words if w in lowered or _ASCII_GAPS.sub("", w) in squeezed)
        if self.kind == "latin":
            folded = _CJK_RUN.sub(" ", fold(text))
            tokens = set(_WORD.findall(folded))
            squashed = _NON_WORD.sub("", folded)  # "La Liga" -> "laliga", "Java Script" -> "javascript"; a
            # word of 5+ letters anywhere in it also covers one inside a longer token (tutorial in "jstutorials")
            return sum(1 for w in self.words if _word_matches(w, tokens)
                       or ((len(w) >= 5 or _SPACELESS.search(w) is not None) and w in squashed))
        return 0

    def units(self) -> int:
        """How many units a row can match: the query's content words (Latin), or its bigrams plus two per
        ASCII word (CJK); 0 when the gate has nothing to match."""
        if self.kind == "cjk":
            return len(self.bigrams) + 2 * len(self.ascii_words)
        return len(self.words)  # a "none" gate has no words

    def coverage(self, title: str, snippet: str, url: str) -> float:
        """The share of the query's units the row's text holds (0 to 1; 0 when the gate has none)."""
        units = self.units()
        return min(1.0, self.score(title, snippet, url) / units) if units else 0.0

    def keeps(self, title: str, snippet: str, url: str) -> bool:
        if self.kind == "none" or self.required <= 0:
            return True
        return self.score(title, snippet, url) >= self.required

    def filter(self, rows: Sequence[R]) -> list[R]:
        """The rows of one engine's list that survive the gate."""
        if self.kind == "none" or self.required <= 0 or not rows:
            return list(rows)
        matching = [row for row in rows if self.keeps(row.title, row.snippet, row.url)]
        if self.kind == "cjk":
            return matching
        if len(matching) >= max(1, math.ceil(LATIN_MIN_MATCHING * len(rows))):
            return list(rows)
        return []


def _is_content_word(word: str) -> bool:
    if word in STOP_WORDS:
        return False
    if word.isdigit():
        return len(word) >= 4  # years count; "1" in "Voyager 1" does not
    return len(word) >= 2


def _word_matches(word: str, tokens: set[str]) -> bool:
    if word in tokens:
        return True
    if len(word) < 3:
        return False
    typos = typo_allowance(word)
    clitics = _PROCLITICS.get(unicodedata.bidirectional(word[0]))
    for token in tokens:
        # Inflections and compounds: tutorial/tutorials, launch/launched, postgres/postgresql.
        if token.startswith(word) or (len(token) >= 4 and word.startswith(token) and len(word) - len(token) <= 2):
            return True
        # Arabic and Hebrew write the article, "and", "in", "to"... onto the word: الطقس, وطقس, השלום, בירושלים.
        if clitics and token.endswith(word) and len(token) - len(word) <= 3 and \
                set(token[: len(token) - len(word)]) <= clitics:
            return True
        # A typing slip with no engine correcting it: a letter dropped, doubled, swapped or wrong.
        if typos and abs(len(token) - len(word)) <= typos and token.isalpha() and \
                within_edits(word, token, typos):
            return True
    return False


# The letters of the prefixes Arabic (al-, wa-, fa-, bi-, ka-, li- and their runs: وال، بال، لل) and Hebrew
# (ha-, ve-, be-, ke-, le-, mi-, she-) attach to a word, by the word's script (its bidirectional class).
_PROCLITICS = {"AL": frozenset("والفبكل"), "R": frozenset("הובכלמש")}


def typo_allowance(word: str) -> int:
    """Edits a query word may be from a page's word and still match it: 1 for words of 5-8 letters, 2 for
    longer ones, none for short words (too many neighbours: cat/car/can) or words with digits."""
    if not word.isalpha() or len(word) < 5:
        return 0
    return 1 if len(word) <= 8 else 2


@memo.register
@functools.lru_cache(maxsize=65536)
def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether the Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
    substitutions, swaps of neighbours) between `a` and `b` is at most `limit`."""
    if abs(len(a) - len(b)) > limit:
        return False
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return False
        before, previous = previous, current
    return previous[-1] <= limit


def build_gate(query: str, min_units: int = 2) -> Gate:
    if not has_cjk(query) and has_cjk(normal := unicodedata.normalize("NFKC", query)):
        # Half-width katakana (ｿｳﾙ) and compatibility ideographs are CJK once normalised, as pages write them;
        # read as words, they were folded into CJK the Latin gate never sees, and every row was dropped.
        query = normal
    if has_cjk(query):
        bigrams: set[str] = set()
        for run in _CJK_RUN.findall(query):
            if len(run) == 1:
                bigrams.add(run)
            bigrams.update(run[i:i + 2] for i in range(len(run) - 1))
        bigrams -= _CJK_STOP_BIGRAMS
        ascii_words = {w.lower() for w in _ASCII_WORD.findall(query) if w.lower() not in STOP_WORDS}
        gate = Gate("cjk", frozenset(bigrams), frozenset(ascii_words), min_units=min_units)
        return replace(gate, required=min(min_units, gate.units()))
    words = tuple(dict.fromkeys(w for w in _WORD.findall(fold(query)) if _is_content_word(w)))
    if not words:
        return Gate("none")
    required = 1 if len(words) <= 2 else 2
    return Gate("latin", words=words, required=required)


def core_words(query: str) -> str:
    """A CJK query with function words and particles removed, content terms kept in order."""
    text = query
    for word in sorted(CJK_FUNCTION_WORDS, key=len, reverse=True):
        text = text.replace(word, " ")
    text = re.sub(r"[，。、；：？！“”‘’（）《》【】,.;:?!()\"'\[\]]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def cjk_length(query: str) -> int:
    return sum(1 for ch in query if is_cjk_char(ch))
