"""More results: page n of a query asks every engine for its page n, and never shows a URL that pages
1..n-1 of the same query showed.

Page n ranks each engine's rows of pages 1..n together (earlier pages' rows first, as the engine
ordered them), so a good row that just missed the cut of page 1 leads page 2 instead of being lost
behind the engines' second pages.

What each page showed is kept in the state store (the embedded SQLite file by default, or Redis), so a
harness that spawns one process per call gets page 2 right after page 1 ran in another process. The
memory is keyed by everything that decides the answer except the page and the limit; a page that was
never asked (or whose memory expired) is worked out by running it, which also remembers it.

The memory is compact (every search keeps one, for `page_memory_s`): a row a page showed, which later
pages leave out, is kept as its URL alone (it still holds its place in its engine's list and counts for
its domain, so the rows around it rank as they would); only rows not shown yet keep their text,
without the page text an engine sent with them (a later page reads such a page instead).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Collection, Mapping, Sequence

from engines.base import Row
from plugin.infra.state import State
from plugin.pipeline.answers import digest, query_identity, row_from_json
from plugin.pipeline.canonical import identity
from plugin.pipeline.plan import SearchPlan
from plugin.settings import Settings


def query_key(settings: Settings, plan: SearchPlan, engine_names: Sequence[str]) -> str:
    """The identity of "the same query" across its pages."""
    return digest(query_identity(settings, plan, engine_names))


def _slot(key: str, page: int) -> str:
    return f"pages:{key}:{page}"


@dataclass
class PageMemory:
    shown: list[str]  # URL identities the page showed
    rows: dict[str, list[Row]] = field(default_factory=dict)  # engine -> the rows it kept for that page


async def recalled(state: State, key: str, page: int) -> PageMemory | None:
    """What page `page` of this query showed and the rows it ranked, or None when not remembered."""
    raw = await state.cache_get(_slot(key, page))
    if raw is None:
        return None
    try:
        found = json.loads(raw)
        shown = [item for item in found["shown"] if isinstance(item, str)]
        rows = {engine: [_row(item) for item in items] for engine, items in found.get("rows", {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # an unreadable memory is a page to work out again
    return PageMemory(shown=shown, rows=rows)


def _compact(row: Row, shown: bool) -> list:
    if shown:
        return [row.url]
    return [row.url, row.position, row.title, row.snippet, row.date.isoformat() if row.date else None, row.source]


def _row(item: list | dict) -> Row:
    if isinstance(item, dict):  # written by an earlier version, rows whole
        return row_from_json(item)
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise TypeError("not a row of a page's memory")
    if len(item) == 1:  # a row a page showed: its URL alone (its place is its index in the list)
        return Row(title="", url=item[0], snippet="", position=0)
    url, position, title, snippet, when, source = item
    return Row(title=title, url=url, snippet=snippet, position=int(position),
               date=date.fromisoformat(when) if when else None, source=source)


async def remember(state: State, key: str, page: int, shown: Sequence[str], rows: Mapping[str, Sequence[Row]],
                   ttl_s: float, shown_before: Collection[str] = ()) -> None:
    """Keep what page `page` showed (`shown`, URL identities) and the rows each engine kept for it: the text
    of those not shown on it or before it (`shown_before`) only."""
    left_out = {*shown, *shown_before}
    data = {"shown": list(shown),
            "rows": {engine: [_compact(row, identity(row.url) in left_out) for row in kept]
                     for engine, kept in rows.items()}}
    await state.cache_put(_slot(key, page), json.dumps(data, ensure_ascii=False, separators=(",", ":")), ttl_s)
