"""Words as the passage ranker compares them: folded, cut to a prefix, CJK and Thai as character bigrams.

- Folding: NFKC (full-width and compatibility forms), case folding, accents off Latin, Greek and
  Cyrillic letters (`Café` and `cafe`, `Ｐｙｔｈｏｎ` and `python` are one term).
- Prefix matching stands in for stemming in every alphabetic language at once: a word longer than
  `prefix` characters is kept as its first `prefix` (`elections`, `electoral` and `election` meet at
  `elect`; Russian and Portuguese inflections meet the same way).
- A word keeps its combining marks (vowel signs, viramas, tone marks: they spell it).
- Chinese, Japanese and Korean runs, and Thai, Lao, Myanmar and Khmer runs (no spaces between words),
  become overlapping character bigrams (a lone character stays a unigram): no dictionary needed.
- Function words (articles, pronouns, auxiliaries, question words of the languages we see most) are
  what a question is made of besides its content; `content_terms` leaves them out of a query.
Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from plugin.infra import memo
from plugin.reading.sentences import SPACELESS_SCRIPTS


def _combining_marks() -> str:
    """The combining marks of the Basic Multilingual Plane (Unicode's M categories), as the inside of a
    character class: ~10 ms once. (Beyond it: historic scripts; their ranges would make the class ~50× slower
    to test.)"""
    marks = [c for c in range(0x10000) if unicodedata.category(chr(c)).startswith("M")]
    spans: list[list[int]] = []
    for c in marks:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in spans)


# A word: letters and digits, with the combining marks among them. Python's \w has no marks, and the
# vowel signs, viramas and tone marks of Devanagari, Thai, Arabic, Tamil … spell the word: without them
# दान, दिन and देना were all द न, and Thai "here" and "there" one term apart.
WORD = re.compile(rf"(?:[^\W_]++|[{_combining_marks()}]++)++")
# Runs of the scripts written without spaces between words (CJK, Thai, Lao, Myanmar, Khmer) become bigrams.
_BIGRAM_SCRIPTS = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in SPACELESS_SCRIPTS) + "]+")

_FUNCTION_WORDS_AS_WRITTEN = """
a an the and or but if then than so as of in on at to for from by with without about into onto over under
between among through during before after above below up down out off again further once here there when
where why how what which who whom whose this that these those is are was were be been being am do does did
doing have has had having will would shall should can could may might must it its it's they them their
theirs he him his she her hers we us our ours you your yours i me my mine not no nor only own same such too
very just also any each every both either neither all some most more other another according per via
much many one ones s t don whether while within until upon across along around against toward towards
named called known kind type said says say tell told according used use
der die das den dem des ein eine einer eines einem einen und oder aber wenn dann als wie von vom zu zum zur
mit nach bei aus auf an am im in ist sind war waren wird werden wurde wurden hat haben hatte sein seine
ihr ihre es er sie wir nicht kein keine auch nur was wer wo wann warum welche welcher welches wie viele
le la les un une des du de et ou mais si que qui quoi quel quelle quels quelles est sont était été être
avoir a ont au aux dans sur pour par avec sans ce cet cette ces il elle ils elles on nous vous leur leurs
se sa son ses comment combien pourquoi où quand
el los las una unos unas y o pero si que qué quien quién quienes cual cuál cuales del al en con sin por
para es son era fue fueron ser estar está están ha han su sus lo le les se como cómo cuando cuándo donde
dónde cuanto cuánto cuántos cuántas
il lo gli i uno della dello delle degli dei nel nella nei nelle sul sulla col e ed o ma che chi cui non
è sono era erano stato essere ha hanno come quando dove perché quanto quanti quante quale quali
o os as um uma uns umas do da dos das no na nos nas ao aos pelo pela pelos pelas em com sem por para é
são foi foram ser estar está estão tem têm seu sua seus suas que quem qual quais como quando onde quanto
quantos quantas porque ele ela eles elas isso este esta esse essa
yang dan di ke dari pada untuk dengan dalam oleh adalah ini itu tersebut akan telah sudah juga atau tidak
apa siapa berapa kapan mengapa bagaimana mana sebagai bagi karena
и в во не на с со к ко о об от до по за из у же ли бы что как кто где когда почему какой какая какие
каких сколько это этот эта эти тот та те был была были было быть есть его ее её их он она они мы вы
также или а но для при под над между чем
segundo acordo según secondo selon laut gemäß menurut согласно
"""


@memo.register
@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """One word folded: width and compatibility forms, case, and the marks that have a combining class
    (Latin, Greek and Cyrillic accents; Arabic vowel points, Hebrew points, the Devanagari virama) in every
    script but those cut into bigrams, whose marks spell the word (Thai tone marks). Vowel signs without a
    combining class (Devanagari ि, ी) stay."""
    word = unicodedata.normalize("NFKC", word).casefold()
    if word.isascii():
        return word
    if _BIGRAM_SCRIPTS.search(word):
        return word
    stripped = "".join(ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped)


# Folded as the question's words are before they are looked up: written with their accents ("são", "cuántos",
# "était"), several were never found.
FUNCTION_WORDS = frozenset(map(fold, _FUNCTION_WORDS_AS_WRITTEN.split()))


# A small number in words is the same term as in digits ("seis anos" asks about "6 anos"). Words with another
# common meaning are left out: "one" and "once" (English), "dos" (Portuguese "of the"), "due", "sei", "doce",
# "elf", "lima", "otto", "sept" (September), "neuf" (French "new").
_NUMBER_WORDS = {
    2: "two dois duas deux zwei dua два две", 3: "three tres três trois drei tre tiga три",
    4: "four quatro cuatro quatre vier quattro empat четыре", 5: "five cinco cinq fünf cinque пять",
    6: "six seis sechs enam шесть", 7: "seven sete siete sieben sette tujuh семь",
    8: "eight oito ocho huit acht delapan восемь", 9: "nine nove nueve neun sembilan девять",
    10: "ten dez diez dix zehn dieci sepuluh десять", 11: "eleven onze undici", 12: "twelve zwölf dodici",
}
NUMBER_WORD_DIGITS = {fold(word): str(n) for n, words in _NUMBER_WORDS.items() for word in words.split()}


def terms(text: str, prefix: int = 5) -> list[str]:
    """The terms of `text`, in order (see the module's docstring)."""
    out: list[str] = []
    for word in WORD.findall(text):
        out.extend(word_terms(word, prefix))
    return out


@memo.register
@lru_cache(maxsize=65536)
def word_terms(word: str, prefix: int = 5) -> tuple[str, ...]:
    """The terms of one word as `WORD` finds it (remembered: a page repeats its words, and the ranker
    cuts every sentence of every page it reads into terms)."""
    word = fold(word)
    if word in NUMBER_WORD_DIGITS:
        return (NUMBER_WORD_DIGITS[word],)
    if word.isascii() or not _BIGRAM_SCRIPTS.search(word):
        return (word if prefix <= 0 or len(word) <= prefix or word.isdigit() else word[:prefix],)
    out: list[str] = []
    position = 0
    for run in _BIGRAM_SCRIPTS.finditer(word):
        if run.start() > position:  # letters of another script glued to the run (Latin in Japanese)
            other = word[position:run.start()]
            out.append(other if prefix <= 0 or len(other) <= prefix else other[:prefix])
        chars = run.group(0)
        if len(chars) == 1:
            out.append(chars)
        else:
            out.extend(chars[k:k + 2] for k in range(len(chars) - 1))
        position = run.end()
    if position < len(word):
        other = word[position:]
        out.append(other if prefix <= 0 or len(other) <= prefix else other[:prefix])
    return tuple(out)


def content_terms(text: str, prefix: int = 5) -> list[str]:
    """The distinct terms of a question without its function words, in order of first appearance; all its
    terms when nothing else is left."""
    words = [fold(found.group(0)) for found in WORD.finditer(text)]
    kept = " ".join(word for word in words if word not in FUNCTION_WORDS)
    found = terms(kept, prefix) or terms(text, prefix)
    return list(dict.fromkeys(found))
