"""More results: page n of a query asks every engine for its page n, and never shows a URL that pages
1..n-1 of the same query showed.

What each page showed is kept in the state store (the embedded SQLite file by default, or Redis), so a
harness that spawns one process per call gets page 2 right after page 1 ran in another process. The
memory is keyed by everything that decides the answer except the page and the limit; a page that was
never asked (or whose memory expired) is worked out by running it, which also remembers it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

from plugin.infra.state import State
from plugin.pipeline.plan import SearchPlan
from plugin.settings import Settings


def query_key(settings: Settings, plan: SearchPlan, engine_names: Sequence[str]) -> str:
    """The identity of "the same query" across its pages."""
    request = plan.request
    identity = {
        "q": " ".join(request.query.casefold().split()),
        "engines": sorted(settings.upstream(name) for name in engine_names),
        "region": request.region or settings.region, "time": plan.operators.time_range,
        "safe": request.safesearch or settings.safesearch, "category": request.category,
        "allowed": list(plan.operators.allowed_domains), "blocked": list(plan.operators.blocked_domains),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _slot(key: str, page: int) -> str:
    return f"pages:{key}:{page}"


async def shown_on(state: State, key: str, page: int) -> list[str] | None:
    """URL identities page `page` of this query showed, or None when it is not remembered."""
    raw = await state.cache_get(_slot(key, page))
    if raw is None:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return [item for item in found if isinstance(item, str)] if isinstance(found, list) else None


async def remember(state: State, key: str, page: int, identities: Sequence[str], ttl_s: float) -> None:
    if ttl_s > 0:
        await state.cache_put(_slot(key, page), json.dumps(list(identities)), ttl_s)
