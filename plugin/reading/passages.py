"""The passages of a page that answer a question: lexical, fast, whole sentences, with their offsets.

    text ─ segment (sentences, items, whole code blocks and tables, heading paths) ─ windows of
        consecutive units within one section, up to `window_chars` ─ score each window ─ the best
        windows that do not overlap, best first

A window's score (every weight is a field of `RankOptions`, chosen on the dev questions of the article
corpus and cross-validated by article: `scripts/passage_bench.py --cv 10`):
- BM25 of the question's content terms (`plugin.reading.terms`: folded, prefix-matched, CJK bigrams,
  function words left out) over the window, the inverse document frequency counted over the page's
  sentences (a term in every sentence says nothing about where the answer is);
- proximity: the best single sentence's share of the question (the idf of the distinct question terms
  it holds), so terms together in one sentence beat the same terms scattered;
- context: the share of the sentence just before or just after the window: the answer often follows
  (or precedes) the sentence that restates the question's subject, in words the question does not use;
- answer type: a question asking how many, when, who, which or where gains when the window holds a
  number, a date or a name that the question itself does not hold;
- the heading path: question terms in the headings the window sits under count at `heading_weight`;
- a small lead prior (earlier is slightly likelier, as on news pages).

Pure and CPU-only: no I/O, no settings (callers pass `RankOptions`). About 1 ms of CPU per page of
4,000 characters (median; 2 ms at p90).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from plugin.reading.sentences import HEADING, Segmented, segment
from plugin.reading.terms import content_terms, terms

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORDISH = re.compile(r"\w+")


@dataclass(frozen=True)
class RankOptions:
    window_chars: int = 200   # a window grows while its span stays within this (one unit always fits)
    prefix: int = 4           # terms longer than this are compared by their first `prefix` characters
    k1: float = 1.2
    b: float = 0.75
    proximity: float = 0.5    # weight of the best sentence's idf coverage
    heading_weight: float = 1.0
    lead: float = 0.3         # bonus for the first window, falling linearly to 0 at the end of the page
    max_sentence_chars: int = 600
    context: float = 0.6      # weight of the neighbouring sentences' share of the question (just before or after)
    answer_type: float = 1.0  # a window holding what the question asks for (a number, a date, a name) gains this share


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    score: float
    section: tuple[str, ...]


def rank_windows(text: str, query: str, *, markdown: bool = True, options: RankOptions = RankOptions(),
                 segmented: Segmented | None = None, offset: int = 0) -> list[Window]:
    """Every candidate window of `text` (starting at or after `offset`) for `query`, scored, best first,
    overlapping ones included (`pick` chooses among them)."""
    seg = segmented or segment(text, markdown=markdown, max_chars=options.max_sentence_chars)
    units = [u for u in seg.units if u.kind != HEADING and u.start >= offset]
    if not units:
        return []
    question = content_terms(query, options.prefix)
    bags = [Counter(terms(text[u.start:u.end], options.prefix)) for u in units]
    df: Counter = Counter()
    for bag in bags:
        df.update(bag.keys())
    n = len(bags)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in question}
    total_idf = sum(idf.values()) or 1.0
    heading_terms = [set(terms(" ".join(path), options.prefix)) for path in seg.sections]
    sentence_share = [sum(idf[t] for t in question if t in bag) / total_idf for bag in bags]
    wanted = answer_kind(query)
    asked = set(_WORDISH.findall(query.casefold()))
    typed = [bool(wanted) and fits(wanted, text[u.start:u.end], asked) for u in units]
    spans = _spans(units, options.window_chars)
    lengths = [sum(sum(bags[k].values()) for k in range(i, j + 1)) for i, j in spans]
    average = (sum(lengths) / len(lengths)) or 1.0
    size = max(len(text), 1)
    windows: list[Window] = []
    for (i, j), length in zip(spans, lengths):
        score = 0.0
        if question:
            tf: Counter = Counter()
            for k in range(i, j + 1):
                tf.update(bags[k])
            score = _bm25(tf, question, idf, length / average, options)
            score += options.proximity * total_idf * max(sentence_share[i:j + 1])
            if options.context:
                before = sentence_share[i - 1] if i > 0 and units[i - 1].section == units[i].section else 0.0
                after = sentence_share[j + 1] if j + 1 < n and units[j + 1].section == units[j].section else 0.0
                score += options.context * total_idf * max(before, after)
            heads = heading_terms[units[i].section]
            if heads:
                score += options.heading_weight * sum(idf[t] for t in question if t in heads)
            if any(typed[i:j + 1]):
                score *= 1 + options.answer_type
        score += options.lead * (1 - units[i].start / size)
        windows.append(Window(units[i].start, units[j].end, score, seg.sections[units[i].section]))
    windows.sort(key=lambda w: (-w.score, w.start))
    return windows


# What a question asks for, by its wording (English and the languages of the corpus), and what in a
# sentence looks like it.
_ASKS_NUMBER = re.compile(
    r"\b(how (many|much|old|long|far|fast|big|large|tall|high|heavy|powerful|quickly|often|wide|deep)|what "
    r"(percentage|proportion|share|price|cost|amount|number|value|size|speed|range|capacity|resolution|rate|"
    r"score|fee|salary|budget|temperature|distance|weight|height|length|age)|berapa|сколько|quant[oa]s?|"
    r"cu[aá]nt[oa]s?|wie (viel|viele|lange|alt)|combien)\b|何[人個本回年円]|いくら|몇|얼마", re.I)
_ASKS_DATE = re.compile(r"\b(when|what (year|date|day|month|time)|which (year|date|day|month)|since when|kapan|"
                        r"когда|quando|cu[aá]ndo|wann|quand)\b|いつ|언제", re.I)
_ASKS_NAME = re.compile(r"\b(who|whom|whose|siapa|кто|quem|qui[eé]n|wer|qui)\b|誰|누구", re.I)
_ASKS_ENTITY = re.compile(r"^(\w+ )?(which|what (is|was|are|were) the name|where)\b|\b(in|at|on|from|by) which\b", re.I)
_MONTHS = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b|\b(1[5-9]|20)\d\d\b|"
                     r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|yesterday|today|\d", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+")


def answer_kind(question: str) -> str | None:
    """number, date or name when the question's wording asks for one; None otherwise."""
    if _ASKS_NUMBER.search(question):
        return "number"
    if _ASKS_DATE.search(question):
        return "date"
    if _ASKS_NAME.search(question):
        return "name"
    if _ASKS_ENTITY.search(question):  # which X, where: usually a name or a place
        return "name"
    return None


def fits(kind: str, sentence: str, asked: set[str] = frozenset()) -> bool:
    """The sentence holds a number, date or name that the question itself does not (`asked`: the
    question's words, case-folded)."""
    pattern = {"number": _NUMBER, "date": _MONTHS, "name": _NAME}[kind]
    return any(not set(_WORDISH.findall(found.group(0).casefold())) <= asked for found in pattern.finditer(sentence))


def _bm25(tf: Counter, question: list[str], idf: dict[str, float], relative_length: float,
          options: RankOptions) -> float:
    norm = options.k1 * (1 - options.b + options.b * relative_length)
    score = 0.0
    for t in question:
        f = tf.get(t, 0)
        if f:
            score += idf[t] * f * (options.k1 + 1) / (f + norm)
    return score


def _spans(units, window_chars: int) -> list[tuple[int, int]]:
    """(first, last) unit index of each window: from every unit, the longest run within one section
    whose span stays within `window_chars`."""
    spans = []
    for i, unit in enumerate(units):
        j = i
        while (j + 1 < len(units) and units[j + 1].section == unit.section
               and units[j + 1].end - unit.start <= window_chars):
            j += 1
        spans.append((i, j))
    return spans


def pick(windows: list[Window], count: int | None = None) -> list[Window]:
    """The best windows that do not overlap each other, best first, at most `count`."""
    chosen: list[Window] = []
    for window in windows:
        if count is not None and len(chosen) >= count:
            break
        if any(window.start < other.end and other.start < window.end for other in chosen):
            continue
        chosen.append(window)
    return chosen


def best_passages(text: str, query: str, count: int | None = None, *, markdown: bool = True,
                  options: RankOptions = RankOptions(), offset: int = 0,
                  segmented: Segmented | None = None) -> list[Window]:
    """The `count` best non-overlapping passages of `text` for `query`, best first. `segmented`: the
    units to choose from, when the caller has cut them (a part of a long page)."""
    return pick(rank_windows(text, query, markdown=markdown, options=options, offset=offset, segmented=segmented),
                count)
