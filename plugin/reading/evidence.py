"""From a page's whole text to what a model reads of it: the passages that answer a query, and token budgets.

- `check_focus`: the `query`, `passages` and `max_tokens` arguments of fetch / search, checked.
- `focus_fetch`: a FetchResponse with its `passages` (the best `passages` windows for `query`, best
  first, within `max_chars` characters and `max_tokens` tokens) or, with no query, its slice cut to
  `max_tokens`; `omitted` says what was left out and where to read on.
- `passages_of`: the Passage models of one text (search's `read=N, passages=K`).
- `pack_search`: a SearchResponse cut to `max_tokens`: rows in rank order while they fit, a row's
  passages or text shortened before the row goes; `omitted` counts what went.

Tokens are `plugin.reading.tokens.estimate_tokens` of what the model reads (`plugin.surfaces.render`'s
text): the page frame (title, address, notice) and each passage's label are counted with its text, so
the rendered answer stays within the budget. Passage labels are written here (`passage_label`) and the
renderer uses them, so what is counted is what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from plugin.errors import INVALID_PARAMETER, SearchError
from plugin.models import FetchResponse, Omitted, Passage, ResultRow, SearchResponse
from plugin.pipeline.query import whole_number
from plugin.reading.passages import RankOptions, best_passages
from plugin.reading.sentences import Segmented, segment
from plugin.reading.tokens import chars_within, estimate_tokens
from plugin.settings import Settings

# Tokens of the fixed parts of a rendered page (notice, frame tags, the closing lines) beyond its title
# and address, and of a rendered row beyond its title, address and snippet: measured on the renderings
# with estimate_tokens and rounded up (tests/test_passages_surfaces.py holds them to it). What surrounds
# a search's rows (query, notice, engines, warnings) is measured on the renderer itself (pack_search).
PAGE_FRAME_TOKENS = 130
ROW_FRAME_TOKENS = 12
# A budget must hold the frame around the text (title, address, notice): below this it cannot be met.
MIN_MAX_TOKENS = 300


@dataclass(frozen=True)
class Focus:
    query: str | None
    count: int | None  # None: as many as fit in fetch_passage_chars characters (or max_chars)
    max_tokens: int | None


def rank_options(settings: Settings) -> RankOptions:
    return RankOptions(window_chars=settings.passage_window_chars, prefix=settings.passage_prefix,
                       k1=settings.passage_bm25_k1, b=settings.passage_bm25_b, meaning=settings.passage_meaning,
                       soft_threshold=settings.passage_soft_threshold, grow_chars=settings.passage_grow_chars,
                       grow_share=settings.passage_grow_share,
                       weights=tuple(sorted(settings.passage_weights.items())))


def check_focus(query: object, passages: object, max_tokens: object, settings: Settings,
                error: type[SearchError] = SearchError) -> Focus | None:
    """The checked arguments; None when none of them asks for anything. `error`: the exception class
    to raise (FetchError for fetch)."""
    if query is not None and not isinstance(query, str):
        raise error(INVALID_PARAMETER, f"query must be a string, got {type(query).__name__}", parameter="query")
    text = query.strip() if isinstance(query, str) else None
    if text is not None and not text:
        raise error(INVALID_PARAMETER, "query must not be empty", parameter="query")
    if text is not None and len(text) > 1000:
        raise error(INVALID_PARAMETER, f"query must be at most 1000 characters, got {len(text)}", parameter="query")
    count = None
    if passages is not None:
        number = whole_number(passages)
        if number is None or number < 1:
            raise error(INVALID_PARAMETER, f"passages must be an integer of at least 1, got {str(passages)[:40]!r}",
                        parameter="passages")
        count = min(number, settings.passages_max)
        if text is None:  # refused on every surface alike, rather than silently ignored
            raise error(INVALID_PARAMETER, "passages picks passages for a query; give query too (or leave "
                        "passages out for a slice of the text)", parameter="passages")
    budget = None
    if max_tokens is not None:
        budget = whole_number(max_tokens)
        if budget is None or budget < MIN_MAX_TOKENS:
            raise error(INVALID_PARAMETER, f"max_tokens must be an integer of at least {MIN_MAX_TOKENS}, got "
                        f"{str(max_tokens)[:40]!r}", parameter="max_tokens")
    if text is None and budget is None:
        return None
    return Focus(text, count, budget)


def passage_label(number: int | str, passage: Passage) -> str:
    """The line above a passage in the model's text: its number, offsets and heading path."""
    where = f" · {' › '.join(passage.heading_path)}" if passage.heading_path else ""
    return f"[{number}] characters {passage.start}-{passage.end}{where}"


def passage_tokens(number: int | str, passage: Passage) -> int:
    return estimate_tokens(passage_label(number, passage)) + estimate_tokens(passage.text) + 2


# Ranking costs per unit (sentence, line, item: ~40-70 µs each; scripts/passage_shapes.py). Articles hold one per 110 characters
# (median of the article corpus; its densest page one per 26); a page of very short lines (a word list, a
# column of numbers: a unit per 3-10 characters) would cost ten or twenty times prose of its length. So at
# most one unit per this many characters of passage_scan_chars is ranked, and never fewer than
# SCAN_UNITS_AT_LEAST (~0.25 s of CPU: below that, a bound would only cut pages short).
SCAN_CHARS_PER_UNIT = 20
SCAN_UNITS_AT_LEAST = 5000


def scan_end(content: str, offset: int, settings: Settings) -> int:
    """Where passages stop being sought by length: `passage_scan_chars` after `offset` (a read may hold ten
    million characters; ranking them all would hold a worker for seconds), or the end of the text."""
    return min(len(content), offset + settings.passage_scan_chars)


def scan_units(settings: Settings) -> int:
    """The most units ranked from one offset (`scanned`)."""
    return max(SCAN_UNITS_AT_LEAST, settings.passage_scan_chars // SCAN_CHARS_PER_UNIT)


def scanned(content: str, offset: int, settings: Settings, *, markdown: bool = True) -> tuple[Segmented, int]:
    """The units passages are sought in, and where that part of the page ends: `scan_end`, or earlier, where
    a page of short lines reaches `scan_units` units. A block running past the end is left out, not cut."""
    end = scan_end(content, offset, settings)
    most = scan_units(settings)
    seg = segment(content, markdown=markdown, max_chars=rank_options(settings).max_sentence_chars, start=offset,
                  end=end, max_units=most)
    units = [u for u in seg.units if u.end <= end]
    if len(units) > most:
        end = units[most].start
        units = units[:most]
    seg.units = units
    return seg, end


def scan_warning(content: str, offset: int, settings: Settings, end: int | None = None) -> str | None:
    """What a fetch says when passages were sought in part of the page: `end` where `scanned` stopped."""
    by_length = scan_end(content, offset, settings)
    end = by_length if end is None else end
    if end >= len(content):
        return None
    why = ("passage_scan_chars" if end >= by_length else
           f"a page of short lines: at most {scan_units(settings)} sentences or lines, one per "
           f"{SCAN_CHARS_PER_UNIT} characters of passage_scan_chars and at least {SCAN_UNITS_AT_LEAST}")
    return (f"passages were sought in characters {offset}-{end} of the page's {len(content)} "
            f"({why}); a fetch with the same query and offset={end} looks further")


def passages_of(content: str, query: str, count: int, settings: Settings, *, markdown: bool = True,
                offset: int = 0, seg: Segmented | None = None) -> list[Passage]:
    """The `count` best passages of `content` for `query` from `offset` on, within what `scanned` gives (or
    `seg`, its units). CPU-bound (~0.4 ms per 1,000 characters of prose): callers off the event loop run it
    in a thread."""
    options = rank_options(settings)
    if seg is None:
        seg, _ = scanned(content, offset, settings, markdown=markdown)
    windows = best_passages(content, query, count, markdown=markdown, options=options, offset=offset, segmented=seg)
    return [Passage(text=content[w.start:w.end], start=w.start, end=w.end, score=round(w.score, 3),
                    heading_path=list(w.section)) for w in windows]


def sought_passages(content: str, query: str, count: int, settings: Settings, *, markdown: bool = True,
                    offset: int = 0) -> tuple[list[Passage], str | None]:
    """`passages_of`, and when only part of the page was searched (`scanned`), the warning that says so:
    a fetch's and a search row's passages alike."""
    seg, end = scanned(content, offset, settings, markdown=markdown)
    return (passages_of(content, query, count, settings, markdown=markdown, offset=offset, seg=seg),
            scan_warning(content, offset, settings, end))


def page_frame_tokens(response: FetchResponse, query: str | None = None) -> int:
    """Tokens of everything a rendered page shows besides its text or passages."""
    return (PAGE_FRAME_TOKENS + estimate_tokens(response.title or "") + estimate_tokens(response.final_url)
            + estimate_tokens(query or "") + sum(estimate_tokens(w[:300]) + 3 for w in response.warnings))


def _omitted_passages(left_out: list[Passage], budgeted: bool) -> Omitted:
    return Omitted(passages=len(left_out), chars=sum(len(p.text) for p in left_out),
                   next_offset=min(p.start for p in left_out), starts=[p.start for p in left_out],
                   how=("fetch(url, offset=start, max_chars=end-start) reads one; starts "
                        + ", ".join(str(p.start) for p in left_out[:5]) + (" …" if len(left_out) > 5 else "")
                        + ("; or raise max_tokens" if budgeted else "; or raise max_chars")))


def _longest_omitted(candidates: list[Passage], budgeted: bool) -> Omitted:
    """The longest line saying what was left out that any passages of `candidates` could need: it names the
    starts of the first five left out, so the five largest starts (the most digits), and the ellipsis."""
    return _omitted_passages(sorted(candidates, key=lambda p: p.start, reverse=True), budgeted)


def omitted_tokens(omitted: Omitted) -> int:
    """Tokens of the line saying what was left out (render's `_omitted_line`)."""
    return estimate_tokens(omitted.how) + 25


def focus_fetch(response: FetchResponse, content: str, focus: Focus, settings: Settings, *, markdown: bool,
                max_chars: int | None) -> FetchResponse:
    """`response` (one slice of `content`) made into passages for `focus.query`, or cut to the budget.
    CPU-bound on a long page: the reader runs it in a thread, as it runs extraction."""
    if focus.query is None:
        return _cut_slice(response, content, focus.max_tokens or 0)
    candidates, warning = sought_passages(content, focus.query, focus.count or settings.passages_max, settings,
                                          markdown=markdown, offset=response.offset)
    if warning is not None:
        response = response.model_copy(update={"warnings": [*response.warnings, warning]})
    if max_chars is None and focus.count is None:
        max_chars = settings.fetch_passage_chars
    frame = page_frame_tokens(response, focus.query)
    budgeted = focus.max_tokens is not None

    def pack(room: float) -> tuple[list[Passage], list[Passage], int]:
        kept: list[Passage] = []
        left_out: list[Passage] = []
        chars = tokens = 0
        for passage in candidates:
            cost = passage_tokens(len(kept) + 1, passage)
            if (max_chars is not None and chars + len(passage.text) > max_chars) or tokens + cost > room:
                left_out.append(passage)
                continue
            kept.append(passage)
            chars += len(passage.text)
            tokens += cost
        return kept, left_out, tokens

    room = focus.max_tokens - frame if budgeted else float("inf")
    kept, left_out, tokens = pack(room)
    omitted = _omitted_passages(left_out, budgeted) if left_out else None
    if omitted is not None and budgeted:  # the line saying what was left out must fit too, whichever are left out
        kept, left_out, tokens = pack(room - omitted_tokens(_longest_omitted(candidates, budgeted)))
        omitted = _omitted_passages(left_out, budgeted) if left_out else None
    spent = frame + tokens + (omitted_tokens(omitted) if omitted is not None else 0)
    update = {"query": focus.query, "passages": kept, "content": "", "next_offset": None, "truncated": False,
              "omitted": omitted, "tokens": spent}
    return response.model_copy(update=update)


def _cut_slice(response: FetchResponse, content: str, max_tokens: int) -> FetchResponse:
    """The slice shortened to fit `max_tokens` with its frame, cut at a line or word like any slice."""
    from plugin.reading.reader import slice_text

    omitted_line = 40  # "(left out by the budget: N characters; read on with offset=N, or raise max_tokens)"
    room = max_tokens - page_frame_tokens(response) - omitted_line
    piece = response.content
    fitting = chars_within(piece, max(room, 0))
    if fitting >= len(piece):
        return response.model_copy(update={"tokens": page_frame_tokens(response) + estimate_tokens(piece)
                                           + (omitted_line if response.truncated else 0)})
    # fitting < len(piece) <= what is left of the text: the shorter slice never reaches the end
    piece, next_offset = slice_text(content, response.offset, fitting) if fitting > 0 else ("", response.offset)
    omitted = Omitted(chars=len(content) - (response.offset + len(piece)), next_offset=next_offset,
                      how=f"read on with offset={next_offset}, or raise max_tokens")
    return response.model_copy(update={"content": piece, "next_offset": next_offset, "truncated": True,
                                       "omitted": omitted,
                                       "tokens": page_frame_tokens(response) + estimate_tokens(piece)
                                       + omitted_line})


# ----- search -----
def row_tokens(row: ResultRow, number: int = 1, snippet_chars: int = 300) -> int:
    """What one row costs in the model's text (render_for_model), page text or passages included."""
    cost = ROW_FRAME_TOKENS + estimate_tokens(row.title) + estimate_tokens(row.url) + estimate_tokens(
        row.snippet[:snippet_chars])
    if row.passages:
        cost += sum(passage_tokens(f"{number}.{k}", p) for k, p in enumerate(row.passages, start=1))
    elif row.content:
        cost += estimate_tokens(row.content) + 12
    if row.read_error is not None:
        cost += estimate_tokens(row.read_error.message[:200]) + 10
    return cost


# A row that does not fit whole is shown with its snippet cut when that leaves at least this many of its
# characters (the first row always, however few: the best row, cut, beats none).
SNIPPET_CUT_MIN = 80

# Under a budget a search's notes (its warnings, the failing engines' details) are shortened in steps
# until what surrounds the rows fits: whole; cut short; the details left out and the warnings cut
# shorter; the warnings counted instead of shown. (characters of a warning, of a detail; None: whole)
NOTE_STEPS: tuple[tuple[int | None, int | None], ...] = ((None, None), (150, 40), (60, 0), (0, 0))
NOTES_SHORTENED = "warnings and details shortened (whole without max_tokens)"
SHOWN_FAILING = ("ok", "disabled", "skipped", "empty", "irrelevant")  # render_for_model lists the others' details


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:max(chars - 1, 0)].rstrip() + "…"


def _notes_cut(response: SearchResponse, warning_chars: int | None, detail_chars: int | None) -> SearchResponse:
    """`response` with its warnings and its failing engines' details cut to these lengths."""
    if warning_chars is None and detail_chars is None:
        return response
    warnings = list(response.warnings)
    if warning_chars == 0 and warnings:
        warnings = [f"{len(warnings)} warning{'s' if len(warnings) > 1 else ''} left out (max_tokens)"]
    elif warning_chars is not None:
        warnings = [_cut(w, warning_chars) for w in warnings]
    engines = [report if report.status in SHOWN_FAILING or detail_chars is None
               else report.model_copy(update={"detail": _cut(report.detail, detail_chars) if detail_chars else ""})
               for report in response.engines]
    return response.model_copy(update={"warnings": warnings, "engines": engines})


def pack_search(response: SearchResponse, max_tokens: int) -> SearchResponse:
    """The rows that fit `max_tokens` with everything else the model's text shows (the query, the notice,
    the engines that answered and those that did not with their details, the warnings, what was left
    out), in rank order; a row's passages (the last first) or page text go before the row does; the
    first row that does not fit even bare ends the list, after its snippet is cut to fit when that
    leaves it SNIPPET_CUT_MIN characters or it is the first row (the best row, cut, beats none).
    Warnings and details are shortened when they alone would not leave the budget room (NOTE_STEPS)."""
    from plugin.surfaces.render import render_for_model  # what the model reads: measured on the renderer

    # The longest line that can say what was left out: every count at most what the rows hold (a search with
    # no rows, or rows without passages or text, reserves no room for what it cannot leave out).
    all_passages = sum(len(row.passages or []) for row in response.results)
    all_chars = sum(len(row.content or "") + sum(len(p.text) for p in row.passages or []) for row in response.results)
    longest_snippet = max((len(row.snippet) for row in response.results), default=0)

    def frame(candidate: SearchResponse) -> int:
        """Tokens of the text around the rows, with the longest line saying what was left out."""
        worst = Omitted(rows=len(response.results), passages=all_passages, chars=all_chars,
                        snippet_chars=longest_snippet,
                        how=_omitted_how(bool(response.results), bool(all_passages or all_chars),
                                         candidate is not response, bool(longest_snippet)))
        return estimate_tokens(render_for_model(candidate.model_copy(update={"results": [], "omitted": worst})))

    candidate = response
    for warning_chars, detail_chars in NOTE_STEPS:
        candidate = _notes_cut(response, warning_chars, detail_chars)
        if frame(candidate) <= max_tokens:
            break
    shortened = candidate is not response
    room = max_tokens - frame(candidate)
    if room < 0:  # even the quietest frame is over: no row can be shown, and the answer says why
        needed = frame(candidate)
        omitted = Omitted(rows=len(response.results), how=f"max_tokens {max_tokens} cannot hold what surrounds the "
                          f"rows (about {needed} tokens: the query, the notice, the engines); raise it")
        return candidate.model_copy(update={"results": [], "omitted": omitted})
    kept: list[ResultRow] = []
    cut: list[tuple[int, int]] = []  # per kept row: its passages and characters left out
    rows_left = 0
    snippet_cut = 0  # characters of the last kept row's snippet left out
    for index, row in enumerate(response.results):
        cost = row_tokens(row, index + 1)
        passages_cut = chars_cut = 0
        while cost > room and row.passages:
            passages_cut += 1
            chars_cut += len(row.passages[-1].text)
            row = row.model_copy(update={"passages": row.passages[:-1]})
            cost = row_tokens(row, index + 1)
        if cost > room and row.content:
            bare = row_tokens(row.model_copy(update={"content": None}), index + 1)
            fitting = chars_within(row.content, max(room - bare - 12, 0))
            chars_cut += len(row.content) - fitting
            row = row.model_copy(update={"content": row.content[:fitting] or None, "content_truncated": True})
            cost = row_tokens(row, index + 1)
        if cost > room and row.snippet:
            bare = row_tokens(row.model_copy(update={"snippet": ""}), index + 1)
            fitting = chars_within(row.snippet, room - bare - 2)  # 2: the "…" that says it was cut
            if fitting >= SNIPPET_CUT_MIN or (not kept and bare <= room):
                snippet_cut = len(row.snippet) - fitting
                row = row.model_copy(update={"snippet": row.snippet[:fitting].rstrip() + "…" if fitting else ""})
                kept.append(row)
                cut.append((passages_cut, chars_cut))
                rows_left = len(response.results) - index - 1  # nothing after a row cut to fit
                break
        if cost > room:  # the row goes, and what was cut from it is counted with it, not again
            rows_left = len(response.results) - index
            break
        kept.append(row)
        cut.append((passages_cut, chars_cut))
        room -= cost

    def packed_now() -> SearchResponse:
        return _with_omitted(candidate, kept, rows_left, sum(p for p, _ in cut), sum(c for _, c in cut), shortened,
                             snippet_cut)

    packed = packed_now()
    # A whole text's estimate is not quite the sum of its parts': the text itself has the last word.
    while kept and estimate_tokens(render_for_model(packed)) > max_tokens:
        if len(kept) == 1 and kept[0].snippet:  # the best row stays: its snippet is cut shorter instead
            snippet = kept[0].snippet.rstrip("…")
            shorter = snippet[:len(snippet) * 3 // 4].rstrip()
            snippet_cut += len(snippet) - len(shorter)
            kept[0] = kept[0].model_copy(update={"snippet": shorter + "…" if shorter else ""})
            packed = packed_now()
            continue
        kept.pop()
        cut.pop()  # what was cut from that row is counted with the row now
        rows_left += 1
        snippet_cut = 0  # the row whose snippet was cut went whole
        packed = packed_now()
    return packed


def _omitted_how(rows: bool, parts: bool, shortened: bool, snippet: bool = False) -> str:
    how = []
    if rows:
        how.append("raise max_tokens for more rows")
    if snippet:
        how.append("a row's snippet was cut to fit (it ends with …)")
    if parts:
        how.append("web_fetch(url, query=…) reads a row's page")
    if shortened:
        how.append(NOTES_SHORTENED)
    return "; ".join(how)


def _with_omitted(response: SearchResponse, kept: list[ResultRow], rows: int, passages: int,
                  chars: int, shortened: bool = False, snippet_chars: int = 0) -> SearchResponse:
    if not (rows or passages or chars or shortened or snippet_chars):
        return response.model_copy(update={"results": kept})
    omitted = Omitted(rows=rows, passages=passages, chars=chars, snippet_chars=snippet_chars,
                      how=_omitted_how(bool(rows), bool(passages or chars), shortened, bool(snippet_chars)))
    return response.model_copy(update={"results": kept, "omitted": omitted})
