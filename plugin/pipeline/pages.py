"""More results: page n of a query asks every engine for its page n, and never shows a URL that pages
1..n-1 of the same query showed.

Page n ranks each engine's rows of pages 1..n together (earlier pages' rows first, as the engine
ordered them), so a good row that just missed the cut of page 1 leads page 2 instead of being lost
behind the engines' second pages.

What each page showed is kept in the state store (the embedded SQLite file by default, or Redis), so a
harness that spawns one process per call gets page 2 right after page 1 ran in another process. The
memory is keyed by everything that decides the answer except the page and the limit; a page that was
never asked (or whose memory expired) is worked out by running it, which also remembers it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from engines.base import Row
from plugin.infra.state import State
from plugin.pipeline.answers import digest, query_identity, row_from_json, row_to_json
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
        rows = {engine: [row_from_json(item) for item in items] for engine, items in found.get("rows", {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # an unreadable memory is a page to work out again
    return PageMemory(shown=shown, rows=rows)


async def remember(state: State, key: str, page: int, shown: Sequence[str],
                   rows: Mapping[str, Sequence[Row]], ttl_s: float) -> None:
    data = {"shown": list(shown), "rows": {engine: [row_to_json(r) for r in kept] for engine, kept in rows.items()}}
    await state.cache_put(_slot(key, page), json.dumps(data, ensure_ascii=False), ttl_s)
