"""When a search answers: the tiers, the soft deadline and the overall deadline.

    primary tier, every engine at once
      ├─ enough in hand: a quorum of the running engines answered and `limit` rows kept ─ grace ─ answer
      ├─ `soft_deadline_ms`: `limit` rows kept ─ answer (quorum or not)
      ├─ quorum answered + grace, or `soft_deadline_ms`, with fewer than `limit` rows kept
      │     ─ start the fallback tier now, primaries still running
      ├─ every primary done and none kept a row (failed, benched, disabled, empty, irrelevant with no
      │     other index agreeing) ─ fallback tier at once
      ├─ every engine done ─ answer
      └─ `deadline_ms`, covering both tiers ─ answer with what is in hand

The search's clock (grace, soft deadline, overall deadline) stands still while an engine it still
waits for is queued for admission: that is our load, not the engines' time. Queue time is reported as
`queue_ms` and bounded by `admission_wait_ms`, so a search answers within `deadline_ms` of engine time
plus at most the wait budget; without a queue (the usual case) within `deadline_ms`.
"Answered" means an engine came back with any outcome (rows, none, a failure); engines that never
send a request (disabled, benched, over budget) do not count towards the quorum either way.

Engines still running when the answer goes out are reported `late` and their partial work is not
shown. They keep running in the background (`Flights`), so their outcome still updates cooldowns and
the answer cache: a long-lived searcher (API, MCP, `serve`) learns from them; `Searcher.close()` (the
CLI's exit) cancels them. A request someone waits for that is queued for the same upstream takes the
slot of the most recent background run (admission.py); one given up after more than `deadline_ms`
without an answer counts as the engine's timeout. An engine still waiting for admission when the
answer goes out is `skipped` (`overloaded`) and withdrawn.

Identical engine runs in flight at once (same upstream, query and options) share one exchange.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Callable, Sequence

from engines.base import Engine
from plugin.infra.admission import OVERLOADED, EngineClock
from plugin.pipeline.canonical import identity
from plugin.pipeline.filters import restore_agreeing
from plugin.pipeline.plan import SearchPlan, engine_options
from plugin.pipeline.runner import EngineRun, EngineRunner
from plugin.settings import Settings

# Outcomes reached without sending a request: such an engine is not one of the search's contenders.
NO_REQUEST = frozenset({"disabled", "cooldown", "skipped"})
# Kept back from `deadline_ms` for ranking and the response, so that the answer is out by the deadline.
ANSWER_RESERVE_S = 0.05


@dataclasses.dataclass(eq=False)
class Flight:
    """One engine run, shared by every search waiting for the same exchange."""

    key: str
    task: asyncio.Task[EngineRun]
    clock: EngineClock
    waiters: int = 0


class Flights:
    """Engine runs in flight in this process (see the module docstring)."""

    def __init__(self) -> None:
        self._by_key: dict[str, Flight] = {}
        self._running: set[asyncio.Task[EngineRun]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def join(self, key: str, start: Callable[[EngineClock], "asyncio.Future[EngineRun] | object"],
             new_clock: Callable[[], EngineClock], on_done: Callable[[Flight], None] | None = None) -> Flight:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # tasks of another (finished) event loop cannot be awaited here
            self._by_key, self._running, self._loop = {}, set(), loop
        flight = self._by_key.get(key)
        if flight is not None:
            flight.clock.to_foreground()  # someone waits for it again
        else:
            clock = new_clock()
            task = loop.create_task(start(clock))  # type: ignore[arg-type]
            flight = self._by_key[key] = Flight(key, task, clock)
            self._running.add(task)
            task.add_done_callback(lambda done, f=flight: self._finished(f))
            if on_done is not None:
                task.add_done_callback(lambda done, f=flight: on_done(f))
        flight.waiters += 1
        return flight

    def _finished(self, flight: Flight) -> None:
        self._running.discard(flight.task)
        if self._by_key.get(flight.key) is flight:
            del self._by_key[flight.key]

    def leave(self, flight: Flight) -> None:
        """This search no longer waits for `flight`. Nobody else does either: an exchange under way goes
        on in the background; a request still queued for admission is withdrawn."""
        flight.waiters -= 1
        if flight.waiters > 0 or flight.task.done():
            return
        if flight.clock.queued or not flight.clock.admitted:
            flight.task.cancel()
            if self._by_key.get(flight.key) is flight:
                del self._by_key[flight.key]
        else:
            flight.clock.to_background()

    def keep(self, task: asyncio.Task) -> None:
        """Hold a follow-up task (a cooldown being recorded) like a run: drained and cancelled with them."""
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    @property
    def running(self) -> int:
        return len(self._running)

    async def drain(self) -> None:
        """Wait for every run in the background to finish (tests, benchmarks)."""
        while self._running:
            await asyncio.wait(list(self._running))

    async def close(self) -> None:
        """Cancel every run still going and wait until they have stopped."""
        tasks = [task for task in self._running if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._by_key.clear()
        self._running.clear()


def flight_key(settings: Settings, engine: Engine, tier: str, plan: SearchPlan) -> str:
    """What decides an engine run's outcome: its upstream and every input but the caller's limit
    (beyond the rows asked for) and the second of the clock."""
    options = dataclasses.replace(engine_options(settings, engine, plan), api_key=None, now=None)
    request = dataclasses.replace(plan.request, limit=0, engines=None)
    shared = dataclasses.replace(plan, request=request, now=plan.now.replace(second=0, microsecond=0))
    return repr((settings.upstream(engine.name), engine.name, tier, options, shared))


@dataclasses.dataclass(eq=False)
class _Slot:
    engine: Engine
    tier: str
    flight: Flight | None = None
    run: EngineRun | None = None


class Tiers:
    """Runs one search's engines, tier by tier, and decides when it answers."""

    def __init__(self, settings: Settings, runner: EngineRunner, flights: Flights):
        self.settings = settings
        self.runner = runner
        self.flights = flights

    def _start(self, slot: _Slot, plan: SearchPlan) -> Flight:
        engine, tier = slot.engine, slot.tier
        slot.flight = self.flights.join(flight_key(self.settings, engine, tier, plan),
                                        lambda clock: self.runner.run(engine, tier, plan, clock),
                                        self.runner.clock, lambda flight: self._given_up(flight, engine))
        return slot.flight

    def _given_up(self, flight: Flight, engine: Engine) -> None:
        """A run nobody waited for, cancelled to free its slot, that had been out longer than any search
        waits (`deadline_ms`): a timeout for the engine's cooldown, as its own deadline would have been."""
        clock = flight.clock
        if not (flight.task.cancelled() and clock.preempted and clock.engine_s * 1000 >= self.settings.deadline_ms):
            return
        detail = f"no answer within {clock.engine_ms()} ms (its slot went to a search that waited)"
        self.flights.keep(asyncio.get_running_loop().create_task(
            self.runner.cooldowns.failure(self.settings.upstream(engine.name), "timeout", None, detail)))

    async def run(self, plan: SearchPlan, primary: Sequence[tuple[Engine, str]],
                  fallback: Sequence[tuple[Engine, str]]) -> list[EngineRun]:
        """Every engine's run for this search: primary first, fallback when the primaries will not deliver."""
        s = self.settings
        loop = asyncio.get_running_loop()
        limit = plan.request.limit
        grace, soft = s.grace_ms / 1000, s.soft_deadline_ms / 1000
        hard = max(0.0, s.deadline_ms / 1000 - ANSWER_RESERVE_S)
        first_slots = [_Slot(e, t) for e, t in primary]
        second_slots = [_Slot(e, t) for e, t in fallback]
        started: list[_Slot] = []
        kept: set[str] = set()
        primary_kept = False  # some primary engine kept a row (or had its list restored by agreement)
        # The search's own clock: it stands still while an engine the search still waits for is queued
        # for admission (our load, not the engines' time), so no deadline or grace is spent on it.
        clock, last, paused = 0.0, loop.time(), False
        quorum_at: float | None = None  # search clock when a quorum of the contenders had answered
        enough_at: float | None = None  # ... and `limit` rows were kept
        fallback_started = not second_slots
        wake: asyncio.Future[None] = loop.create_future()

        def poke() -> None:
            if not wake.done():
                wake.set_result(None)

        def launch(slots: list[_Slot]) -> None:
            for slot in slots:
                self._start(slot, plan).clock.watch(poke)
                started.append(slot)

        try:
            launch(first_slots)
            while True:
                now = loop.time()
                if not paused:
                    clock += now - last
                last = now
                arrived = False
                for slot in started:
                    if slot.run is None and slot.flight is not None and slot.flight.task.done():
                        arrived = True
                        if slot.flight.task.cancelled():  # cannot happen while we wait for it; be safe
                            slot.run = EngineRun(slot.engine, slot.tier, "skipped", detail=OVERLOADED)
                            continue
                        slot.run = dataclasses.replace(slot.flight.task.result())
                if arrived:
                    done = [sl for sl in started if sl.run is not None]
                    runs = [sl.run for sl in done]
                    if any(run.status == "irrelevant" for run in runs):
                        # Lists the gate dropped count as kept once another index agrees with them (the
                        # rule the answer applies), so a misspelt query does not start the fallback.
                        runs = restore_agreeing(runs, plan)
                    kept = {k for run in runs for k in (identity(row.url) for row in run.kept) if k}
                    primary_kept = any(run.kept for sl, run in zip(done, runs) if sl in first_slots)
                contenders = [sl for sl in started if sl.run is None or sl.run.status not in NO_REQUEST]
                answered = sum(1 for sl in contenders if sl.run is not None)
                if quorum_at is None and contenders and answered >= math.ceil(s.quorum * len(contenders)):
                    quorum_at = clock
                if enough_at is None and quorum_at is not None and len(kept) >= limit:
                    enough_at = clock
                short = min(soft, quorum_at + grace if quorum_at is not None else math.inf)

                primaries_done = all(sl.run is not None for sl in first_slots)
                if not fallback_started and (
                        (primaries_done and not primary_kept)
                        or (clock >= short and len(kept) < limit and not primaries_done)):
                    fallback_started = True
                    launch(second_slots)
                    continue
                pending = [sl for sl in started if sl.run is None and sl.flight is not None]
                if not pending or clock >= hard:
                    break
                if enough_at is not None and clock >= enough_at + grace:
                    break
                if clock >= soft and len(kept) >= limit:
                    break
                paused = any(sl.flight.clock.queued for sl in pending)  # type: ignore[union-attr]
                targets = [t for t in (hard, soft, short, enough_at + grace if enough_at is not None else math.inf)
                           if clock < t < math.inf]
                timeout = None if paused or not targets else min(targets) - clock
                await asyncio.wait({*(sl.flight.task for sl in pending), wake},  # type: ignore[union-attr]
                                   timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if wake.done():
                    wake = loop.create_future()
            return [self._outcome(slot, plan) for slot in first_slots + second_slots]
        finally:
            for slot in started:
                if slot.flight is not None:
                    slot.flight.clock.unwatch(poke)
                    self.flights.leave(slot.flight)

    def _outcome(self, slot: _Slot, plan: SearchPlan) -> EngineRun:
        if slot.run is not None:
            return slot.run
        if slot.flight is None:  # not needed; a disabled engine still says so (runner.not_needed)
            return self.runner.not_needed(slot.engine, slot.tier, plan)
        clock = slot.flight.clock
        if clock.queued:
            return EngineRun(slot.engine, slot.tier, "skipped", detail=OVERLOADED, queue_ms=clock.queue_ms())
        return EngineRun(slot.engine, slot.tier, "late", latency_ms=clock.engine_ms(), queue_ms=clock.queue_ms(),
                         detail=f"no answer after {clock.engine_ms()} ms when the search answered")
