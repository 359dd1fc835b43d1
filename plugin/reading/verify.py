"""Does a quote occur in a page? `verify(url, quote)`: found or not, where, and the sentence around it.

A model that cites a page can check each quote against the page's own text. The page comes from the
page cache when it was read (fetch, or search with read=N), so a check costs no request. Quotes are
compared word by word: the quote's words must be the page's words, and where the quote has a word
boundary the page has one, and where it has none the page has none (`the rapist` is not in `therapist`,
`the drug can` is not in `the drug can't`). What folds (`fold_for_matching`):
- the kind and amount of whitespace between two words (a space, a line break, a run of spaces);
- hyphens and dashes: a dash between two words stands for a space or for nothing (`e-mail`, `email`,
  `e mail`; `Byron–Lovelace`, `Byron Lovelace`), and so does a zero-width non-joiner (Persian `می‌خواهم`,
  `میخواهم`, `می خواهم`), so a word the page hyphenates at a line end (`thera-`,
  a line break, `pist`) matches written whole;
- whitespace next to punctuation (`Dr. Ada`, `Dr.Ada`); punctuation itself counts (`1,000` is not `1000`);
- quote marks and apostrophes are left out, and an apostrophe between letters is inside its word
  (`can't` is one word: `cant`);
- Markdown marks are left out (`*`, `_`, backticks, `~`, `#`, `>`) and split no word, so a quote
  matches the Markdown text whether or not it kept `**bold**` (`re**ad**able` is `readable`);
- a table's cell separator `|` (and `\\|`, a pipe escaped inside a cell) is a word boundary like a space,
  so the cells of a row quoted as prose match (`Kyle Busch 5040` in `| Kyle Busch | 5040 | 5 |`, or
  `Kyle Busch | 5040 | 5` as plain text gives it); but the line break between two rows of a Markdown table
  (`|`, a line break, `|`: a row and the next, or the header's `| --- |` line) fits nothing but such a line
  break in the quote: a quote never runs from one row into the next (`5 Denny` is not in `| … | 5 |`, a
  line break, `| Denny … |`) unless the page has those words together elsewhere. (Plain text writes a
  table's rows as lines, `a | b`, with nothing to tell them from lines of prose: a quote runs on from one
  to the next there, as from line to line);
- Unicode normal form, width and compatibility forms (NFKC, text in NFD matches text in NFC), and case
  (case folding); accents and every other letter, digit and mark count, but for what a text may or may not
  write on the same word: Arabic tatweel, which only stretches a word, and the vowel points of Arabic and
  Hebrew (`كَتَبَ` is `كتب`, `שָׁלוֹם` is `שלום`: pages and the models quoting them write them or leave them
  out) are left out;
A match must start and end at word boundaries of the page (`cat` is not in `concatenate`), never inside
a character that folds to several (`ind` is not in `ﬁnd`: the ligature is one character of the page), nor
inside one user-perceived character (`👩` is not in `👩‍💻`, `👍` not in `👍🏽`, `🇺🇸` not in `🇦🇺🇸🇪`);
in scripts written without spaces (CJK, Thai, Lao, Myanmar, Khmer) any character is a boundary and spaces between their
characters do not count.
Pure matching here (`find_quote`); `verify` reads the page through the shared reader, and runs the
matching off the event loop (a page may hold a million characters).
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from dataclasses import dataclass

from plugin.errors import INVALID_PARAMETER, FetchError, checked_arguments
from plugin.infra.lifecycle import run_sync
from plugin.models import VerifyResponse
from plugin.reading.sentences import HEADING, SPACELESS_SCRIPTS, joins_previous, segment
from plugin.settings import Settings

# Left out, and no word boundary: quote marks and apostrophes, Markdown marks, invisible format characters.
_TRANSPARENT = frozenset("\"'`´‘’‚‛“”„‟«»‹›′″*_~#>\u0640")  # U+0640: Arabic tatweel, a justification stretch
# Optional vowel points: Arabic harakat, shadda, sukun and superscript alef, Quranic annotation marks; Hebrew
# cantillation marks and niqqud (not the maqaf, paseq, sof pasuq or nun hafukha among them: punctuation).
_VOWEL_POINT = re.compile("[\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"
                          "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")
_CELL = "|"  # a table's cell separator: a word boundary
# What lies between two letters of spaced scripts: whitespace (a word boundary), a dash or hyphen (a
# boundary or none: `e-mail`, `e mail`, `email`), or nothing (one word); and between any two characters, the
# end of a table row (BREAK: it fits only itself).
SPACE, DASH, NONE, BREAK = " ", "-", ".", "\n"
MAX_QUOTE_CHARS = 5000


@dataclass(frozen=True)
class QuoteMatch:
    start: int
    end: int
    occurrences: int


@dataclass(frozen=True)
class Folded:
    """A text folded for matching: `chars`, the folded characters; `gaps[k]`, what lies between characters
    k - 1 and k when both are letters or digits of a spaced script (SPACE: whitespace, DASH: a dash or
    hyphen, NONE: nothing: they are one word), BREAK between any two characters the end of a table row lies
    between, else NONE; `starts[k]:ends[k]`, the characters of the text
    folded character k came from (one character with its combining marks); `whole[k]`: k is the first
    (bit 1) and the last (bit 2) of what they folded to (a ligature folds to two, neither whole alone)."""

    chars: str
    gaps: str
    starts: list[int]
    ends: list[int]
    whole: list[int]

    @property
    def text(self) -> str:
        """The folded text with its word boundaries written in (a space or a dash), for reading."""
        return "".join(g + c if g != NONE else c for g, c in zip(self.gaps, self.chars))


def _row_break(text: str, start: int, end: int) -> bool:
    """The whitespace text[start:end] is the line break between two rows of a Markdown table (or a row and
    the header's `| --- |` line): a line break with a `|` right before it and right after it. Told from those
    two characters alone, so the match as written (which holds them) reads the same as the page around it."""
    return 0 < start and end < len(text) and text[start - 1] == _CELL and text[end] == _CELL and (
        "\n" in text[start:end])



def _kind(ch: str) -> str:
    """word, space, dash, skip (transparent) or other (punctuation and symbols, which count as written)."""
    if ch.isspace() or ch == _CELL:
        return "space"
    if ch in _TRANSPARENT or _VOWEL_POINT.match(ch):
        return "skip"
    category = unicodedata.category(ch)
    # a soft hyphen marks where a word was hyphenated; a zero-width non-joiner (Persian می‌خواهم) is typed as a
    # space or left out as often: both stand for a boundary or none
    if category == "Pd" or ch in "\u00ad\u200c":
        return "dash"
    if category[0] in "LNM":
        return "word"
    if "\U000e0020" <= ch <= "\U000e007f":  # the tags of a subdivision flag (🏴 + gbsct): part of what it shows
        return "other"
    if category[0] == "C":  # format and control characters (a zero-width joiner, a BOM): invisible
        return "skip"
    return "other"


_SPACELESS_CHAR = re.compile("[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in SPACELESS_SCRIPTS) + "]")


def _spaceless(ch: str) -> bool:
    return _SPACELESS_CHAR.match(ch) is not None


def _wordlike(ch: str) -> bool:
    """A letter, digit or mark of a script written with spaces between words."""
    if ch.isascii():
        return ch.isalnum()
    return _kind(ch) == "word" and not _spaceless(ch)


# Runs that fold character for character are taken whole (most of a page): letters and digits, whitespace;
# anything else goes one character (with its combining marks) at a time.
_RUN = re.compile(r"(\s+)|([^\W_\u0640]+)|.", re.S)
_JAMO = re.compile(r"[\u1100-\u11ff\ud7b0-\ud7ff]")


def fold_for_matching(text: str) -> Folded:
    """`text` folded as the module's docstring says, with where each folded character came from."""
    chars: list[str] = []
    gaps: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    whole: list[int] = []
    gap = NONE  # what lies between the last character written and the next
    last_wordlike = False
    length = len(text)
    index = 0  # where the text not yet folded starts
    for found in _RUN.finditer(text):
        if found.start() < index:
            continue  # a combining mark already folded with the character before it
        index = found.start()
        if found.group(1):
            if _row_break(text, found.start(), found.end()):
                gap = BREAK
            else:
                gap = SPACE if gap == NONE else gap  # whitespace after a dash (a line-end hyphen) keeps the dash
            index = found.end()
            continue
        if found.group(2):
            end = found.end()
            if end < length and joins_previous(text, end):
                end -= 1  # the last letter takes the marks after it: folded below, with them
            run = text[index:end]
            folded = run.lower() if run.isascii() else None
            if folded is None and run and unicodedata.is_normalized("NFKC", run) and not _JAMO.search(run):
                folded = run.casefold()
                folded = folded if len(folded) == len(run) and unicodedata.is_normalized("NFKC", folded) else None
            if folded:  # one folded character per character
                gaps.append((gap if gap == BREAK or last_wordlike and _wordlike(folded[0]) else NONE)
                            + NONE * (len(folded) - 1))
                chars.append(folded)
                starts.extend(range(index, end))
                ends.extend(range(index + 1, end + 1))
                whole.extend([3] * len(folded))
                gap, last_wordlike, index = NONE, _wordlike(folded[-1]), end
        while index < found.end():  # one character with its combining marks at a time
            end = index + 1
            while end < length and joins_previous(text, end):
                end += 1
            if text[index] in _TRANSPARENT or text.startswith("\\|", index):
                # before its fold: `´` (an apostrophe in `don´t`) folds to " ́"; `\|` is a pipe escaped in a cell
                index = end
                continue
            kept = [(ch, _kind(ch)) for ch in unicodedata.normalize("NFKC", text[index:end]).casefold()]
            count = sum(1 for _, kind in kept if kind in ("word", "other"))
            written = 0
            for ch, kind in kept:
                if kind == "space":  # what a spacing accent folds to (`¨` to " ̈"), as its NFKC form would
                    gap = SPACE if gap == NONE else gap
                elif kind == "dash":  # a dash after whitespace (`a - b`) is a plain boundary; a row's end stays
                    gap = gap if gap in (SPACE, BREAK) else DASH
                elif kind != "skip":
                    wordlike = kind == "word" and not _spaceless(ch)
                    gaps.append(gap if gap == BREAK or last_wordlike and wordlike else NONE)
                    chars.append(ch)
                    starts.append(index)
                    ends.append(end)
                    whole.append((1 if written == 0 else 0) | (2 if written == count - 1 else 0))
                    written += 1
                    gap, last_wordlike = NONE, wordlike
            index = end
    return Folded("".join(chars), "".join(gaps), starts, ends, whole)


# A run of gaps as three bit planes, one byte per gap (1 where the gap is a space; 1 where it is none; 1 where a
# row ends); a dash is in neither of the first two, so it fits anything but a row's end, which fits only itself.
_SPACE_PLANE = str.maketrans({SPACE: "\x01", DASH: "\x00", NONE: "\x00", BREAK: "\x00"})
_NONE_PLANE = str.maketrans({SPACE: "\x00", DASH: "\x00", NONE: "\x01", BREAK: "\x00"})
_BREAK_PLANE = str.maketrans({SPACE: "\x00", DASH: "\x00", NONE: "\x00", BREAK: "\x01"})


def _plane(gaps: str, table: dict) -> int:
    return int.from_bytes(gaps.translate(table).encode("latin-1"), "big")


class _Boundaries:
    """Whether the quote's gaps fit the page's at a candidate: where the quote has a space the page has a
    space or a dash, where it has none the page has none or a dash; a dash in the quote fits anything. Tested
    on whole runs as integers (a space against a none is a byte set in both planes' AND), so a candidate
    costs C-speed steps: gap by gap in Python, a 400,000-character page of one repeated word against a
    4,000-character quote took 16-35 s (every position a candidate, each compared to its end), now 3-4 s."""

    def __init__(self, quote_gaps: str, page_gaps: str):
        self.quote = quote_gaps
        self.page = page_gaps
        self.quote_space = _plane(quote_gaps, _SPACE_PLANE)
        self.quote_none = _plane(quote_gaps, _NONE_PLANE)
        self.quote_break = quote_gaps.translate(_BREAK_PLANE)
        self.page_space: str | None = None  # the page's planes, made the first time a run is not equal
        self.page_none: str | None = None
        self.page_break: str | None = None

    def fit(self, start: int, end: int) -> bool:
        """The quote's gaps fit the page's `start:end`."""
        if self.quote == self.page[start:end]:
            return True
        if self.page_space is None:
            self.page_space = self.page.translate(_SPACE_PLANE)
            self.page_none = self.page.translate(_NONE_PLANE)
            self.page_break = self.page.translate(_BREAK_PLANE)
        if self.page_break[start:end] != self.quote_break:
            return False
        space = int.from_bytes(self.page_space[start:end].encode("latin-1"), "big")
        none = int.from_bytes(self.page_none[start:end].encode("latin-1"), "big")
        return not (self.quote_space & none or self.quote_none & space)


def _inside_word(page: Folded, k: int) -> bool:
    """Folded characters k - 1 and k are letters of one word (no boundary between them)."""
    chars = page.chars
    return 0 < k < len(chars) and page.gaps[k] == NONE and _wordlike(chars[k - 1]) and _wordlike(chars[k])


def find_quote(text: str, quote: str, folded_text: Folded | None = None) -> QuoteMatch | None:
    """The first occurrence of `quote` in `text` as the module's docstring says, with the count of all
    (overlapping ones included). `folded_text`: `fold_for_matching(text)` when the caller has it (many
    quotes against one page)."""
    wanted = fold_for_matching(quote)
    if not wanted.chars:
        return None
    page = folded_text or fold_for_matching(text)
    size = len(wanted.chars)
    boundaries = _Boundaries(wanted.gaps[1:], page.gaps)
    first: QuoteMatch | None = None
    count = 0
    s = page.chars.find(wanted.chars)
    while s >= 0:
        e = s + size
        if (boundaries.fit(s + 1, e) and page.whole[s] & 1 and page.whole[e - 1] & 2
                and not _inside_word(page, s) and not _inside_word(page, e)):
            count += 1
            if first is None:
                first = QuoteMatch(page.starts[s], page.ends[e - 1], 0)
        s = page.chars.find(wanted.chars, s + 1)
    return QuoteMatch(first.start, first.end, count) if first else None


def sentence_around(text: str, start: int, end: int, *, markdown: bool) -> tuple[int, int]:
    """The span of the sentences (or item, code block, table) the match [start, end) lies in; a heading
    only when the match starts in it. Only the lines of the match are cut into sentences."""
    units = [u for u in segment(text, markdown=markdown, start=start, end=end).units
             if u.kind != HEADING or u.start <= start < u.end]
    if not units:
        return start, end
    return min(start, units[0].start), max(end, units[-1].end)


def locate(text: str, quote: str, *, markdown: bool) -> tuple[QuoteMatch | None, tuple[int, int]]:
    """`find_quote` and the sentence around the match ((0, 0) when not found): CPU work on a long page,
    which `verify` runs in a thread."""
    found = find_quote(text, quote)
    if found is None:
        return None, (0, 0)
    return found, sentence_around(text, found.start, found.end, markdown=markdown)


def check_quote(quote: object) -> str:
    if quote is None:
        raise FetchError(INVALID_PARAMETER, "quote is required: the text to look for in the page", parameter="quote")
    if not isinstance(quote, str):
        raise FetchError(INVALID_PARAMETER, f"quote must be text, not {type(quote).__name__}", parameter="quote")
    if not fold_for_matching(quote).chars:
        raise FetchError(INVALID_PARAMETER, "quote must be text: something besides whitespace, quote marks, "
                         "dashes and Markdown marks", parameter="quote")
    if len(quote) > MAX_QUOTE_CHARS:
        raise FetchError(INVALID_PARAMETER, f"quote must be at most {MAX_QUOTE_CHARS} characters, got {len(quote)}",
                         parameter="quote")
    return quote


async def verify_with(reader, url: object, quote: object, *, format: object = "markdown",
                      ignore_robots: bool = False) -> VerifyResponse:
    """`verify` through a given Reader (the surfaces pass their searcher's)."""
    from plugin.reading.reader import check_fetch_args, with_fragment

    started = time.perf_counter()
    if url is None and quote is None:  # every missing argument named at once, not one per call
        raise FetchError(INVALID_PARAMETER, "url and quote are required: the page's http:// or https:// address "
                         "and the text to look for in it", parameter=["url", "quote"])
    checked = check_quote(quote)
    _, _, fmt = check_fetch_args(None, 0, format, reader.settings.fetch_max_chars)
    target = reader.client.check(url)
    document, cached = await reader.document(target.url, markdown=fmt == "markdown", ignore_robots=ignore_robots,
                                             deadline=reader.deadline())
    text = document.content
    # Folding a page of a million characters takes a second: off the event loop, like extraction.
    found, (s, e) = await asyncio.to_thread(locate, text, checked, markdown=fmt == "markdown")
    common = dict(url=target.url, final_url=with_fragment(document.final_url, target.url), quote=checked, format=fmt,
                  cached=cached, warnings=list(document.warnings), rendered=document.rendered,
                  may_require_js=document.may_require_js)
    if found is None:
        return VerifyResponse(found=False, elapsed_ms=int((time.perf_counter() - started) * 1000), **common)
    return VerifyResponse(found=True, start=found.start, end=found.end, text=text[found.start:found.end],
                          sentence=text[s:e], sentence_start=s, sentence_end=e, occurrences=found.occurrences,
                          elapsed_ms=int((time.perf_counter() - started) * 1000), **common)


async def verify(url: str, quote: str, *, format: str = "markdown", settings: Settings | None = None,
                 ignore_robots: bool = False) -> VerifyResponse:
    """Whether `quote` occurs in the page at `url` (whitespace, case, quote marks, hyphenation and
    Markdown emphasis aside), with its offsets into the page's text in `format` (as fetch returns it)
    and the sentence around it; the page comes from the page cache when it was read. Raises
    `FetchError` when the page cannot be had or the arguments are wrong."""
    from plugin.reading.reader import reader_for

    return await verify_with(reader_for(settings), url, quote, format=format, ignore_robots=ignore_robots)


def verify_sync(url: str, quote: str, **kwargs) -> VerifyResponse:
    """`verify` for callers that do not await (see fetch_sync)."""
    from plugin.reading.reader import Reader

    settings = kwargs.pop("settings", None)

    async def run() -> VerifyResponse:
        async with Reader(settings) as reader:
            return await verify_with(reader, url, quote, **kwargs)

    return run_sync(run)


# Arguments that do not fit: FetchError(invalid_parameter) with the closest name, never TypeError, whether
# these are imported from here or from `plugin`.
verify = checked_arguments(verify, error=FetchError)
verify_sync = checked_arguments(verify_sync, like=verify, error=FetchError)
