"""Planning one search: the checked request, its operators, the relevance gate and what each engine is asked.

A plan is pure data, made once per search before any engine runs, so every engine of the search sees
the same query text, filters and reference time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Sequence

from engines import ENGINES
from engines.base import Engine, SearchOptions
from engines.script import has_cjk
from plugin.infra.cooldown import Reachability
from plugin.pipeline.operators import Operators, parse_operators
from plugin.pipeline.query import SearchRequest, check_request
from plugin.pipeline.relevance import Gate, build_gate, cjk_length, core_words
from plugin.settings import Settings


@dataclass
class SearchPlan:
    request: SearchRequest
    operators: Operators
    gate: Gate
    lead_region: str  # the region whose engines lead each interleaving round: cjk or global
    now: datetime
    core_query: str | None  # the core-word variant for a long CJK query, when it differs
    ignore_cooldowns: bool = False  # try benched engines anyway (`search --ignore-cooldowns`)
    # The per-engine answer cache: "use" (read and write), "refresh" (write only: --no-cache), "off".
    answer_cache: Literal["use", "refresh", "off"] = "off"
    # This search's evidence on whether the machine is online; decides what connection failures bench.
    network: Reachability = field(default_factory=Reachability, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list)  # for the response: what was asked but cannot be served

    @property
    def category(self) -> str:
        """`web` or `news`: news asks engines for their news vertical, and freshness counts for more."""
        return self.request.category

    @property
    def page(self) -> int:
        return self.request.page


def make_plan(settings: Settings, query: object, *, now: datetime | None = None, **options: object) -> SearchPlan:
    """Check the caller's arguments (raising `SearchError` with a code) and plan the search."""
    request = check_request(query, default_limit=settings.limit, **options)
    now = now or datetime.now()
    operators = parse_operators(request.query, allowed_domains=request.allowed_domains,
                                blocked_domains=request.blocked_domains, time_range=request.time_range, now=now)
    text = operators.text
    core = None
    if settings.core_word_retry and cjk_length(text) >= settings.core_word_min_chars:
        candidate = core_words(text)
        if candidate and candidate != text:
            core = candidate
    warnings = []
    lead_region = "cjk" if has_cjk(text) else "global"
    if request.category == "news":
        warnings.extend(news_coverage(settings, request, lead_region))
    if request.user_location and not request.region:
        warnings.append(f"user_location {request.user_location} has no region in the vocabulary; "
                        + (f"region {settings.region} from the settings applies" if settings.region
                           else "engines use their own defaults"))
    return SearchPlan(request=request, operators=operators, gate=build_gate(text, settings.gate_min_units),
                      lead_region=lead_region, now=now, core_query=core,
                      warnings=warnings)


def chosen_engines(settings: Settings, names: Sequence[str] | None) -> list[Engine]:
    """The engines a search asks: those it names, else the `engines` setting, else every engine."""
    chosen = names or settings.engines or list(ENGINES)
    return [ENGINES[name] for name in chosen if name in ENGINES]


def news_coverage(settings: Settings, request: SearchRequest, lead_region: str) -> list[str]:
    """A news search no enabled engine of the query's region (global, or cjk for a Chinese, Japanese or
    Korean query) can serve says so: in a keyless install only Baidu has a news vertical, so a news
    search in English would otherwise come back from Chinese news, or empty, without a word why."""
    def enabled(engine: Engine) -> bool:
        return not engine.disabled_reason(SearchOptions(api_key=settings.api_key(engine.name),
                                                        base_url=settings.instance_url(engine.name)))

    asked = chosen_engines(settings, request.engines)
    with_news = [e for e in asked if e.facts.news and enabled(e)]
    if any(e.facts.region == lead_region for e in with_news):
        return []
    # In the words of the engine report: the engines asked without a news vertical are each "skipped: no
    # news vertical"; those asked with one ran, but serve another region's queries.
    if with_news:
        names = ", ".join(e.name for e in with_news)
        message = (f"category news: of the engines asked only {names} {'has' if len(with_news) == 1 else 'have'} "
                   f"a news vertical, for {'/'.join(sorted({e.facts.region for e in with_news}))} queries, not "
                   f"{lead_region} ones like this; the others were skipped (no news vertical)")
    else:
        message = (f"category news: none of the engines asked has a news vertical, so each was skipped (no news "
                   f"vertical)")
    in_region = [e for e in ENGINES.values() if e.facts.news and e.facts.region == lead_region]
    if unasked := [e.name for e in in_region if enabled(e) and e not in asked]:
        message += f"; not asked, though {'it has' if len(unasked) == 1 else 'they have'} one: {', '.join(unasked)}"
    if needing := [f"{e.name} ({e.facts.key_env or e.facts.url_env})" for e in in_region if not enabled(e)]:
        message += f"; these have one once their key or URL is set: {', '.join(needing)}"
    return [message]


def engine_options(settings: Settings, engine: Engine, plan: SearchPlan) -> SearchOptions:
    """What this engine is asked for this search (keys and instance URLs included; never logged)."""
    return SearchOptions(
        region=plan.request.region or settings.region,
        time_range=plan.operators.time_range,  # type: ignore[arg-type]
        safesearch=(plan.request.safesearch or settings.safesearch),  # type: ignore[arg-type]
        site=plan.operators.site,
        allowed_domains=plan.operators.allowed_domains,
        blocked_domains=plan.operators.blocked_domains,
        category=plan.category,  # type: ignore[arg-type]
        page=plan.page,
        count=max(10, plan.request.limit),
        api_key=settings.api_key(engine.name),
        base_url=settings.instance_url(engine.name),
        now=plan.now,
    )
