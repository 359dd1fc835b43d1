"""The search pipeline, end to end.

    query ─ check ─ operators ─┬─ primary tier, concurrently ─┐   (fallback tier only when
                               │   per engine: cooldown? ─ build ─ transport ─ parse
                               │   ─ canonical URLs ─ operator filters ─ relevance gate
                               │   ─ (long CJK query, nothing kept: one core-word retry)
                               └─ every primary kept nothing? ─ fallback tier, concurrently
    ─ fuse (weighted interleave + RRF + authority/freshness boosts) ─ cut to limit ─ response

`Searcher` owns what outlives one search (the HTTP session, the cooldown
state); `search()` / `search_sync()` use a shared default searcher.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from engines import ENGINES
from engines.base import Engine, Parsed, Row, SearchOptions
from engines.script import has_cjk
from plugin.pipeline.canonical import canonical_url, host_of
from plugin.infra.cooldown import Cooldowns
from plugin.pipeline.fusion import EngineList, diversify, fuse
from plugin.models import FAILURE_STATUSES, EngineReport, ResultRow, SearchResponse
from plugin.pipeline.operators import Operators, is_timely, parse_operators
from plugin.pipeline.query import SearchRequest, check_request
from plugin.pipeline.relevance import Gate, build_gate, cjk_length, core_words
from plugin.pipeline.sanitize import clean_snippet, clean_title
from plugin.infra.logs import get_logger, register_secrets
from plugin.settings import Settings
from plugin.infra.state import State, open_state
from plugin.infra.transport import Transport, TransportError, redact

log = get_logger("metasearch.search")

MAX_FOLLOW_UPS = 2


@dataclass
class EngineRun:
    """What one engine did in one search."""

    engine: Engine
    tier: str
    status: str
    rows: int = 0
    kept: list[Row] = field(default_factory=list)
    all_rows: list[Row] = field(default_factory=list)  # everything parsed, before filters and gate
    detail: str = ""
    latency_ms: int | None = None
    retry_after: float | None = None

    def report(self) -> EngineReport:
        return EngineReport(name=self.engine.name, tier=self.tier, status=self.status,  # type: ignore[arg-type]
                            latency_ms=self.latency_ms, rows=self.rows, kept=len(self.kept), detail=self.detail)


@dataclass
class SearchPlan:
    request: SearchRequest
    operators: Operators
    gate: Gate
    lead_region: str
    now: datetime
    core_query: str | None  # the core-word variant for a long CJK query, when it differs


class Searcher:
    def __init__(self, settings: Settings | None = None, *, transport: Transport | None = None,
                 state: State | None = None):
        self.settings = settings or Settings()
        self.transport = transport or Transport(self.settings)
        # Cooldowns, cache and budgets: the embedded store by default, shared by this user's processes.
        self.state: State = state if state is not None else open_state(self.settings)
        self.cooldowns = Cooldowns(self.settings, self.state)
        self.secrets = self.settings.secret_values()
        register_secrets(self.secrets)

    async def close(self) -> None:
        await self.transport.close()
        await self.state.close()

    async def __aenter__(self) -> "Searcher":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # ----- planning -----
    def plan(self, query: object, *, limit: object = None, engines: object = None, region: object = None,
             time_range: object = None, site: object = None, safesearch: object = None,
             now: datetime | None = None) -> SearchPlan:
        request = check_request(query, limit=limit, default_limit=self.settings.limit, engines=engines,
                                region=region, time_range=time_range, site=site, safesearch=safesearch)
        now = now or datetime.now()
        operators = parse_operators(request.query, site=request.site, time_range=request.time_range, now=now)
        text = operators.text
        core = None
        if self.settings.core_word_retry and cjk_length(text) >= self.settings.core_word_min_chars:
            candidate = core_words(text)
            if candidate and candidate != text:
                core = candidate
        return SearchPlan(request=request, operators=operators, gate=build_gate(text, self.settings.gate_min_units),
                          lead_region="cjk" if has_cjk(text) else "global", now=now, core_query=core)

    def selected_engines(self, names: Sequence[str] | None) -> list[Engine]:
        chosen = names or self.settings.engines or list(ENGINES)
        return [ENGINES[name] for name in chosen if name in ENGINES]

    def tier_of(self, engine: Engine) -> str:
        return self.settings.tiers.get(engine.name, engine.facts.tier)

    def options_for(self, engine: Engine, plan: SearchPlan) -> SearchOptions:
        return SearchOptions(
            region=plan.request.region or self.settings.region,
            time_range=plan.operators.time_range,  # type: ignore[arg-type]
            safesearch=(plan.request.safesearch or self.settings.safesearch),  # type: ignore[arg-type]
            site=plan.operators.site,
            count=max(10, plan.request.limit),
            api_key=self.settings.api_key(engine.name),
            base_url=self.settings.instance_url(engine.name),
            now=plan.now,
        )

    # ----- one engine -----
    async def _exchange(self, engine: Engine, query: str, options: SearchOptions, deadline: float) -> Parsed:
        request = engine.build(query, options)
        parsed = engine.parse(await self.transport.fetch(request, engine.name, deadline), query, options)
        steps = 0
        while parsed.follow_up is not None and steps < MAX_FOLLOW_UPS:
            steps += 1
            response = await self.transport.fetch(parsed.follow_up, engine.name, deadline)
            parsed = engine.parse(response, query, options)
        return parsed

    def _survivors(self, engine: Engine, rows: Sequence[Row], plan: SearchPlan) -> tuple[list[Row], str, str]:
        """Rows that pass URL checks, the operator filters and the relevance gate, with the status an
        engine gets when none do (empty: filtered out; irrelevant: gated out) and why."""
        usable = [row for row in rows if canonical_url(row.url) is not None]
        ops = plan.operators
        filtered = usable
        if ops.site:
            filtered = [r for r in filtered if _on_site(r.url, ops.site)]
        start = ops.window_start(plan.now)
        if start is not None:
            undated_ok = engine.facts.applies_time(ops.time_range) or not ops.range_asked
            filtered = [r for r in filtered if (r.date >= start if r.date else undated_ok)]
        kept = plan.gate.filter(filtered)
        if usable and not filtered:
            return kept, "empty", f"{len(usable)} rows, none inside the {'/'.join(ops.recognised)} filter"
        if filtered and not kept:
            return kept, "irrelevant", f"{len(filtered)} rows, none about the query (relevance gate)"
        return kept, "empty", ""

    async def run_engine(self, engine: Engine, tier: str, plan: SearchPlan) -> EngineRun:
        options = self.options_for(engine, plan)
        reason = engine.disabled_reason(options)
        if reason:
            return EngineRun(engine, tier, "disabled", detail=reason)
        upstream = self.settings.upstream(engine.name)
        entry = await self.cooldowns.active(upstream)
        if entry is not None:
            left = max(0, entry.until - self.cooldowns.clock())
            return EngineRun(engine, tier, "cooldown",
                             detail=f"cooling down for {left:.0f}s more after {entry.status} (failure {entry.failures})")
        # Budgets spare the engines' own servers; a mirror, proxy or stand-in behind an endpoint override
        # has a budget only when one is set for it by its upstream key ("bing@http://host:port").
        budget = self.settings.budget_per_minute.get(upstream)
        if budget and not await self.state.spend(upstream, budget):
            return EngineRun(engine, tier, "skipped",
                             detail=f"request budget of {budget} searches/minute used up ({self.state.backend} store)")
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.settings.timeout_ms / 1000
        run = EngineRun(engine, tier, "error")
        try:
            async with asyncio.timeout_at(deadline):
                parsed = await self._exchange(engine, plan.operators.text, options, deadline)
                run = self._judge(engine, tier, parsed, plan)
                if (plan.core_query and not run.kept and parsed.status in ("ok", "empty")):
                    retry = await self._exchange(engine, plan.core_query, options, deadline)
                    retried = self._judge(engine, tier, retry, plan)
                    retried.detail = f"retried with core words {plan.core_query!r}" + (
                        f"; {retried.detail}" if retried.detail else "")
                    run = retried
        except TransportError as exc:
            run = EngineRun(engine, tier, exc.kind, detail=exc.detail)
        except (asyncio.TimeoutError, TimeoutError):
            run = EngineRun(engine, tier, "timeout",
                            detail=f"no complete answer within {self.settings.timeout_ms} ms")
        except Exception as exc:  # a parser bug must not fail the search
            log.exception("engine %s failed", engine.name)
            run = EngineRun(engine, tier, "error", detail=f"internal error: {type(exc).__name__}: {exc}")
        run.latency_ms = int((loop.time() - started) * 1000)
        # Redact before cutting, so a key split by the cut cannot leak half of itself.
        run.detail = redact(run.detail, self.secrets)[:300]
        if run.status in FAILURE_STATUSES:
            entry = await self.cooldowns.failure(upstream, run.status, run.retry_after, run.detail)
            run.detail = (run.detail + "; " if run.detail else "") + \
                f"cooling down {entry.until - self.cooldowns.clock():.0f}s"
        else:
            await self.cooldowns.success(upstream)
        return run

    def _judge(self, engine: Engine, tier: str, parsed: Parsed, plan: SearchPlan) -> EngineRun:
        if parsed.status != "ok":
            return EngineRun(engine, tier, parsed.status, detail=parsed.detail, retry_after=parsed.retry_after)
        kept, status_if_none, why = self._survivors(engine, parsed.rows, plan)
        status = "ok" if kept else status_if_none
        if not parsed.rows:
            why = why or parsed.detail or "no rows"
        return EngineRun(engine, tier, status, rows=len(parsed.rows), kept=kept, all_rows=list(parsed.rows),
                         detail=why or parsed.detail)

    # ----- the whole search -----
    async def run_tiers(self, plan: SearchPlan) -> list[EngineRun]:
        engines = self.selected_engines(plan.request.engines)
        primary = [e for e in engines if self.tier_of(e) == "primary"]
        fallback = [e for e in engines if self.tier_of(e) != "primary"]
        if not primary:  # the caller chose only fallback engines: run them as the first wave
            primary, fallback = fallback, []
        runs = list(await asyncio.gather(*(self.run_engine(e, self.tier_of(e), plan) for e in primary)))
        if any(run.kept for run in runs):
            runs += [EngineRun(e, self.tier_of(e), "skipped", detail="primary tier answered") for e in fallback]
        elif fallback:
            runs += await asyncio.gather(*(self.run_engine(e, self.tier_of(e), plan) for e in fallback))
        return runs

    def rank(self, plan: SearchPlan, runs: Sequence[EngineRun]) -> list[ResultRow]:
        lists = [
            EngineList(engine=run.engine.name, weight=self.settings.weights.get(run.engine.name,
                                                                                 run.engine.facts.weight),
                       region=run.engine.facts.region, index=run.engine.facts.index, rows=run.kept)
            for run in runs if run.kept
        ]
        fused = diversify(fuse(lists, self.settings, lead_region=plan.lead_region, now=plan.now,
                               timely=is_timely(plan.request.query, plan.operators)),
                          self.settings.max_per_domain)
        return [
            ResultRow(title=clean_title(f.title), url=f.url, snippet=clean_snippet(f.snippet), domain=f.domain,
                      engines=f.engines, positions=f.positions, score=round(f.score, 6), date=f.date)
            for f in fused[: plan.request.limit]
        ]

    def cache_key(self, plan: SearchPlan) -> str:
        import hashlib
        import json

        request = plan.request
        identity = {
            "q": " ".join(plan.request.query.casefold().split()),
            # Engines by upstream: the same engine behind another endpoint may answer differently.
            "engines": sorted(self.settings.upstream(e.name) for e in self.selected_engines(request.engines)),
            "limit": request.limit, "region": request.region or self.settings.region,
            "time": plan.operators.time_range, "site": plan.operators.site,
            "safe": request.safesearch or self.settings.safesearch,
        }
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    async def search(self, query: object, *, limit: object = None, engines: object = None, region: object = None,
                     time_range: object = None, site: object = None, safesearch: object = None,
                     now: datetime | None = None, cache: bool = True) -> SearchResponse:
        started = time.perf_counter()
        plan = self.plan(query, limit=limit, engines=engines, region=region, time_range=time_range, site=site,
                         safesearch=safesearch, now=now)
        use_cache = cache and self.settings.cache_ttl_s > 0 and now is None
        key = self.cache_key(plan) if use_cache else ""
        if use_cache:
            hit = await self.state.cache_get(key)
            if hit is not None:
                response = SearchResponse.model_validate_json(hit)
                return response.model_copy(update={
                    "cached": True, "elapsed_ms": int((time.perf_counter() - started) * 1000),
                    "warnings": list(self.state.warnings)})
        runs = await self.run_tiers(plan)
        results = self.rank(plan, runs)
        # The first wave is the primary tier, or the fallback engines when the caller chose only those.
        first_wave = "primary" if any(r.tier == "primary" for r in runs) else "fallback"
        partial = any(r.tier == first_wave and (r.status in FAILURE_STATUSES or r.status == "cooldown") for r in runs)
        response = SearchResponse(
            query=plan.request.query,
            results=results,
            engines=[run.report() for run in runs],
            partial=partial,
            elapsed_ms=int((time.perf_counter() - started) * 1000),
            recognised=plan.operators.recognised,
            warnings=list(self.state.warnings),
        )
        response = self._without_secrets(response)
        if use_cache and not response.partial:
            await self.state.cache_put(key, response.model_dump_json(), self.settings.cache_ttl_s)
        return response

    def _without_secrets(self, response: SearchResponse) -> SearchResponse:
        """Belt and braces: no configured key survives into a response, wherever a page echoed it."""
        if not self.secrets:
            return response
        dumped = response.model_dump_json()
        if not any(secret in dumped for secret in self.secrets):
            return response
        return SearchResponse.model_validate_json(redact(dumped, self.secrets))


def _on_site(url: str, site: str) -> bool:
    host = host_of(url)
    return host == site or host.endswith("." + site)


# ----- module-level API -----
_searchers: dict[int, tuple[Settings, Searcher]] = {}


def searcher_for(settings: Settings | None = None) -> Searcher:
    """A long-lived searcher per settings object (the default one for None)."""
    key = id(settings)
    found = _searchers.get(key)
    if found is None or found[0] is not settings:
        if len(_searchers) >= 8:
            _searchers.pop(next(iter(_searchers)))
        found = (settings, Searcher(settings))  # type: ignore[arg-type]
        _searchers[key] = found
    return found[1]


async def search(query: str, *, limit: int | None = None, engines: Sequence[str] | str | None = None,
                 settings: Settings | None = None, region: str | None = None, time_range: str | None = None,
                 site: str | None = None, safesearch: str | None = None, cache: bool = True) -> SearchResponse:
    """Search the web through many engines; raises `SearchError` (with `.code`) on bad input."""
    return await searcher_for(settings).search(query, limit=limit, engines=engines, region=region,
                                               time_range=time_range, site=site, safesearch=safesearch,
                                               cache=cache)


def search_sync(query: str, **kwargs) -> SearchResponse:
    """`search` for callers without an event loop. Cooldowns, cache and budgets persist between calls
    through the state store (the embedded SQLite file by default)."""
    settings = kwargs.pop("settings", None)

    async def run() -> SearchResponse:
        # A fresh searcher per call: its HTTP session belongs to this call's event loop.
        async with Searcher(settings) as searcher:
            return await searcher.search(query, **kwargs)

    return asyncio.run(run())
