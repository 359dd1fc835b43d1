"""The passages of a page that answer a question: whole sentences with their offsets, ranked by the words
and (with the `semantic` extra) by their meaning.

    text ─ segment (sentences, items, whole code blocks and tables, heading paths) ─ windows of
        consecutive units within one section, up to `window_chars` ─ features of each window ─ a learned
        linear score ─ the best windows that do not overlap, best first, each grown as it is picked by
        a neighbouring sentence that holds question words it lacks

A window's features (`LEXICAL` always, `MEANING` when the meaning model is installed and
`RankOptions.meaning` is on); the score is their weighted sum, the weights fitted by pairwise logistic
regression on the article corpus's dev questions (`scripts/passage_bench.py --fit` writes
`plugin/reading/passage_weights.py`; `--cv 10` fits them inside each fold to estimate unseen articles):
- bm25: BM25 of the question's content terms (`plugin.reading.terms`: folded, prefix-matched, CJK
  bigrams, function words left out) over the window, the inverse document frequency counted over the
  page's sentences, divided by the question's total idf (so pages and questions compare);
- proximity: the best single sentence's share of the question (the idf of the distinct question terms
  it holds), so terms together in one sentence beat the same terms scattered;
- context: the share of the sentence just before or just after the window (the answer often follows the
  sentence that restates the question's subject, in words the question does not use);
- heading: question terms in the headings the window sits under; cover: the share of the question the
  window and its headings hold together (headings are context for the sentences under them);
- typed: the question asks how many, when, who, which or where and the window holds a number, a date or
  a name that the question itself does not; typed_*: the features above again, for such windows only
  (what the question asks for changes what counts);
- lead: earlier on the page is slightly likelier;
- soft_cover, soft_proximity, typed_soft_proximity (meaning): cover and proximity again, with a question
  word that is not there literally credited with its most similar word of the sentence (the cosine of
  static word vectors, when at least `soft_threshold`): "countries" answers "nations", "began" answers
  "start". (The cosine of whole passages with the question, tried too, lost answers in cross-validation.)

Pure and CPU-only: no I/O, no settings (callers pass `RankOptions`); the meaning model is loaded lazily
by `plugin.reading.meaning` on the first ranking that uses it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, deque
from dataclasses import dataclass, field
from itertools import accumulate, chain

from plugin.reading.sentences import HEADING, Segmented, segment
from plugin.reading.terms import FUNCTION_WORDS, WORD, content_terms, fold, terms, word_terms

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A number in English words answers a how-many question as digits do ("sixteen different countries", "four
# rounds", "eight out of ten"; 10-fold CV: +0.008 at 600 characters). Looked up word by word: one regex
# alternation of them all costs nine times the digits' search on every sentence.
NUMBER_WORDS = frozenset("""one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand
thousands million millions billion billions trillion trillions dozen dozens half quarter third double twice
triple""".split())
_WORDISH = re.compile(r"\w+")
# Digits of any script as ASCII (٢٠٢٤, २०२४, ２０２４ are 2024), so a number the question holds is known in the
# sentence whatever digits either writes it with.
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def _words(text: str) -> set[str]:
    text = _OTHER_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(0))), text.casefold())
    return set(_WORDISH.findall(text))

BASE = ("bm25", "proximity", "context", "heading", "cover")
LEXICAL = BASE + ("lead", "typed") + tuple(f"typed_{name}" for name in BASE)
MEANING = ("soft_cover", "soft_proximity", "typed_soft_proximity")
FEATURES = LEXICAL + MEANING


@dataclass(frozen=True)
class RankOptions:
    window_chars: int = 120   # a window grows while its span stays within this (one unit always fits)
    prefix: int = 4           # terms longer than this are compared by their first `prefix` characters
    k1: float = 1.2
    b: float = 0.75
    max_sentence_chars: int = 600
    meaning: bool = True      # use the meaning model when it is installed
    soft_threshold: float = 0.45  # a word at least this similar to a question word stands in for it
    grow_chars: int = 400     # a picked window grows by a neighbouring sentence while its span stays within this
    grow_share: float = 0.5   # ... when that sentence holds at least this share of the question the window lacks
    weights: tuple[tuple[str, float], ...] = ()  # overrides of the fitted weights, by feature name
    answer_kinds: tuple[str, ...] = ("number", "date", "name", "entity")  # wording rules in use (the bench tests each)


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    score: float
    section: tuple[str, ...]
    first: int = -1  # index of its first and last unit in the ranked units
    last: int = -1


@dataclass
class Features:
    """Candidate windows (unscored) and their features, one list per feature name, in window order."""
    windows: list[Window]
    values: dict[str, list[float]]
    units: list = field(default_factory=list)
    held: list[set[str]] = field(default_factory=list)  # question terms each unit holds
    idf: dict[str, float] = field(default_factory=dict)
    meaning: bool = False  # whether the meaning features were computed
    text: str = ""  # the text the units are cut from


def fitted_weights(meaning: bool) -> dict[str, float]:
    from plugin.reading.passage_weights import LEXICAL_WEIGHTS, MEANING_WEIGHTS

    return dict(MEANING_WEIGHTS if meaning else LEXICAL_WEIGHTS)


def meaning_model(options: RankOptions):
    """The meaning model when `options` ask for it and it is installed, else None (loads it once)."""
    if not options.meaning:
        return None
    from plugin.reading import meaning

    return meaning.model()


def window_features(text: str, query: str, *, markdown: bool = True, options: RankOptions = RankOptions(),
                    segmented: Segmented | None = None, offset: int = 0, model=None) -> Features:
    """Every candidate window of `text` (starting at or after `offset`) with its features; the meaning
    features only when `model` (a `plugin.reading.meaning.Meaning`) is given."""
    seg = segmented or segment(text, markdown=markdown, max_chars=options.max_sentence_chars)
    units = [u for u in seg.units if u.kind != HEADING and u.start >= offset]
    values: dict[str, list[float]] = {name: [] for name in (FEATURES if model is not None else LEXICAL)}
    if not units:
        return Features([], values, meaning=model is not None)
    question = content_terms(query, options.prefix)
    # Only the question's terms are counted in each unit (and every term, for its length): nothing else
    # of a sentence's words enters a feature.
    wanted_terms = set(question)
    bags: list[Counter] = []
    unit_lengths: list[int] = []
    unit_words: list[list[str]] = []  # each unit's distinct words, folded (for the meaning features)
    for u in units:
        words = WORD.findall(text, u.start, u.end)
        found = [t for word in words for t in word_terms(word, options.prefix)]  # = terms(the unit)
        unit_lengths.append(len(found))
        bags.append(Counter([t for t in found if t in wanted_terms]))
        if model is not None:
            unit_words.append(list(dict.fromkeys(map(fold, words))))
    df: Counter = Counter()
    for bag in bags:
        df.update(bag.keys())
    n = len(bags)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in question}
    total_idf = sum(idf.values()) or 1.0
    heading_terms = [set(terms(" ".join(path), options.prefix)) for path in seg.sections]
    held = [set(bag) for bag in bags]
    # (summed in the order of the text, not of a set, whose order changes with each process's hash seed:
    # the same page and question score alike in every process, to the last bit)
    sentence_share = [sum(idf[t] for t in bag) / total_idf for bag in bags]
    wanted = answer_kind(query, options.answer_kinds)
    asked = question_words(query)
    typed = [bool(wanted) and fits(wanted, text[u.start:u.end], asked) for u in units]
    spans = _spans(units, options.window_chars)
    # Sums over a window's units from running totals, as windows slide forward (both ends only move on):
    # summed unit by unit, a page of tiny units (a line per word, runs of "." lines) cost its length
    # times the units a window holds, up to 60.
    length_upto = list(accumulate(unit_lengths, initial=0))
    typed_upto = list(accumulate(typed, initial=0))
    lengths = [length_upto[j + 1] - length_upto[i] for i, j in spans]
    average = (sum(lengths) / len(lengths)) or 1.0
    size = max(len(text), 1)
    heading_share = [sum(idf[t] for t in question if t in heads) / total_idf for heads in heading_terms]
    columns = [(values[name], values[f"typed_{name}"]) for name in BASE]
    windows = []
    inside: dict[str, int] = {}  # the question terms' counts in units [low, high)
    best_share: deque[int] = deque()  # units of [low, high) whose share no later unit reaches, in order
    low = high = 0
    for (i, j), length in zip(spans, lengths):
        while high <= j:
            for t, count in bags[high].items():
                inside[t] = inside.get(t, 0) + count
            while best_share and sentence_share[best_share[-1]] <= sentence_share[high]:
                best_share.pop()
            best_share.append(high)
            high += 1
        while low < i:
            for t, count in bags[low].items():
                if inside[t] == count:
                    del inside[t]
                else:
                    inside[t] -= count
            if best_share[0] == low:
                best_share.popleft()
            low += 1
        tf = inside
        heads = heading_terms[units[i].section]
        before = sentence_share[i - 1] if i > 0 and units[i - 1].section == units[i].section else 0.0
        after = sentence_share[j + 1] if j + 1 < n and units[j + 1].section == units[j].section else 0.0
        row = (_bm25(tf, question, idf, length / average, options) / total_idf,  # in BASE's order
               sentence_share[best_share[0]],
               max(before, after),
               heading_share[units[i].section],
               sum(idf[t] for t in question if t in tf or t in heads) / total_idf)
        is_typed = 1.0 if typed_upto[j + 1] > typed_upto[i] else 0.0
        for (column, typed_column), value in zip(columns, row):
            column.append(value)
            typed_column.append(is_typed * value)
        values["typed"].append(is_typed)
        values["lead"].append(1 - units[i].start / size)
        windows.append(Window(units[i].start, units[j].end, 0.0, seg.sections[units[i].section], i, j))
    features = Features(windows, values, units, held, idf, meaning=model is not None, text=text)
    if model is not None:
        _meaning_features(features, query, spans, unit_words, typed_windows=values["typed"], model=model,
                          options=options)
    return features


def _meaning_features(features: Features, query: str, spans, unit_words: list[list[str]], *, typed_windows,
                      model, options: RankOptions) -> None:
    import numpy as np

    units, idf = features.units, features.idf
    words = [fold(w) for w in WORD.findall(query)]
    kept = list(dict.fromkeys(w for w in words if w not in FUNCTION_WORDS)) or list(dict.fromkeys(words))
    word_terms = [[t for t in terms(w, options.prefix) if t in idf] for w in kept]
    pairs = [(w, ts) for w, ts in zip(kept, word_terms) if ts]
    values = features.values
    if not pairs:
        for name in MEANING:
            values[name].extend(0.0 for _ in spans)
        return
    kept = [w for w, _ in pairs]
    weight = np.array([sum(idf[t] for t in ts) / len(ts) for _, ts in pairs], dtype=np.float32)
    total = float(weight.sum()) or 1.0
    question_vectors = model.word_vectors(kept)
    distinct = list(dict.fromkeys(chain.from_iterable(unit_words)))
    credit = np.zeros((len(units), len(kept)), dtype=np.float32)
    if distinct:
        index = {w: k for k, w in enumerate(distinct)}
        # einsum, not @: BLAS would spread this small product over threads that spin on a busy machine
        similar = np.einsum("wd,qd->wq", model.word_vectors(distinct), question_vectors)
        flat = list(map(index.__getitem__, chain.from_iterable(unit_words)))
        filled = [k for k, ws in enumerate(unit_words) if ws]
        starts = [0]
        for k in filled[:-1]:
            starts.append(starts[-1] + len(unit_words[k]))
        best = np.maximum.reduceat(similar[flat], starts, axis=0)  # each unit's best word per question word
        credit[filled] = np.where(best >= options.soft_threshold, best, 0.0)
    for q, (_, ts) in enumerate(pairs):
        wanted = set(ts)
        for k, h in enumerate(features.held):
            if wanted <= h:
                credit[k, q] = 1.0
    # Each window's best credit per question word, and its best sentence's share (windows span few units).
    first = np.array([i for i, _ in spans])
    last = np.array([j for _, j in spans])
    best_credit = credit[first]
    unit_share = np.einsum("uq,q->u", credit, weight) / total
    best_share = unit_share[first]
    for step in range(1, int((last - first).max()) + 1 if len(spans) else 0):
        inside = first + step <= last
        rows = (first + step)[inside]
        best_credit[inside] = np.maximum(best_credit[inside], credit[rows])
        best_share[inside] = np.maximum(best_share[inside], unit_share[rows])
    typed = np.array(typed_windows)
    values["soft_cover"].extend((np.einsum("wq,q->w", best_credit, weight) / total).tolist())
    values["soft_proximity"].extend(best_share.tolist())
    values["typed_soft_proximity"].extend((typed * best_share).tolist())


def score_windows(features: Features, weights: dict[str, float]) -> list[Window]:
    """The windows with their scores (the weighted sum of their features), best first."""
    scores = [0.0] * len(features.windows)
    for name, w in weights.items():
        if w and name in features.values:
            scores = [score + w * value for score, value in zip(scores, features.values[name])]
    scored = [Window(window.start, window.end, score, window.section, window.first, window.last)
              for window, score in zip(features.windows, scores)]
    scored.sort(key=lambda w: (-w.score, w.start))
    return scored


def rank_windows(text: str, query: str, *, markdown: bool = True, options: RankOptions = RankOptions(),
                 segmented: Segmented | None = None, offset: int = 0) -> list[Window]:
    """Every candidate window of `text` (starting at or after `offset`) for `query`, scored, best first,
    overlapping ones included (`pick` chooses among them)."""
    return _ranked(text, query, markdown, options, segmented, offset)[0]


def _ranked(text, query, markdown, options, segmented, offset) -> tuple[list[Window], Features]:
    model = meaning_model(options)
    features = window_features(text, query, markdown=markdown, options=options, segmented=segmented,
                               offset=offset, model=model)
    weights = fitted_weights(features.meaning)
    weights.update(dict(options.weights))
    return score_windows(features, weights), features


# What a question asks for, by its wording (English and the languages of the corpus), and what in a
# sentence looks like it. `scripts/passage_bench.py --cv 10` reports each kind's worth in cross-validation.
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
ANSWER_KINDS = ("number", "date", "name", "entity")


def question_kind(question: str) -> str | None:
    """Which wording rule a question matches: number, date, name or entity (which X, where), or None."""
    for kind, pattern in (("number", _ASKS_NUMBER), ("date", _ASKS_DATE), ("name", _ASKS_NAME),
                          ("entity", _ASKS_ENTITY)):
        if pattern.search(question):
            return kind
    return None


def answer_kind(question: str, kinds: tuple[str, ...] = ANSWER_KINDS) -> str | None:
    """number, date or name when the question's wording asks for one (by a rule among `kinds`); None otherwise."""
    kind = question_kind(question)
    if kind is None or kind not in kinds:
        return None
    return "name" if kind == "entity" else kind  # which X, where: usually a name or a place


# A name's words are short. A longer run of word characters, apostrophes and hyphens (a hash, a slug, a
# line of a code block, which is never cut) is read as no part of one: the name pattern, tried at every
# capital inside such a run, read on to its end each time (a 20,000-character run: 3.7 s).
_LONG_RUN = re.compile(r"[\w'’-]{100,}")


def _lowered(found: re.Match) -> str:
    return "x" * len(found.group(0))


def question_words(question: str) -> set[str]:
    """The question's words as `fits` compares them: case-folded, digits in ASCII."""
    return _words(question)


def fits(kind: str, sentence: str, asked: set[str] = frozenset()) -> bool:
    """The sentence holds a number, date or name that the question itself does not (`asked`: the
    question's words, case-folded)."""
    pattern = {"number": _NUMBER, "date": _MONTHS, "name": _NAME}[kind]
    if kind == "name" and len(sentence) >= 100:
        sentence = _LONG_RUN.sub(_lowered, sentence)
    if any(not _words(found.group(0)) <= asked for found in pattern.finditer(sentence)):
        return True
    return kind == "number" and any(word in NUMBER_WORDS and word not in asked
                                    for word in _WORDISH.findall(sentence.casefold()))


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
    j = 0
    for i, unit in enumerate(units):
        j = max(j, i)  # the units before the last window's end are within reach of this one too
        while (j + 1 < len(units) and units[j + 1].section == unit.section
               and units[j + 1].end - unit.start <= window_chars):
            j += 1
        spans.append((i, j))
    return spans


def pick(windows: list[Window], count: int | None = None, features: Features | None = None,
         options: RankOptions = RankOptions()) -> list[Window]:
    """The best windows that do not overlap each other, best first, at most `count`; with `features`, each
    grown as it is picked (`_grown`), so a later window overlapping a grown one is skipped."""
    chosen: list[Window] = []
    taken = [False] * len(features.units) if features is not None else []  # units in a chosen window
    for window in windows:
        if count is not None and len(chosen) >= count:
            break
        if taken and window.first >= 0:
            if any(taken[window.first:window.last + 1]):
                continue
        elif any(window.start < other.end and other.start < window.end for other in chosen):
            continue
        if taken and options.grow_chars and window.first >= 0:
            window = _grown(window, taken, features, options)
        if taken and window.first >= 0:
            taken[window.first:window.last + 1] = [True] * (window.last - window.first + 1)
        chosen.append(window)
    return chosen


# A sentence ending so ("The headline feature?", "The steps are:") is answered by the next one (issue 28: a dev
# question's answer sat in the sentence after the article's own question; 10-fold CV +1 question, none lost).
_ANNOUNCING = re.compile(r"[?:？：][\s*_\"'”’»)\]]*$")


def _announces(text: str, start: int, end: int) -> bool:
    return bool(text) and _ANNOUNCING.search(text, max(start, end - 12), end) is not None


def _grown(window: Window, taken: list[bool], features: Features, options: RankOptions) -> Window:
    """`window` grown, within `grow_chars`, by the sentence just before or after it (same section, in no
    window picked before it) that holds at least `grow_share` of the question's idf that the window lacks,
    the most first, while one does: the question's words spread over neighbouring sentences end up in one
    passage."""
    units, held, idf = features.units, features.held, features.idf
    total = sum(idf.values()) or 1.0
    first, last = window.first, window.last
    have = set().union(*held[first:last + 1])
    while True:
        best = None
        for neighbour in (first - 1, last + 1):
            if not (0 <= neighbour < len(units)) or units[neighbour].section != units[first].section:
                continue
            if taken[neighbour]:
                continue
            span = units[max(last, neighbour)].end - units[min(first, neighbour)].start
            gain = sum(idf[t] for t in idf if t in held[neighbour] and t not in have) / total  # (question order)
            if gain > 0 and gain >= options.grow_share and span <= options.grow_chars and (
                    best is None or gain > best[0]):
                best = (gain, neighbour)
        if best is None:
            break
        have |= held[best[1]]
        first, last = min(first, best[1]), max(last, best[1])
    after = last + 1  # a window ending in a question or a colon announces what follows: it takes the next sentence
    if (after < len(units) and units[after].section == units[first].section and not taken[after]
            and units[after].end - units[first].start <= options.grow_chars
            and _announces(features.text, units[last].start, units[last].end)):
        last = after
    if (first, last) == (window.first, window.last):
        return window
    return Window(units[first].start, units[last].end, window.score, window.section, first, last)


def best_passages(text: str, query: str, count: int | None = None, *, markdown: bool = True,
                  options: RankOptions = RankOptions(), offset: int = 0,
                  segmented: Segmented | None = None) -> list[Window]:
    """The `count` best non-overlapping passages of `text` for `query`, best first. `segmented`: the
    units to choose from, when the caller has cut them (a part of a long page)."""
    windows, features = _ranked(text, query, markdown, options, segmented, offset)
    return pick(windows, count, features, options)
