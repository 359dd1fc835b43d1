"""Search and read in one call: the top N rows get their page's main text (`search(..., read=N)`).

The pages are read concurrently within the search's one overall deadline (`deadline_ms`, counted from
the moment the search was asked: the reads get what the ranking left of it, at least `read_min_ms`, at
most `fetch_timeout_ms`; see `read_window`) and share one character budget (`read_max_chars`): a short
page leaves its unused share to the longer ones. A row whose page cannot be had in time keeps its
snippet and says why (`read_error`). When the engine that found a row already sent the page's text
(Exa, Firecrawl: `ResultRow.engine_text`), that text is used, tidied and cleaned like a read page
(plugin.reading.sent), and no request is made.
"""

from __future__ import annotations

import asyncio
from typing import Mapping

from plugin.errors import INVALID_PARAMETER, NOT_EXTRACTABLE, TIMEOUT, FetchError, SearchError
from plugin.infra.logs import get_logger
from plugin.models import ReadFailure, ResultRow, SearchResponse
from plugin.pipeline.query import whole_number
from plugin.reading.reader import Reader, slice_text
from plugin.reading.sent import tidy_sent_text
from plugin.reading.shells import SHELL_WARNING
from plugin.settings import Settings

log = get_logger("metasearch.reading")
# How long after the reads' deadline a read the reader did not end itself is cut off (see attach_pages).
BACKSTOP_S = 0.25


def check_read(value: object, settings: Settings) -> int:
    """How many rows to read: an integer of 0 or more, clamped to read_max_results like a search's limit."""
    if value is None or value is False:
        return 0
    number = whole_number(value)
    if number is None:
        raise SearchError(INVALID_PARAMETER, f"read must be an integer (how many top results to read), got "
                                             f"{str(value)[:40]!r}", parameter="read")
    if number < 0:  # a count of pages cannot be negative: a mistake, not a request for none
        raise SearchError(INVALID_PARAMETER, f"read must be 0 or more (how many top results to read), got {number}",
                          parameter="read")
    return min(number, settings.read_max_results)


def read_window(settings: Settings, elapsed_s: float) -> float:
    """Seconds the reads of a search get when the search has run `elapsed_s` so far: what is left of its
    overall deadline (`deadline_ms`), but at least `read_min_ms` (a search that used its whole deadline
    still reads, briefly) and at most `fetch_timeout_ms` (one page read's own deadline)."""
    left = settings.deadline_ms / 1000 - elapsed_s
    return min(settings.fetch_timeout_ms / 1000, max(left, settings.read_min_ms / 1000))


async def attach_pages(response: SearchResponse, count: int, *, reader: Reader, settings: Settings,
                       window_s: float | None = None, passages: int = 0, render: str | None = None) -> SearchResponse:
    """`response` with the main text of its first `count` rows attached, read within `window_s` seconds
    (`read_window(settings, 0)` when not given); with `passages`, each row's `passages` best passages for
    the response's query instead of its text (plugin.reading.evidence). `render` (checked; None: the
    setting): whether pages that need a browser are rendered (plugin.reading.render); a row says
    `rendered` and `may_require_js`, and a shell's warning goes into the response's warnings."""
    rows = response.results[:count]
    if not rows:
        return response
    window = read_window(settings, 0.0) if window_s is None else window_s
    deadline = asyncio.get_running_loop().time() + window

    how: dict[int, tuple[bool, bool, list[str]]] = {}  # row -> (rendered, may_require_js, shell warnings)

    async def read(row: ResultRow, index: int) -> str | ReadFailure:
        given = row.engine_text
        if given is not None:
            text = tidy_sent_text(given)
            if text.strip():
                return text
        try:
            # The reader keeps the deadline itself, and knows why a read missed it: the page was slow
            # (`timeout`) or never asked because our queue at its host was full (`overloaded`). This bound,
            # a little later, is only a backstop: at the same moment it would cut the reader's own verdict
            # off and call every miss a timeout.
            async with asyncio.timeout_at(deadline + BACKSTOP_S):
                document, _ = await reader.document(row.url, markdown=True, ignore_robots=False, deadline=deadline,
                                                    render=render)
            how[index] = (document.rendered, document.may_require_js,
                          [w for w in document.warnings if w.startswith((SHELL_WARNING, "render=always:"))])
            return document.content
        except FetchError as exc:
            if exc.code == TIMEOUT:
                return late(exc.message)
            return ReadFailure(code=exc.code, message=exc.message)
        except (asyncio.TimeoutError, TimeoutError):
            return late()
        except Exception as exc:  # a reader bug on one page must not fail the search
            log.exception("reading %s failed", row.url)
            return ReadFailure(code=NOT_EXTRACTABLE, message=f"internal error: {type(exc).__name__}")

    def late(why: str = "") -> ReadFailure:
        return ReadFailure(code=TIMEOUT, message=f"not read within the search's deadline ({window * 1000:.0f} ms "
                                                 f"were left for reading pages)" + (f": {why}" if why else ""))

    outcomes = await asyncio.gather(*(read(row, i) for i, row in enumerate(rows)))
    texts = {i: text for i, text in enumerate(outcomes) if isinstance(text, str)}
    shares = share_budget({i: len(text) for i, text in texts.items()}, settings.read_max_chars)
    updated: list[ResultRow] = []
    warnings = list(response.warnings)
    for i, row in enumerate(rows):
        outcome = outcomes[i]
        if isinstance(outcome, ReadFailure):
            updated.append(row.model_copy(update={"read_error": outcome}))
            continue
        if i in how:
            rendered, may_require_js, shell = how[i]
            row = row.model_copy(update={"rendered": rendered, "may_require_js": may_require_js})
            warnings.extend(f"result {i + 1} ({row.url[:200]}): {w}" for w in shell)
        if passages:
            from plugin.reading.evidence import sought_passages

            # Ranking is CPU work (a long page takes a while): off the event loop, like extraction.
            found, partly = await asyncio.to_thread(sought_passages, outcome, response.query, passages, settings)
            if partly:  # only part of the page was searched (passage_scan_chars, or a page of short lines)
                warnings.append(f"result {i + 1} ({row.url[:200]}): {partly}")
            updated.append(row.model_copy(update={"passages": found, "content_truncated": True}))
            continue
        piece, rest = slice_text(outcome, 0, max(shares[i], 1))
        updated.append(row.model_copy(update={"content": piece, "content_truncated": rest is not None}))
    return response.model_copy(update={"results": updated + response.results[count:], "warnings": warnings})


def share_budget(lengths: Mapping[int, int], budget: int) -> dict[int, int]:
    """Characters per text: equal shares, a text shorter than its share giving the rest to the others."""
    shares: dict[int, int] = {}
    remaining = budget
    order = sorted(lengths, key=lambda i: lengths[i])
    for done, i in enumerate(order):
        share = remaining // (len(order) - done)
        shares[i] = min(lengths[i], share)
        remaining -= shares[i]
    return shares
