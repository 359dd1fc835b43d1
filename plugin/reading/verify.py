"""Does a quote occur in a page? `verify(url, quote)`: found or not, where, and the sentence around it.

A model that cites a page can check each quote against the page's own text. The page comes from the
page cache when it was read (fetch, or search with read=N), so a check costs no request. The quote
matches when it occurs in the text once both are folded alike (`fold_with_map`):
- whitespace is left out (line breaks, runs of spaces, a missing space: `well known`, `well\\nknown`);
- hyphens and dashes are left out (`e-mail`, `email`; a word hyphenated at a line end);
- quote marks and apostrophes are left out (`"`, `“”`, `„“`, `«»`, `'`, `’`);
- Markdown marks are left out (`*`, `_`, backticks, `~`, `#`, `>`, `|`), so a quote matches the Markdown
  text whether or not it kept `**bold**`;
- case and width are folded (NFKC, case folding); accents and every other letter, digit and mark count.
A match must start and end at word boundaries of the page (a quote `cat` does not match inside
`concatenate`), except in scripts written without spaces (CJK, Thai).
Pure matching here (`find_quote`); `verify` reads the page through the shared reader.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass

from plugin.errors import INVALID_PARAMETER, FetchError
from plugin.infra.lifecycle import run_sync
from plugin.models import VerifyResponse
from plugin.reading.sentences import HEADING, segment
from plugin.settings import Settings

_SKIPPED_MARKS = frozenset("\"'`´‘’‚‛“”„‟«»‹›′″*_~#>|\u00ad")
_SPACELESS = ((0x0E00, 0x0EFF), (0x1100, 0x11FF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF),
              (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))
MAX_QUOTE_CHARS = 5000


@dataclass(frozen=True)
class QuoteMatch:
    start: int
    end: int
    occurrences: int


def _skipped(ch: str) -> bool:
    return ch.isspace() or ch in _SKIPPED_MARKS or unicodedata.category(ch) == "Pd"


def fold_with_map(text: str) -> tuple[str, list[int]]:
    """`text` folded for matching, and for each folded character the offset of the character it came from."""
    out: list[str] = []
    where: list[int] = []
    for index, ch in enumerate(text):
        if _skipped(ch):
            continue
        folded = unicodedata.normalize("NFKC", ch).casefold() if not ch.isascii() else ch.lower()
        for piece in folded:
            if not _skipped(piece):
                out.append(piece)
                where.append(index)
    return "".join(out), where


def _spaceless(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _SPACELESS)


def _inside_word(a: str, b: str) -> bool:
    return a.isalnum() and b.isalnum() and not (_spaceless(a) or _spaceless(b))


def find_quote(text: str, quote: str, folded_text: tuple[str, list[int]] | None = None) -> QuoteMatch | None:
    """The first occurrence of `quote` in `text` as the module's docstring says, with the count of all.
    `folded_text`: `fold_with_map(text)` when the caller has it (many quotes against one page)."""
    folded_quote, _ = fold_with_map(quote)
    if not folded_quote:
        return None
    folded, where = folded_text or fold_with_map(text)
    first: QuoteMatch | None = None
    count = 0
    position = folded.find(folded_quote)
    while position >= 0:
        start = where[position]
        end = where[position + len(folded_quote) - 1] + 1
        before_ok = start == 0 or not _inside_word(text[start - 1], text[start])
        after_ok = end >= len(text) or not _inside_word(text[end - 1], text[end])
        if before_ok and after_ok:
            count += 1
            if first is None:
                first = QuoteMatch(start, end, 0)
        position = folded.find(folded_quote, position + 1)
    return QuoteMatch(first.start, first.end, count) if first else None


def sentence_around(text: str, start: int, end: int, *, markdown: bool) -> tuple[int, int]:
    """The span of the sentences (or item, code block, table) the match [start, end) lies in."""
    units = [u for u in segment(text, markdown=markdown).units if u.kind != HEADING or (u.start <= start < u.end)]
    inside = [u for u in units if u.end > start and u.start < end]
    if not inside:
        return start, end
    return min(start, inside[0].start), max(end, inside[-1].end)


def check_quote(quote: object) -> str:
    if not isinstance(quote, str) or not fold_with_map(quote)[0]:
        raise FetchError(INVALID_PARAMETER, "quote must be text with at least one letter or digit",
                         parameter="quote")
    if len(quote) > MAX_QUOTE_CHARS:
        raise FetchError(INVALID_PARAMETER, f"quote must be at most {MAX_QUOTE_CHARS} characters, got {len(quote)}",
                         parameter="quote")
    return quote


async def verify_with(reader, url: object, quote: object, *, format: object = "markdown",
                      ignore_robots: bool = False) -> VerifyResponse:
    """`verify` through a given Reader (the surfaces pass their searcher's)."""
    from plugin.reading.reader import check_fetch_args

    started = time.perf_counter()
    checked = check_quote(quote)
    _, _, fmt = check_fetch_args(None, 0, format, reader.settings.fetch_max_chars)
    target = reader.client.check(url)
    document, cached = await reader.document(target.url, markdown=fmt == "markdown", ignore_robots=ignore_robots,
                                             deadline=reader.deadline())
    text = document.content
    found = find_quote(text, checked)
    common = dict(url=target.url, final_url=document.final_url, quote=checked, format=fmt, cached=cached,
                  warnings=list(document.warnings), rendered=document.rendered,
                  may_require_js=document.may_require_js)
    if found is None:
        return VerifyResponse(found=False, elapsed_ms=int((time.perf_counter() - started) * 1000), **common)
    s, e = sentence_around(text, found.start, found.end, markdown=fmt == "markdown")
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
