"""The search pipeline, end to end.

    query ─ check ─ operators ─ plan ─┬─ primary tier, concurrently ──────────────────────────┐
                                      │   per engine (runner.py): cooldown? ─ build ─ transport │
                                      │   ─ parse ─ filters and relevance gate (filters.py)     │
                                      │   ─ (long CJK query, nothing kept: one core-word retry) │
                                      └─ primaries will not deliver? ─ fallback tier ───────────┘
                                         (tiers.py: when to answer, soft and overall deadline)
    ─ fuse (fusion.py: weighted interleave + RRF + boosts) ─ cut to limit ─ response (cached: answers.py)

`Searcher` owns what outlives one search (the HTTP session, the state store, cooldowns, engine runs
still going in the background); `search()` / `search_sync()` use a shared default searcher.
Identical searches in flight at once share one execution.
"""

from __future__ import annotations

import atexit
import time
from datetime import datetime
from typing import Sequence

from engines.base import Engine, Row
from plugin.errors import INVALID_PARAMETER, SearchError, checked_arguments, unknown_arguments
from plugin.infra.admission import OVERLOADED
from plugin.infra.cooldown import Cooldowns
from plugin.infra.lifecycle import KeptPerSettings, run_sync
from plugin.infra.logs import register_secrets
from plugin.infra.state import State, collecting_problems, open_state
from plugin.infra.secrets import redact
from plugin.infra.transport import Transport
from plugin.models import ANSWERED_STATUSES, FAILURE_STATUSES, ResultRow, RowExplanation, SearchResponse
from plugin.pipeline.answers import cache_key
from plugin.pipeline.canonical import identity
from plugin.pipeline import journal, pages
from plugin.pipeline.filters import restore_agreeing
from plugin.pipeline.fusion import EngineList, rank
from plugin.pipeline.intent import read_intent
from plugin.pipeline.plan import SearchPlan, chosen_engines, make_plan
from plugin.pipeline.query import REQUEST_OPTIONS
from plugin.infra.singleflight import SingleFlight
from plugin.pipeline.runner import EngineRun, EngineRunner
from plugin.pipeline.tiers import Flights, Tiers
from plugin.pipeline.sanitize import clean_snippet, clean_title, neutralise_template_tokens
from plugin.settings import Settings


class Searcher:
    """Owns what outlives one search (the HTTP session, the state store, cooldowns); `search` runs one."""

    def __init__(self, settings: Settings | None = None, *, transport: Transport | None = None,
                 state: State | None = None, page_transport: Transport | None = None):
        if settings is not None and not isinstance(settings, Settings):  # e.g. a model's `settings` argument
            raise SearchError(INVALID_PARAMETER, f"settings must be a plugin.Settings, not {type(settings).__name__}",
                              parameter="settings")
        self.settings = settings or Settings()
        self.transport = transport or Transport(self.settings)
        # Cooldowns, cache and budgets: the embedded store by default, shared by this user's processes.
        self.state: State = state if state is not None else open_state(self.settings)
        self.secrets = self.settings.secret_values()
        register_secrets(self.secrets)
        self.runner = EngineRunner(self.settings, self.transport, self.state, Cooldowns(self.settings, self.state),
                                   self.secrets)
        # Engine runs in flight, shared by identical searches; late ones finish in the background.
        self.flights = Flights()
        self.tiers = Tiers(self.settings, self.runner, self.flights)
        self._searches: SingleFlight[SearchResponse] = SingleFlight()
        self._reader = None  # plugin.reading.Reader for read=N and web_fetch, made on first use
        self._page_transport = page_transport  # the reads' transport when not the network's (a replay's)

    @property
    def cooldowns(self) -> Cooldowns:
        return self.runner.cooldowns

    @cooldowns.setter
    def cooldowns(self, cooldowns: Cooldowns) -> None:  # tests swap in a policy with a fake clock
        self.runner.cooldowns = cooldowns

    def close_at_exit(self) -> None:
        """Close what outlives the event loop (the embedded store) from outside any loop; the sessions
        close with the loop they were made in."""
        close = getattr(self.state, "close_at_exit", None)
        if close is not None:
            close()

    async def close(self) -> None:
        await self.tiers.close()  # engines still running for answers already given: recorded, cancelled
        await self.transport.close()
        if self._reader is not None:
            await self._reader.close()
        await self.state.close()

    async def __aenter__(self) -> "Searcher":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def plan(self, query: object, *, now: datetime | None = None, **options: object) -> SearchPlan:
        return make_plan(self.settings, query, now=now, **options)

    def selected_engines(self, names: Sequence[str] | None) -> list[Engine]:
        return chosen_engines(self.settings, names)

    def tier_of(self, engine: Engine) -> str:
        return self.settings.tiers.get(engine.name, engine.facts.tier)

    async def run_engine(self, engine: Engine, tier: str, plan: SearchPlan) -> EngineRun:
        return await self.runner.run(engine, tier, plan)

    # ----- the whole search -----
    async def run_tiers(self, plan: SearchPlan) -> list[EngineRun]:
        engines = self.selected_engines(plan.request.engines)
        primary = [(e, self.tier_of(e)) for e in engines if self.tier_of(e) == "primary"]
        fallback = [(e, self.tier_of(e)) for e in engines if self.tier_of(e) != "primary"]
        if not primary:  # the caller chose only fallback engines: run them as the first wave
            primary, fallback = fallback, []
        return restore_agreeing(await self.tiers.run(plan, primary, fallback), plan)

    def rank(self, plan: SearchPlan, runs: Sequence[EngineRun], shown: set[str] = frozenset(),  # type: ignore[assignment]
             earlier: dict[str, list[Row]] | None = None) -> list[ResultRow]:
        """The fused rows cut to the limit. For page n: each engine's rows of earlier pages (`earlier`)
        rank ahead of its rows of this page, and URL identities in `shown` (earlier pages) are left out."""
        earlier = earlier or {}
        lists = []
        for run in runs:
            rows = [*earlier.get(run.engine.name, ()), *run.kept]
            if rows:
                lists.append(EngineList.of(run.engine, rows, self.settings))
        intent = read_intent(plan.request.query, plan.operators, official_sites=self.settings.official_sites,
                             category=plan.category, now=plan.now)
        fused = rank(lists, self.settings, lead_region=plan.lead_region, now=plan.now, intent=intent, gate=plan.gate)
        fused = [f for f in fused if f.key not in shown]
        return [
            ResultRow(title=clean_title(f.title), url=f.url, snippet=clean_snippet(f.snippet), domain=f.domain,
                      engines=f.engines, positions=f.positions, score=round(f.score, 6), date=f.date,
                      source=clean_title(f.source) if f.source else None,
                      explain=RowExplanation(votes={e: round(v, 6) for e, v in f.votes_by.items()},
                                             trust={e: round(t, 6) for e, t in f.trust.items()},
                                             authority=round(f.boosts.get("authority", 0.0), 6),
                                             coverage=round(f.boosts.get("coverage", 0.0), 6),
                                             freshness=round(f.boosts.get("freshness", 0.0), 6))
                      ).with_engine_text(f.content)
            for f in fused[: plan.request.limit]
        ]

    def cache_key(self, plan: SearchPlan) -> str:
        """Identity of a search, shared by identical searches in flight."""
        key = cache_key(self.settings, plan, [e.name for e in self.selected_engines(plan.request.engines)])
        return f"{key}:{plan.answer_cache}" + (":ignore-cooldowns" if plan.ignore_cooldowns else "")

    def query_key(self, plan: SearchPlan) -> str:
        return pages.query_key(self.settings, plan, [e.name for e in self.selected_engines(plan.request.engines)])

    async def shown_before(self, plan: SearchPlan, key: str, query: object, now: datetime | None, cache: bool,
                           options: dict[str, object]) -> tuple[set[str], dict[str, list[Row]]]:
        """URL identities pages 1..n-1 of this query showed, and each engine's rows of those pages; a page
        not remembered is run now (which remembers it), so page 3 asked first in a fresh process is right."""
        shown: set[str] = set()
        earlier: dict[str, list[Row]] = {}
        for page in range(1, plan.page):
            memory = await pages.recalled(self.state, key, page)
            if memory is None:
                response = await self.search(query, now=now, cache=cache, **{**options, "page": page})
                memory = await pages.recalled(self.state, key, page) or pages.PageMemory(
                    shown=[k for k in (identity(row.url) for row in response.results) if k])
            shown.update(memory.shown)
            for engine, rows in memory.rows.items():
                earlier.setdefault(engine, []).extend(rows)
        return shown, earlier

    async def remember_page(self, plan: SearchPlan, key: str, response: SearchResponse,
                            runs: Sequence[EngineRun], shown_before: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        """Keep what this page showed and the rows each engine kept for it (pages.py: compactly)."""
        shown = [k for k in (identity(row.url) for row in response.results) if k]
        rows = {run.engine.name: list(run.kept) for run in runs if run.kept}
        await pages.remember(self.state, key, plan.page, shown, rows, self.settings.page_memory_s, shown_before)

    @checked_arguments
    async def search(self, query: object, *, now: datetime | None = None, cache: bool = True,
                     ignore_cooldowns: bool = False, read: object = 0, passages: object = None,
                     max_tokens: object = None, explain: bool = False, render: object = None,
                     **options: object) -> SearchResponse:
        """One search; `options` are the caller's arguments (limit, engines, region, time_range, site,
        safesearch, allowed_domains, blocked_domains, category, page, user_location), checked in one place (`plugin.pipeline.query.check_request`).
        `ignore_cooldowns` tries benched engines anyway. `read=N` attaches the main text of the top N
        pages (plugin.reading.attach); with `passages=K`, each read row's K passages that best answer the
        query instead of its text. `max_tokens`: the rows a model reads fit this many (estimated) tokens
        (plugin.reading.evidence.pack_search); `omitted` says what was left out. `explain` keeps each
        row's votes and boosts (`explain`). `render` (auto, always, never; default the `render` setting):
        whether read pages that only a browser can show are rendered (plugin.reading.render)."""
        started = time.perf_counter()
        problem = unknown_arguments("search()", options, (*REQUEST_OPTIONS, "now", "cache", "ignore_cooldowns", "read",
                                                               "passages", "max_tokens", "explain", "render"))
        if problem is not None:
            raise problem
        if now is not None and not isinstance(now, datetime):  # a date or a string failed deep in the plan
            raise SearchError(INVALID_PARAMETER, f"now must be a datetime, not {type(now).__name__}", parameter="now")
        for name, value in (("cache", cache), ("ignore_cooldowns", ignore_cooldowns), ("explain", explain)):
            if not isinstance(value, bool):  # cache="false" is true to Python: it would have used the cache
                raise SearchError(INVALID_PARAMETER, f"{name} must be True or False, not {type(value).__name__}",
                                  parameter=name)
        count = self._pages_to_read(read)  # a bad read= is refused before any work
        mode = self._render_mode(render)
        per_row, budget = self._focus(passages, max_tokens)
        with collecting_problems() as problems:  # state-store trouble met by this search, for its warnings
            response = await self._search(query, now, cache, ignore_cooldowns, options, problems)
            response = await self._read_pages(response, count, started, passages=per_row, render=mode)
            if per_row and not count:
                response = response.model_copy(update={"warnings": [
                    *response.warnings, "passages has no effect without read (the pages to take passages from)"]})
            if not explain:
                # Every ranking is explained (identical searches share one); a caller who did not ask gets none.
                response = response.model_copy(update={"results": [row.model_copy(update={"explain": None})
                                                                   for row in response.results]})
            if budget is not None:
                from plugin.reading.evidence import pack_search

                response = pack_search(response, budget)
            return response

    def _focus(self, passages: object, max_tokens: object) -> tuple[int, int | None]:
        """(passages per read row, 0 for the page text; the token budget or None), checked."""
        if passages is None and max_tokens is None:
            return 0, None
        from plugin.reading.evidence import check_focus

        wanted = passages  # 0 is refused as everywhere (check_focus), not taken for "none"
        # A query stands in for the search's own (checked by the search): check_focus then counts passages.
        focus = check_focus("query", wanted, max_tokens, self.settings)
        return (0 if wanted is None else focus.count), focus.max_tokens

    async def _search(self, query: object, now: datetime | None, cache: bool, ignore_cooldowns: bool,
                      options: dict[str, object], problems: list[str]) -> SearchResponse:
        started = time.perf_counter()
        plan = self.plan(query, now=now, **options)
        plan.ignore_cooldowns = ignore_cooldowns
        # Per-engine answers (answers.py): read and written; --no-cache refreshes them; a pinned moment
        # (replay, bench) neither reads nor writes.
        if self.settings.cache_ttl_s > 0 and now is None:
            plan.answer_cache = "use" if cache else "refresh"
        query_key = self.query_key(plan)
        shown, earlier = (await self.shown_before(plan, query_key, query, now, cache, options) if plan.page > 1
                          else (set(), {}))
        key = self.cache_key(plan)
        if now is None:  # identical searches in flight share one execution, each caller its own clock
            shared = await self._searches.run(key, lambda: self._execute(plan, query_key, shown, earlier, problems))
            return shared.model_copy(update={"query": plan.request.query,
                                             "elapsed_ms": int((time.perf_counter() - started) * 1000)})
        return await self._execute(plan, query_key, shown, earlier, problems)

    async def _execute(self, plan: SearchPlan, query_key: str, shown: set[str], earlier: dict[str, list[Row]],
                       problems: list[str]) -> SearchResponse:
        """One search run; `shown`: URL identities of the query's earlier pages, left out; `earlier`: each
        engine's rows of those pages, ranked ahead of this page's."""
        started = time.perf_counter()
        runs = await self.run_tiers(plan)
        offline = await self.runner.conclude(plan, runs)  # every engine unreachable: offline, nobody benched
        journal.engine_runs(plan, runs)  # --verbose: what each engine did, on stderr
        results = self.rank(plan, runs, shown, earlier)
        short = self._short_of_rows(plan, runs, results)
        # The first wave is the primary tier, or the fallback engines when the caller chose only those.
        first_wave = "primary" if any(r.tier == "primary" for r in runs) else "fallback"
        partial = any(r.tier == first_wave and (r.status in FAILURE_STATUSES
                                                or r.status in ("cooldown", "late", "queued")
                                                or (r.status == "skipped" and r.detail == OVERLOADED)) for r in runs)
        response = SearchResponse(
            query=plan.request.query,
            results=results,
            engines=[_sanitised(run.report()) for run in runs],
            partial=partial,
            elapsed_ms=int((time.perf_counter() - started) * 1000),
            recognised=plan.operators.recognised,
            # An upstream's own words may be in a warning or a detail: the one sanitiser, as for rows.
            warnings=[neutralise_template_tokens(w) for w in (*self.settings.warnings, *self.state.warnings,
                                                              *problems, *offline, *plan.warnings, *short)],
            category=plan.category,  # type: ignore[arg-type]
            page=plan.page,
            # Every engine answer from the cache (none asked now); a response without answers is not "cached".
            cached=any(run.cached for run in runs) and all(run.cached for run in runs if run.status in ANSWERED_STATUSES),
        )
        response = self._without_secrets(response)
        await self.remember_page(plan, query_key, response, runs, shown)
        return response

    @staticmethod
    def _short_of_rows(plan: SearchPlan, runs: Sequence[EngineRun], results: Sequence[ResultRow]) -> list[str]:
        """The warning when the answer went out with fewer rows than asked while engines were still out."""
        late = [run.engine.name for run in runs if run.status == "late"]
        if len(results) >= plan.request.limit or not late:
            return []
        return [f"fewer rows than asked were available in time: {len(results)} of {plan.request.limit}; "
                f"still running when the search answered: {', '.join(late)}"]

    # ----- read=N (plugin/reading/attach.py) -----
    def page_reader(self):
        """The page reader sharing this searcher's settings and state store (made on first use)."""
        if self._reader is None:
            from plugin.reading.reader import Reader

            self._reader = Reader(self.settings, state=self.state, transport=self._page_transport)
        return self._reader

    def _render_mode(self, render: object) -> str | None:
        if render is None:
            return None
        from plugin.reading.reader import check_render

        return check_render(render, self.settings)

    def _pages_to_read(self, read: object) -> int:
        if read in (None, 0, False):
            return 0
        from plugin.reading.attach import check_read

        return check_read(read, self.settings)

    async def _read_pages(self, response: SearchResponse, count: int, started: float,
                          passages: int = 0, render: str | None = None) -> SearchResponse:
        """The response with its top `count` rows' text attached, within what is left of the search's
        deadline (plugin.reading.attach.read_window)."""
        if not count or not response.results:
            return response
        from plugin.reading.attach import attach_pages, read_window

        window = read_window(self.settings, time.perf_counter() - started)
        response = await attach_pages(response, count, reader=self.page_reader(), settings=self.settings,
                                      window_s=window, passages=passages, render=render)
        response = response.model_copy(update={"elapsed_ms": int((time.perf_counter() - started) * 1000)})
        return self._without_secrets(response)

    def _without_secrets(self, response: SearchResponse) -> SearchResponse:
        """Belt and braces: no configured key survives into a response, wherever a page echoed it."""
        if not self.secrets:
            return response
        dumped = response.model_dump_json()
        if not any(secret in dumped for secret in self.secrets):
            return response
        return SearchResponse.model_validate_json(redact(dumped, self.secrets))


def _sanitised(report):
    """An engine's report with its detail (an upstream's own words, at times) free of template tokens."""
    detail = neutralise_template_tokens(report.detail) if report.detail else report.detail
    return report if detail == report.detail else report.model_copy(update={"detail": detail})


# ----- module-level API -----
# Long-lived searchers, one per distinct settings, the least recently used last out. A searcher's HTTP
# sessions and Redis client close when the event loop they were made in ends (plugin.infra.lifecycle),
# so `asyncio.run(search(...))` per call leaks nothing; one evicted from here is closed.
_searchers: KeptPerSettings[Searcher] = KeptPerSettings(Searcher, keep=8)


def searcher_for(settings: Settings | None = None) -> Searcher:
    """The long-lived searcher for these settings; None reads the environment again (a key set since
    takes effect), and equal settings, however often rebuilt, share one searcher. One evicted is closed
    (sessions, store) without making the caller wait; outside a loop it never opened a session, and its
    store closes at exit."""
    return _searchers.get(settings if settings is not None else Settings())


# The embedded store's connection of every kept searcher, closed before the interpreter goes.
atexit.register(_searchers.clear)


@checked_arguments
async def search(query: str, *, limit: int | None = None, engines: Sequence[str] | str | None = None,
                 settings: Settings | None = None, region: str | None = None, time_range: str | None = None,
                 site: str | None = None, safesearch: str | None = None, cache: bool = True,
                 allowed_domains: Sequence[str] | str | None = None,
                 blocked_domains: Sequence[str] | str | None = None, category: str | None = None,
                 page: int | None = None, user_location: str | dict | None = None, read: int = 0,
                 ignore_cooldowns: bool = False, passages: int | None = None,
                 max_tokens: int | None = None, explain: bool = False, render: str | None = None) -> SearchResponse:
    """Search the web through many engines; raises `SearchError` (with `.code`) on bad input.

    `allowed_domains` / `blocked_domains` (one or the other): rows only from / never from these
    domains and their subdomains. `category="news"`: the engines' news verticals. `page=2`: the next
    results, never repeating a URL an earlier page of the same query showed. `user_location="DE"` (or
    `{"country": "DE"}`): the region for that country, unless `region` is given. `read=N` attaches
    the main text of the top N results (`content`, or `read_error` saying why not). `ignore_cooldowns`:
    try engines that are cooling down anyway. `passages=K` (with read=N): each read row's K passages that
    best answer the query, with their offsets, instead of its text. `max_tokens`: the answer a model
    reads fits this many estimated tokens (rows in rank order; `omitted` says what was left out).
    `explain=True`: each row carries the votes and boosts behind its score (`explain`). `render` (with
    read=N): auto (default: a page that looks like an app shell is rendered by the installed Chromium),
    always or never; each read row says `rendered` and `may_require_js`."""
    return await searcher_for(settings).search(query, limit=limit, engines=engines, region=region,
                                               time_range=time_range, site=site, safesearch=safesearch,
                                               cache=cache, allowed_domains=allowed_domains,
                                               blocked_domains=blocked_domains, category=category, page=page,
                                               user_location=user_location, read=read,
                                               ignore_cooldowns=ignore_cooldowns, passages=passages,
                                               max_tokens=max_tokens, explain=explain, render=render)


@checked_arguments
def search_sync(query: str, *, limit: int | None = None, engines: Sequence[str] | str | None = None,
                settings: Settings | None = None, region: str | None = None, time_range: str | None = None,
                site: str | None = None, safesearch: str | None = None, cache: bool = True,
                allowed_domains: Sequence[str] | str | None = None,
                blocked_domains: Sequence[str] | str | None = None, category: str | None = None,
                page: int | None = None, user_location: str | dict | None = None, read: int = 0,
                ignore_cooldowns: bool = False, passages: int | None = None, max_tokens: int | None = None,
                explain: bool = False, render: str | None = None) -> SearchResponse:
    """`search` for callers that do not await: plain scripts, and code already inside a running event loop
    (Jupyter, an async agent framework), where the search runs on a worker thread with a loop of its own
    while the caller waits. Cooldowns, cached answers and budgets persist between calls through the state
    store (the embedded SQLite file by default). Takes exactly `search`'s arguments
    (tests/test_bad_input.py holds the two signatures equal)."""
    arguments = dict(limit=limit, engines=engines, region=region, time_range=time_range, site=site,
                     safesearch=safesearch, cache=cache, allowed_domains=allowed_domains,
                     blocked_domains=blocked_domains, category=category, page=page, user_location=user_location,
                     read=read, ignore_cooldowns=ignore_cooldowns, passages=passages, max_tokens=max_tokens,
                     explain=explain, render=render)

    async def run() -> SearchResponse:
        # A fresh searcher per call: its HTTP session belongs to this call's event loop.
        async with Searcher(settings) as searcher:
            return await searcher.search(query, **arguments)

    return run_sync(run)
