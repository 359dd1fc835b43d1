"""The answer cache, per engine: an engine's parsed rows for (upstream, query, options), kept for
`cache_ttl_s` in the state store.

A search asks only the engines without a fresh answer, so one failing or benched engine no longer keeps
every other engine's answer out of the cache (a response-level cache stored nothing while any primary
was failing, which in real use is most of the time). Failures are never cached. What runs is decided per
search (an engine enabled since, e.g. after `EXA_API_KEY` is set, has no cached answer and runs), and the
rows are judged again by this search's filters and gate. Each engine report says whether its answer came
from the cache (`cached`); the response is `cached` only when every engine answer did.

The key covers everything that decides an engine's answer: the upstream (the same engine behind another
endpoint may answer differently), the engine, the normalised query text and every option the engine is
asked for (region, safe search, site, time range, domain lists, category, page, row count, instance
URL), API keys excepted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import date
from typing import Sequence

from engines.base import Engine, Parsed, Row, SearchOptions
from plugin.infra.state import State
from plugin.pipeline.plan import SearchPlan
from plugin.settings import Settings

# Parse outcomes worth keeping: the engine answered. Anything else is a failure and is asked again.
CACHEABLE = frozenset({"ok", "empty"})
_ROW_FIELDS = tuple(f.name for f in dataclasses.fields(Row))


def query_identity(settings: Settings, plan: SearchPlan, engine_names: Sequence[str]) -> dict:
    """What makes two searches "the same query": the normalised text, the engines by upstream, and every
    option but the page and the limit (pages.py keeps a query's pages under this identity)."""
    request = plan.request
    return {
        "q": " ".join(request.query.casefold().split()),
        "engines": sorted(settings.upstream(name) for name in engine_names),
        "region": request.region or settings.region,
        "time": plan.operators.time_range, "site": plan.operators.site,
        "safe": request.safesearch or settings.safesearch,
        "allowed": list(plan.operators.allowed_domains), "blocked": list(plan.operators.blocked_domains),
        "category": request.category,
    }


def digest(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def cache_key(settings: Settings, plan: SearchPlan, engine_names: Sequence[str]) -> str:
    """One search's identity (identical searches in flight share one execution): the query's identity,
    the limit and the page."""
    request = plan.request
    return digest({**query_identity(settings, plan, engine_names), "limit": request.limit, "page": request.page})


def answer_key(settings: Settings, engine: Engine, query: str, options: SearchOptions) -> str:
    asked = dataclasses.replace(options, api_key=None, now=None)  # a key is no part of the answer
    identity = {
        "upstream": settings.upstream(engine.name), "engine": engine.name,
        "q": " ".join(query.casefold().split()),
        "options": {name: value for name, value in dataclasses.asdict(asked).items()},
    }
    return "answer:" + hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Answer:
    """An engine's final parsed page for a query, and the core-word variant that produced it, if any."""

    parsed: Parsed
    core_query: str | None = None


def row_to_json(row: Row) -> dict:
    data = {name: getattr(row, name) for name in _ROW_FIELDS}
    if isinstance(data.get("date"), date):
        data["date"] = data["date"].isoformat()
    return data


def row_from_json(data: dict) -> Row:
    fields = {name: data[name] for name in _ROW_FIELDS if name in data}
    if fields.get("date"):
        fields["date"] = date.fromisoformat(fields["date"])
    return Row(**fields)


def encode(answer: Answer) -> str:
    parsed = answer.parsed
    return json.dumps({"status": parsed.status, "detail": parsed.detail, "correction": parsed.correction,
                       "rows": [row_to_json(row) for row in parsed.rows], "core_query": answer.core_query},
                      ensure_ascii=False)


def decode(raw: str) -> Answer | None:
    try:
        data = json.loads(raw)
        parsed = Parsed(data["status"], rows=tuple(row_from_json(row) for row in data["rows"]),
                        detail=data.get("detail", ""), correction=data.get("correction"))
        return Answer(parsed, data.get("core_query"))
    except (ValueError, KeyError, TypeError):  # written by another version: not an answer
        return None


class AnswerCache:
    def __init__(self, settings: Settings, state: State):
        self.settings = settings
        self.state = state

    @property
    def enabled(self) -> bool:
        return self.settings.cache_ttl_s > 0

    async def get(self, engine: Engine, query: str, options: SearchOptions) -> Answer | None:
        raw = await self.state.cache_get(answer_key(self.settings, engine, query, options))
        return decode(raw) if raw is not None else None

    async def put(self, engine: Engine, query: str, options: SearchOptions, answer: Answer) -> None:
        if answer.parsed.status not in CACHEABLE or answer.parsed.follow_up is not None:
            return
        await self.state.cache_put(answer_key(self.settings, engine, query, options), encode(answer),
                                   self.settings.cache_ttl_s)
