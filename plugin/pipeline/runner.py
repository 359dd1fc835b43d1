"""Running one engine for one search: may it run, one exchange (with the engine's follow-ups), the
verdict on its page, and what the outcome does to its cooldown.

Policy lives here, I/O in the transport, parsing in the engine module:
disabled? ─ cooling down? ─ budget? ─ build ─ transport ─ parse ─ (follow-ups) ─ judge
─ (long CJK query, nothing kept: one core-word retry) ─ cooldown on failure, cleared on success.

The engine's deadline (`timeout_ms`) is its own time, kept by an `EngineClock`: it runs only while a
request is out, not while the request waits for admission (queue time, reported apart) nor while we parse.

A failure's cooldown is measured from when its request started (in-flight failures of one episode do
not escalate, plugin.infra.cooldown), and a connection failure waits for the search's verdict on
whether the machine is offline before it benches anything (`conclude`). A proxy of ours that cannot be
connected to never benches an engine.
"""

from __future__ import annotations

import asyncio
import functools
import math
from dataclasses import dataclass, field

from engines.base import Engine, Parsed, Row, SearchOptions
from plugin.infra.admission import OVERLOADED, EngineClock
from plugin.infra.cooldown import OFFLINE_DETAIL, OFFLINE_WARNING, Cooldowns
from plugin.infra.logs import get_logger
from plugin.infra.state import State
from plugin.infra.secrets import redact
from plugin.infra.transport import Transport, TransportError
from plugin.models import ANSWERED_STATUSES, FAILURE_STATUSES, EngineReport
from plugin.pipeline import journal
from plugin.pipeline.answers import Answer, AnswerCache
from plugin.pipeline.filters import judge
from plugin.pipeline.plan import SearchPlan, engine_options
from plugin.settings import Settings

log = get_logger("metasearch.runner")

# Requests an engine may chain after its first (Startpage: home page for a token, then the search).
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
    queue_ms: int | None = None
    retry_after: float | None = None
    unreachable: bool = False  # failed to connect at all (DNS, refused, no route)
    proxy_down: str | None = None  # our proxy (masked URL) could not be connected to: never the engine's fault
    cached: bool = False  # the answer came from the answer cache
    ours: bool = False  # our failure (a parser crash, a bug): never benches the engine

    def report(self) -> EngineReport:
        return EngineReport(name=self.engine.name, tier=self.tier, status=self.status,  # type: ignore[arg-type]
                            latency_ms=self.latency_ms, queue_ms=self.queue_ms, rows=self.rows,
                            kept=len(self.kept), detail=self.detail, cached=self.cached)


class EngineRunner:
    """Runs engines for searches; shares the transport, the state store and the cooldown policy."""

    def __init__(self, settings: Settings, transport: Transport, state: State, cooldowns: Cooldowns,
                 secrets: list[str]):
        self.settings = settings
        self.transport = transport
        self.state = state
        self.cooldowns = cooldowns
        self.secrets = secrets
        self.answers = AnswerCache(settings, state)

    def clock(self) -> EngineClock:
        return EngineClock(self.settings.timeout_ms / 1000, self.settings.admission_wait_ms / 1000)

    async def exchange(self, engine: Engine, query: str, options: SearchOptions, clock: EngineClock) -> Parsed:
        request = engine.build(query, options)
        # Cookies set during this exchange go to its follow-ups, and nowhere else.
        cookies: dict[str, str] = {}
        response = await self.transport.fetch(request, engine.name, clock, cookies=cookies)
        journal.exchange(engine.name, request, response)
        parsed = engine.parse(response, query, options)
        steps = 0
        while parsed.follow_up is not None and steps < MAX_FOLLOW_UPS:
            steps += 1
            response = await self.transport.fetch(parsed.follow_up, engine.name, clock, cookies=cookies)
            journal.exchange(engine.name, parsed.follow_up, response)
            parsed = engine.parse(response, query, options)
        return parsed

    def verdict(self, engine: Engine, tier: str, parsed: Parsed, plan: SearchPlan) -> EngineRun:
        status, kept, detail = judge(engine, parsed, plan)
        if parsed.failure is not None:  # the parser crashed: our bug, logged where it happened
            log.error("%s: %s\n%s", engine.name, parsed.detail, redact(parsed.failure, self.secrets))
        return EngineRun(engine, tier, status, rows=len(parsed.rows), kept=kept, all_rows=list(parsed.rows),
                         detail=detail, retry_after=parsed.retry_after, ours=parsed.failure is not None)

    def retried_verdict(self, engine: Engine, tier: str, answer: Answer, plan: SearchPlan) -> EngineRun:
        run = self.verdict(engine, tier, answer.parsed, plan)
        run.detail = f"retried with core words {answer.core_query!r}" + (f"; {run.detail}" if run.detail else "")
        return run

    def from_cache(self, engine: Engine, tier: str, answer: Answer, plan: SearchPlan) -> EngineRun:
        run = (self.retried_verdict(engine, tier, answer, plan) if answer.core_query
               else self.verdict(engine, tier, answer.parsed, plan))
        run.cached = True
        return run

    def not_needed(self, engine: Engine, tier: str, plan: SearchPlan) -> EngineRun:
        """A fallback engine left out because the primary tier answered; a disabled one still says why."""
        reason = engine.disabled_reason(engine_options(self.settings, engine, plan))
        return EngineRun(engine, tier, "disabled", detail=reason) if reason else \
            EngineRun(engine, tier, "skipped", detail="primary tier answered")

    async def run(self, engine: Engine, tier: str, plan: SearchPlan, clock: EngineClock | None = None) -> EngineRun:
        options = engine_options(self.settings, engine, plan)
        reason = engine.disabled_reason(options)
        if reason:
            return EngineRun(engine, tier, "disabled", detail=reason)
        if plan.category == "news" and not engine.facts.news:
            return EngineRun(engine, tier, "skipped", detail="no news vertical")
        missing = engine.facts.missing_page(plan.page)
        if missing:  # asking anyway would repeat its page 1 (or waste a request)
            return EngineRun(engine, tier, "skipped", detail=missing)
        upstream = self.settings.upstream(engine.name)
        clock = clock or self.clock()
        # What the store says (a cached answer, a cooldown, the budget) is waited for on our side: queue
        # time, during which the search's clock stands still, so a slow store never makes an engine late
        # (and the store bounds each read: a slow one is a miss).
        async with clock.store_wait():
            if plan.answer_cache == "use":  # a fresh answer of this engine: no request at all
                answer = await self.answers.get(engine, plan.operators.text, options)
                if answer is not None:
                    return self.from_cache(engine, tier, answer, plan)
            entry = None if plan.ignore_cooldowns else await self.cooldowns.active(upstream)
            if entry is not None:
                left = max(0, entry.until - self.cooldowns.clock())
                return EngineRun(engine, tier, "cooldown", detail=f"cooling down for {left:.0f}s more after "
                                                                  f"{entry.status} (failure {entry.failures})")
            # Budgets spare the engines' own servers; a mirror, proxy or stand-in behind an endpoint override
            # has a budget only when one is set for it by its upstream key ("bing@http://host:port").
            budget = self.settings.budget_per_minute.get(upstream)
            if budget and not await self.state.spend(upstream, budget):
                return EngineRun(engine, tier, "skipped", detail=f"request budget of {budget} searches/minute "
                                                                 f"used up ({self.state.backend} store)")
        sent_at = self.cooldowns.clock()  # on the policy's clock: which failure episode this request is in
        run = EngineRun(engine, tier, "error")
        try:
            parsed = await self.exchange(engine, plan.operators.text, options, clock)
            answer = Answer(parsed)
            run = self.verdict(engine, tier, parsed, plan)
            if plan.core_query and not run.kept and parsed.status in ("ok", "empty"):
                answer = Answer(await self.exchange(engine, plan.core_query, options, clock), plan.core_query)
                run = self.retried_verdict(engine, tier, answer, plan)
            if plan.answer_cache != "off" and self.answers.enabled:
                await self.answers.put(engine, plan.operators.text, options, answer)  # failures are not kept
        except TransportError as exc:
            run = EngineRun(engine, tier, exc.kind, detail=exc.detail, proxy_down=exc.proxy,
                            unreachable=exc.reason == "unreachable" and exc.proxy is None)
            if exc.kind == "skipped" and exc.detail == OVERLOADED:  # never asked: our queue, not the engine
                run.status = "queued"
                run.detail = (f"not asked: not admitted within admission_wait_ms "
                              f"({self.settings.admission_wait_ms} ms; {OVERLOADED}: our load, not the engine's)")
        except (asyncio.TimeoutError, TimeoutError):
            run = EngineRun(engine, tier, "timeout", detail=f"no complete answer within {self.settings.timeout_ms} ms")
        except Exception as exc:  # a bug of ours must not fail the search
            log.exception("engine %s failed", engine.name)
            run = EngineRun(engine, tier, "error", detail=f"internal error: {type(exc).__name__}: {exc}", ours=True)
        run.latency_ms, run.queue_ms = clock.engine_ms(), clock.queue_ms()
        # What the engine could not do as asked (a region it lacks, no safe-search switch, ...) is said,
        # never silently swapped for its default.
        notes = engine.ignored_options(options)
        if notes:
            run.detail = "; ".join(([run.detail] if run.detail else []) + notes)
        # Redact before cutting, so a key split by the cut cannot leak half of itself.
        run.detail = redact(run.detail, self.secrets)[:300]
        if not (run.unreachable or run.proxy_down) and run.status not in ("timeout", "skipped", "queued"):
            await plan.network.reached_server()  # something answered: connection failures are the engines'
        if run.ours or run.proxy_down:
            pass  # what failed was ours (a parser crash, our proxy down): benching the engine would not fix it
        elif run.status in FAILURE_STATUSES:
            record = functools.partial(self.cooldowns.failure, upstream, run.status, run.retry_after, run.detail,
                                       started=sent_at)
            if not (run.unreachable and plan.network.hold(engine.name, record)):
                run.detail = self._with_window(run.detail, await record())
        elif run.status not in ("skipped", "queued"):  # not admitted says nothing about the engine
            await self.cooldowns.success(upstream)
        return run

    def _with_window(self, detail: str, entry) -> str:
        left = entry.until - self.cooldowns.clock()
        if left < 0.5:  # a zero window (e.g. cooldown_timeout_s=0) benches nothing: say nothing of one
            return detail
        # Counted down as a timer is (rounded up): a 30 s window opened when the request went out still
        # reads 30 s when its answer is reported a moment later.
        return (detail + "; " if detail else "") + f"cooling down {math.ceil(left)}s"

    async def conclude(self, plan: SearchPlan, runs: list[EngineRun]) -> list[str]:
        """End of the search's own engine runs, and the warnings to show for the network. Offline (every
        engine tried, one or many, failed to connect, directly or to our proxy, and none connected) drops
        the held connection failures unbenched; otherwise the held failures bench their engines now (and
        later failures at once). A proxy that could not be connected to is named, and benches nothing."""
        network = plan.network
        network.concluded = True
        tried = [run for run in runs
                 if run.status in FAILURE_STATUSES or run.status in ANSWERED_STATUSES or run.status == "late"]
        warnings = proxy_warnings(tried)
        if (not network.reached and any(run.unreachable for run in tried)
                and all(run.unreachable or run.proxy_down for run in tried)):
            network.held.clear()
            for run in tried:
                if run.unreachable:
                    run.detail = f"{OFFLINE_DETAIL} ({run.detail})" if run.detail else OFFLINE_DETAIL
            return [OFFLINE_WARNING, *warnings]
        await network.flush()
        for run in runs:  # held failures benched since: say so in their reports
            entry = network.benched.get(run.engine.name)
            if run.unreachable and entry is not None and "cooling down" not in run.detail:
                run.detail = self._with_window(run.detail, entry)
        return warnings


def proxy_warnings(runs: list[EngineRun]) -> list[str]:
    """One warning per proxy that could not be connected to, naming the engines that went through it."""
    engines: dict[str, list[str]] = {}
    for run in runs:
        if run.proxy_down:
            engines.setdefault(run.proxy_down, []).append(run.engine.name)
    return [f"proxy unreachable: {proxy} could not be connected to ({', '.join(names)}); no engine was benched "
            f"for it" for proxy, names in engines.items()]
