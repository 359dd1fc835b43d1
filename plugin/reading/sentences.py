"""A page's text cut into units a passage is made of: sentences, list items, headings, whole code blocks
and whole tables, each with its character offsets into the text and the headings it sits under. A table
with a row longer than `max_chars` is prose laid out in a table (a layout table around a whole article):
its rows are cut into sentences instead.

Blocks come first (lines; a Markdown fence or a run of table rows is one block, never split), then each
line of running text is cut into sentences:
- after `.`, `!`, `?`, `…` (closing quotes and brackets kept with the sentence) and a space, when the
  next word does not start in lower case and the word before is not a known abbreviation (`Mr.`,
  `e.g.`, `U.S.`) or an initial (`J. K. Rowling`);
- after the CJK full stops and marks `。！？．｡` (no space follows them in Chinese or Japanese), and
  after the Devanagari, Arabic, Armenian, Ethiopic, Khmer and Myanmar sentence marks;
- at a space between two Thai (or Lao) characters: Thai writes no full stop, a space ends a sentence
  or clause.
A sentence longer than `max_chars` (a run-on list without punctuation) is cut after its last `;` or `,`
(Arabic script: `؛`, `،`) followed by a space, `、`, `，` or `；`, else at its last space, before the limit, else at the limit itself,
moved back to the start of a user-perceived character (never between a letter and its marks, inside an
emoji's ZWJ sequence or skin tone, or between a flag's two letters: `joins_previous`), so no unit outgrows a
passage; code blocks and data tables are never cut. `US.` and `EU.` end a sentence (`U.S.` does not: a
dotted abbreviation), as `us.` does (`He told us. Then …`).
Pure: no I/O, no settings; `plugin.reading.passages` builds windows of these units.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Scripts written without spaces between words (Thai and Lao, Myanmar, Hangul Jamo, Khmer, kana, Hangul
# compatibility Jamo, CJK, Hangul syllables, CJK compatibility): passage terms cut their runs into bigrams
# (plugin.reading.terms) and a quote may start or end at any of their characters (plugin.reading.verify).
# One table with the search's relevance gate: engines.script's.
from engines.script import SPACELESS_SCRIPTS  # noqa: F401  (terms and verify import it from here)

# Units a window is made of; "heading" units carry no text of their own in passages (they become the
# heading path of the units under them).
SENTENCE, ITEM, HEADING, CODE, TABLE = "sentence", "item", "heading", "code", "table"

_FENCE = re.compile(r"( *)(`{3,}|~{3,})")  # indented at most 3 spaces past the list item it is under, if any
_HEADING = re.compile(r" {0,3}(#{1,6})\s+")  # its text: the rest of the line, less a closing run of # (`_heading`)
_ITEM = re.compile(r"\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_TABLE_ROW_MD = re.compile(r"\s*\|")
_WORD = re.compile(r"\w")
_CELL = re.compile(r"(?:\\\||[^|])+")  # a table cell's text: up to a bar that is not escaped (\|)
# Latin-script sentence ends: terminator, closing quotes/brackets, whitespace. A match starts only where
# a run of terminators starts and never gives characters back (possessive): tried at every dot of a long
# run of dots with no space after it, the plain pattern cost the square of the run (200,000 dots: minutes).
_LATIN_END = re.compile(r"(?<![.!?…‼⁇⁈⁉])[.!?…‼⁇⁈⁉]++[\"'”’»)\]]*+(?=\s)")
# Marks that end a sentence with no space after them (CJK) or in scripts with their own full stop.
_OWN_END = re.compile(r"[。！？．｡][!?][」』）】〕》\"”’)]*|[。！？．｡!?]?[。！？．｡।॥؟۔։።។៕။][」』）】〕》\"”’)]*")
_THAI = "\u0e00-\u0e7f\u0e80-\u0eff"
_THAI_SPACE = re.compile(rf"(?<=[{_THAI}])[ \u00a0]+(?=[{_THAI}])")
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\.?[\"'”’»)\]]*$")
_NEXT_CHARS = re.compile(r"\s*(.{0,4})", re.S)  # the first characters after a full stop and its spaces
# A clause ends after `;` or `,` (or the Arabic-script `،` `؛`) and a space (not inside `1,000`), or after the
# CJK marks (no space follows).
_CLAUSE_BREAK = re.compile(r"[;,،؛](?=\s)\s*|[、，；]\s*|\s+")
ABBREVIATIONS = frozenset("""
mr mrs ms dr prof sr jr st mt ft vs etc eg ie cf al approx dept est inc ltd co corp no nos vol vols fig figs
pp ed eds rev gen col lt sgt capt cmdr gov sen rep jan feb mar apr jun jul aug sep sept oct nov dec
u.s u.k e.g i.e a.m p.m am pm ca op ph bzw usw ggf z.b zb ca nr sog vgl dh d.h hr fr frau
sig sra sres dra pag pág art núm
""".split())


@dataclass(frozen=True)
class Unit:
    start: int
    end: int
    kind: str
    section: int  # index into Segmented.sections: the heading path this unit sits under


@dataclass
class Segmented:
    text: str
    units: list[Unit]
    sections: list[tuple[str, ...]]  # heading paths; sections[0] is () (before any heading)


def segment(text: str, *, markdown: bool = True, max_chars: int = 600, start: int = 0,
            end: int | None = None, max_units: int | None = None) -> Segmented:
    """`text` as units in order. `markdown`: the text is our Markdown (fences, `#` headings, `|` tables);
    plain text has none of these, and a run of lines holding ` | ` is taken for a table. `start`, `end`:
    only the units that overlap `text[start:end]` (a block is still made whole); the lines before `start`
    are read only for their headings and code fences (so heading paths and blocks are right), the lines
    from `end` on not at all: a part of a long page costs what its own lines cost to cut into sentences.
    `max_units`: the cutting stops at the line where more than this many units overlap that part (the
    caller keeps the first `max_units` and knows where the next one starts)."""
    _check_max_chars(max_chars)
    units: list[Unit] = []
    sections: list[tuple[str, ...]] = [()]
    path: list[tuple[int, str]] = []  # (level, heading text)
    section = 0
    item_column = 0  # where the text of the list item being read starts on its line (0: not in a list)
    lines = _lines(text)
    stop = len(text) if end is None else end
    i = 0
    while i < len(lines) and lines[i][0] < stop:
        if max_units is not None and len(units) > max_units and units[-1 - max_units].end > start:
            break  # units are in order: the last max_units + 1 all reach past `start`
        line_start, line_end = lines[i]
        line = text[line_start:line_end]
        if not line.strip():
            i += 1
            continue
        first = line_start + len(line) - len(line.lstrip())  # a unit starts at its first character, not its indent
        indent = len(line) - len(line.lstrip(" "))
        item = _ITEM.match(line)
        if item:
            item_column = item.end()
        elif indent < item_column:
            item_column = 0  # a line left of the item's text: the list is over
        fence = _FENCE.match(line) if markdown else None
        if fence and (len(fence.group(1)) > 3 + item_column or fence.group(2)[0] == "`" and "`" in line[fence.end():]):
            # more than 3 spaces in: indented code, not a fence (our Markdown indents a fence in a list item by
            # the item's marker, 4 spaces under "10. "); a backtick fence's info string holds no backtick:
            # this is a one-line code span
            fence = None
        if fence:  # a fenced code block, through its closing fence (or the end of the text)
            marker = fence.group(2)
            j = i + 1
            while j < len(lines) and not text[lines[j][0]:lines[j][1]].lstrip(" ").startswith(marker[0] * len(marker)):
                j += 1
            j = min(j, len(lines) - 1)
            units.append(Unit(first, _rstrip(text, first, lines[j][1]), CODE, section))
            i = j + 1
            continue
        if _is_table_row(line, markdown):
            j = i
            while j + 1 < len(lines) and _is_table_row(text[lines[j + 1][0]:lines[j + 1][1]], markdown):
                j += 1
            if (j > i or markdown) and any(e - s > max_chars for s, e in lines[i:j + 1]):
                # A row longer than a passage is running text laid out in a table (a page whose whole
                # article sits in one cell), not data: its rows are cut into sentences like paragraphs.
                for row_start, row_end in lines[i:j + 1]:
                    if row_end <= start:
                        continue  # before the part asked for: no unit of it is wanted
                    for cell in _CELL.finditer(text, row_start, row_end):  # each cell's text, bars left out
                        s, e = cell.span()
                        s, e = s + len(cell[0]) - len(cell[0].lstrip()), e - (len(cell[0]) - len(cell[0].rstrip()))
                        if s < e and _WORD.search(text, s, e):
                            units.extend(Unit(a, b, SENTENCE, section)
                                         for a, b in split_sentences(text, s, e, max_chars))
                i = j + 1
                continue
            if j > i or markdown:
                units.append(Unit(first, _rstrip(text, first, lines[j][1]), TABLE, section))
                i = j + 1
                continue
        heading = _heading(line) if markdown else None
        if heading:
            level, words = heading
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, words))
            sections.append(tuple(words for _, words in path))
            section = len(sections) - 1
            units.append(Unit(first, _rstrip(text, first, line_end), HEADING, section))
            i += 1
            continue
        kind = ITEM if item else SENTENCE
        while i + 1 < len(lines) and _wraps(line, text[lines[i + 1][0]:lines[i + 1][1]], markdown):
            i += 1  # a sentence wrapped onto the next line (PDF text, a <br> inside a sentence)
            line_end = lines[i][1]
            line = text[lines[i][0]:line_end]
        if line_end > start:  # (the lines before the part asked for are not cut into sentences)
            # An item's marker belongs to its first sentence: cut after it ("1. Step one" is no sentence "1.")
            body = line_start + item.end() if item else first
            spans = split_sentences(text, body, line_end, max_chars) if body > first else []
            if not spans or spans[0][1] - first > max_chars:  # (the marker would push the first past the limit)
                spans = split_sentences(text, first, line_end, max_chars)
            for s, e in spans:
                units.append(Unit(first if kind == ITEM else s, e, kind, section))
                kind = SENTENCE
        i += 1
    units = [u for u in units if u.end > start and u.start < stop]
    return Segmented(text=text, units=units, sections=sections)


def _heading(line: str) -> tuple[int, str] | None:
    """A Markdown heading line's level and text, or None (not a heading, or one without text). The closing
    run of # (after a space, as CommonMark has it: "C#" keeps its #) is cut off with string operations: one
    pattern holding the text, the closing # and the spaces around them, all optional, tried every way to
    share a long run of spaces or # between them (a heading with 2,000 spaces took ~15 s)."""
    found = _HEADING.match(line)
    if not found:
        return None
    words = line[found.end():].rstrip()
    unclosed = words.rstrip("#")
    if len(unclosed) < len(words) and (not unclosed or unclosed[-1].isspace()):
        words = unclosed.rstrip()
    return (len(found.group(1)), words) if words else None


def _lines(text: str) -> list[tuple[int, int]]:
    spans = []
    position = 0
    for line in text.split("\n"):
        spans.append((position, position + len(line)))
        position += len(line) + 1
    return spans


_LINE_END = re.compile(r"[.!?…:;。！？．｡।؟\"'”’»)\]]\s*$")


def _wraps(line: str, following: str, markdown: bool) -> bool:
    """`following` goes on the sentence `line` ends with: the line ends without a stop and the next one
    starts in lower case as running text (not a list item, table row, heading or fence)."""
    rest = following.lstrip()
    if not rest or not rest[0].islower() or _LINE_END.search(line) or _ITEM.match(following):
        return False
    return not (markdown and (_FENCE.match(following) or _HEADING.match(following))) and not _is_table_row(
        following, markdown)


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _is_table_row(line: str, markdown: bool) -> bool:
    if markdown:
        return bool(_TABLE_ROW_MD.match(line)) and line.rstrip().endswith("|")
    return " | " in line


def split_sentences(text: str, start: int, end: int, max_chars: int = 600) -> list[tuple[int, int]]:
    """Sentence spans of `text[start:end]` (one line of running text), whitespace trimmed."""
    _check_max_chars(max_chars)
    piece = text[start:end]
    cuts = set(latin_stops(piece))
    for found in _OWN_END.finditer(piece):
        if _decimal_point(piece, found.start(), found.end()):
            continue
        cuts.add(found.end())
    for found in _THAI_SPACE.finditer(piece):
        cuts.add(found.start())
    spans: list[tuple[int, int]] = []
    previous = 0
    for cut in sorted(cuts) + [len(piece)]:
        s, e = _trim(piece, previous, cut)
        if e > s:
            spans.extend(_bounded(piece, s, e, max_chars))
        previous = cut
    return [(start + s, start + e) for s, e in spans]


def _check_max_chars(max_chars: int) -> None:
    if max_chars < 1:  # a long sentence is cut into pieces of at most this many: 0 would never end
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")


def _decimal_point(piece: str, start: int, end: int) -> bool:
    """A full-width full stop between digits is a decimal point (１２．５０), not a sentence's end."""
    return (end - start == 1 and piece[start] in "．｡" and 0 < start and end < len(piece)
            and piece[start - 1].isdigit() and piece[end].isdigit())


def latin_stops(piece: str) -> list[int]:
    """Where a full stop, question or exclamation mark (and its closing quotes) ends a sentence in `piece`:
    followed by space and a sentence's start, and not after an abbreviation or an initial."""
    stops = []
    for found in _LATIN_END.finditer(piece):
        after = found.end()
        # what follows, and the word before: a few characters each (copying the rest of a long line at
        # every full stop made a paragraph cost the square of its length)
        following = _NEXT_CHARS.match(piece, after).group(1)
        if not following or not _starts_sentence(following):
            continue
        single_stop = found.group(0).rstrip("\"'”’»)]") == "."
        if single_stop and _abbreviation(piece[max(0, found.start() - 12):found.start()]):
            continue
        stops.append(after)
    return stops


def _starts_sentence(rest: str) -> bool:
    for ch in rest[:4]:
        if ch in "\"'“‘«([¿¡*_":
            continue
        return not ch.islower()
    return True


def _abbreviation(before: str) -> bool:
    """The word before a full stop is an abbreviation or an initial, so the stop ends no sentence."""
    found = _WORD_BEFORE.search(before[-12:])
    if not found:
        return False
    word = found.group(1)
    if len(word) == 1 and word.isupper():  # an initial: J. K. Rowling, U. S.
        return True
    tail = before[-12:].lower()
    dotted = re.search(r"((?:[^\W\d_]\.)+[^\W\d_])$", tail)  # e.g, u.s, i.e
    return word.lower() in ABBREVIATIONS or bool(dotted and dotted.group(1) in ABBREVIATIONS)


_ZWJ = "\u200d"


def _regional_indicator(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def joins_previous(text: str, k: int) -> bool:
    """text[k] is part of the user-perceived character before it: a combining mark (a vowel sign, a virama, a
    nukta, an accent, a variation selector), a Hangul vowel or final jamo, a zero-width joiner or what follows
    one (👩‍💻), an emoji skin tone or tag (🏴 and its subdivision's tags), or a flag's second regional letter."""
    if k <= 0 or k >= len(text):
        return False
    ch = text[k]
    code = ord(ch)
    if (unicodedata.category(ch)[0] == "M" or ch == _ZWJ or text[k - 1] == _ZWJ or 0x1F3FB <= code <= 0x1F3FF
            or 0xE0020 <= code <= 0xE007F or 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF):
        return True
    if _regional_indicator(ch):  # the second of a pair, counting the run of regional letters before it
        run = 0
        while k - 1 - run >= 0 and _regional_indicator(text[k - 1 - run]):
            run += 1
        return run % 2 == 1
    return False


def _character_start(piece: str, start: int, cut: int) -> int:
    """`cut`, or the start of the user-perceived character it falls inside (left where that character begins
    at `start`: one character longer than the limit is cut inside)."""
    back = cut
    while back > start and joins_previous(piece, back):
        back -= 1
    return back if back > start else cut


def _trim(piece: str, start: int, end: int) -> tuple[int, int]:
    while start < end and piece[start].isspace():
        start += 1
    while end > start and piece[end - 1].isspace():
        end -= 1
    return start, end


def _bounded(piece: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """A sentence longer than `max_chars` in clauses: cut after the last clause mark (else space) that
    keeps a piece within the limit."""
    spans = []
    while end - start > max_chars:
        mark = space = None
        for found in _CLAUSE_BREAK.finditer(piece, start + max_chars // 3, start + max_chars):
            if found.group(0).strip():
                mark = found.end()
            else:
                space = found.start()
        cut = mark or space or _character_start(piece, start, start + max_chars)
        s, e = _trim(piece, start, cut)
        if e > s:
            spans.append((s, e))
        start, _ = _trim(piece, cut, end)
    if end > start:
        spans.append((start, end))
    return spans
