"""When a search answers: the tiers, the soft deadline and the overall deadline.

    primary tier, every engine at once
      ├─ enough in hand: a quorum answered and `limit` rows kept ─ grace ─ answer
      ├─ `soft_deadline_ms`: `limit` rows kept ─ answer (quorum or not)
      ├─ `soft_deadline_ms` passed and a quorum answered (+ grace) with fewer than `limit` rows kept
      │     ─ answer with what is in hand (the response says fewer rows than asked came in time)
      ├─ fewer than `limit` rows kept, and every primary done, or a quorum answered + grace, or
      │     `soft_deadline_ms` ─ start the fallback tier now (primaries still running or not)
      ├─ every engine done ─ answer
      └─ `deadline_ms`, covering both tiers ─ answer with what is in hand

The quorum is `quorum` of the engines of the started tiers that sent a request or are benched, and
at most those that sent one: a benched engine would have been asked, and were it the engine that
hangs, the search would have waited for as many healthy answers; benching it must not make the search
answer earlier with fewer engines. "Answered" means an engine came back with any outcome (rows, none,
a failure); engines disabled or skipped (over budget, no news vertical) count neither way.

The search's clock (grace, soft deadline, overall deadline) runs while its engines are queued for
admission (behind other requests to the same upstream): a burst never holds an answer past its
deadlines. Queue time is our load, not the engines' time: it is reported apart (`queue_ms`), never
charged to an engine's own deadline, and an engine still queued when the search answers is withdrawn
and reported `queued` (never asked, no cooldown). The clock stands still only while an engine it
waits for reads the state store (its cooldown, a cached answer, the budget): each read is bounded
(`state_wait_ms`, a slow one is a miss), so the store's time never makes an engine `late`.

The rule is one pure function, `step(state, event)`: the events are engines coming back (`Came`),
engines starting or ending a wait for the state store (`OnStore`) and time passing (`Tick`); the actions are
`Wait` (until a time on the search's clock), `StartFallback` and `Answer`. `Tiers.run` only turns
what happens to the engine runs into events and carries the actions out.

Engines still running when the answer goes out are reported `late` and their partial work is not
shown. They keep running in the background (`Flights`), so their outcome still updates cooldowns and
the answer cache: a long-lived searcher (API, MCP, `serve`) learns from them. `Searcher.close()` (the
CLI's exit) cancels them, first recording each one's time without an answer (plugin.infra.cooldown,
`Cooldowns.unanswered`): exits that leave an engine unanswered, `deadline_ms` of it in all with no answer
between, bench it as a timeout would have. A request someone waits for that is queued for the same
upstream takes the slot of the most recent background run (admission.py); one given up after more than
`deadline_ms` without an answer counts as the engine's timeout. An engine still waiting for admission
when the answer goes out is `queued` and withdrawn.

Identical engine runs in flight at once (same upstream, query and options) share one exchange.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Callable, Sequence

from engines.base import Engine
from plugin.infra.admission import OVERLOADED, EngineClock
from plugin.infra.lifecycle import PerLoop
from plugin.infra.logs import get_logger
from plugin.pipeline.canonical import identity
from plugin.pipeline.filters import restore_agreeing
from plugin.pipeline.plan import SearchPlan, engine_options
from plugin.pipeline.runner import EngineRun, EngineRunner
from plugin.settings import Settings

log = get_logger("metasearch.tiers")
# Kept back from `deadline_ms` for ranking and the response, so that the answer is out by the deadline.
ANSWER_RESERVE_S = 0.05


# ----- when to answer: states, events and the one function deciding -----
# What an engine of the search is, as far as when to answer goes.
WAITING = "waiting"  # in the fallback tier, which has not started
OUT = "out"  # started, no outcome yet
ON_STORE = "on the store"  # started, reading the state store: the search's clock stands still
ANSWERED = "answered"  # came back after sending a request: rows, none, or a failure
BENCHED = "benched"  # cooling down: no request, but it would have been asked
NOT_ASKED = "not asked"  # disabled, skipped (over budget, no news vertical, no such page) or queued
RUNNING = frozenset({OUT, ON_STORE})

# Outcomes reached without sending a request (runner.py), and how each counts for the quorum.
NO_REQUEST = {"cooldown": BENCHED, "disabled": NOT_ASKED, "skipped": NOT_ASKED, "queued": NOT_ASKED}


def phase_of(status: str) -> str:
    """The phase of an engine that came back with `status`."""
    return NO_REQUEST.get(status, ANSWERED)


@dataclasses.dataclass(frozen=True)
class Rules:
    """The settings the decision reads, in seconds of the search's clock."""

    limit: int
    quorum: float
    grace: float
    soft: float
    hard: float  # `deadline_ms` less the answer reserve

    @classmethod
    def of(cls, settings: Settings, limit: int) -> "Rules":
        return cls(limit=limit, quorum=settings.quorum, grace=settings.grace_ms / 1000,
                   soft=settings.soft_deadline_ms / 1000,
                   hard=max(0.0, settings.deadline_ms / 1000 - ANSWER_RESERVE_S))


@dataclasses.dataclass(frozen=True)
class EngineState:
    name: str
    first: bool  # in the first tier (the primaries, or the fallback engines when only those were chosen)
    phase: str


@dataclasses.dataclass(frozen=True)
class TierState:
    """One search's state: its engines' phases, its own clock and what it has seen so far."""

    rules: Rules
    engines: tuple[EngineState, ...]
    clock: float = 0.0  # seconds on the search's clock
    at: float = 0.0  # loop time of the latest event
    kept: int = 0  # distinct rows kept by the engines back so far (lists restored by agreement included)
    quorum_at: float | None = None  # search clock when the quorum it holds now was reached
    enough_at: float | None = None  # ... when it held with `limit` rows kept (the first time)
    answered: str | None = None  # why the search answered, once it has

    @classmethod
    def begin(cls, rules: Rules, first: Sequence[str], second: Sequence[str] = (), at: float = 0.0) -> "TierState":
        """The first tier started at loop time `at`, the second waiting."""
        return cls(rules, tuple([EngineState(name, True, OUT) for name in first]
                                + [EngineState(name, False, WAITING) for name in second]), at=at)

    def count(self, *phases: str) -> int:
        return sum(1 for engine in self.engines if engine.phase in phases)

    @property
    def paused(self) -> bool:
        return any(engine.phase == ON_STORE for engine in self.engines)

    @property
    def needed(self) -> int:
        """Answers that make a quorum (see the module docstring)."""
        contenders = self.count(OUT, ON_STORE, ANSWERED)
        # less a hair: 0.6 of 5 engines is 3, not the 4 that ceil(3.0000000000000004) would make it
        return min(math.ceil(self.rules.quorum * (contenders + self.count(BENCHED)) - 1e-9), contenders)

    @property
    def has_quorum(self) -> bool:
        return self.count(ANSWERED) >= self.needed


@dataclasses.dataclass(frozen=True)
class Tick:
    """Time passed: a timer of the search ran out, or it woke with nothing new."""

    at: float  # loop time


@dataclasses.dataclass(frozen=True)
class Came:
    """Engines came back, each with the phase of its outcome (`phase_of`)."""

    at: float
    outcomes: tuple[tuple[str, str], ...]  # (engine, ANSWERED | BENCHED | NOT_ASKED)
    kept: int  # distinct rows kept by every engine back so far, lists restored by agreement included


@dataclasses.dataclass(frozen=True)
class OnStore:
    """The started engines reading the state store now (the others still running are out)."""

    at: float
    names: frozenset[str]


Event = Tick | Came | OnStore


@dataclasses.dataclass(frozen=True)
class Wait:
    until: float | None  # on the search's clock; None: until something happens (its clock stands still)


@dataclasses.dataclass(frozen=True)
class StartFallback:
    names: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Answer:
    why: str


Action = Wait | StartFallback | Answer

# Why a search answered.
ALL_BACK = "every engine came back"
DEADLINE = "overall deadline"
ENOUGH = "a quorum answered with limit rows kept, and the grace passed"
SOFT_ENOUGH = "soft deadline with limit rows kept"
SOFT_SHORT = "soft deadline passed and a quorum answered (+ grace), with fewer rows than asked"


def step(state: TierState, event: Event) -> tuple[TierState, Action]:
    """The one decision: the search's state after `event`, and what it does next."""
    if state.answered is not None:
        return state, Answer(state.answered)
    # The clock ran since the previous event unless an engine the search waits for was reading the store
    # (queued for admission or not: a burst never holds an answer past its deadlines).
    clock = state.clock if state.paused else state.clock + event.at - state.at
    engines, kept = state.engines, state.kept
    if isinstance(event, Came):
        came = dict(event.outcomes)
        engines = tuple(dataclasses.replace(e, phase=came[e.name]) if e.name in came else e for e in engines)
        kept = event.kept
    elif isinstance(event, OnStore):
        engines = tuple(dataclasses.replace(e, phase=ON_STORE if e.name in event.names else OUT)
                        if e.phase in RUNNING else e for e in engines)
    state = _counted(dataclasses.replace(state, engines=engines, clock=clock, at=event.at, kept=kept))
    rules, clock = state.rules, state.clock

    waiting = tuple(e.name for e in state.engines if e.phase == WAITING)
    if waiting and state.kept < rules.limit:
        short = min(rules.soft, state.quorum_at + rules.grace if state.quorum_at is not None else math.inf)
        primaries_running = any(e.first and e.phase in RUNNING for e in state.engines)
        if not primaries_running or clock >= short:
            engines = tuple(dataclasses.replace(e, phase=OUT) if e.phase == WAITING else e for e in state.engines)
            return _counted(dataclasses.replace(state, engines=engines)), StartFallback(waiting)

    why = None
    if not state.count(OUT, ON_STORE):
        why = ALL_BACK
    elif clock >= rules.hard:
        why = DEADLINE
    elif state.enough_at is not None and clock >= state.enough_at + rules.grace:
        why = ENOUGH
    elif clock >= rules.soft and state.kept >= rules.limit:
        why = SOFT_ENOUGH
    elif clock >= rules.soft and state.quorum_at is not None and clock >= state.quorum_at + rules.grace:
        why = SOFT_SHORT
    if why is not None:
        return dataclasses.replace(state, answered=why), Answer(why)
    if state.paused:
        return state, Wait(None)
    targets = [rules.hard, rules.soft]
    if state.quorum_at is not None:
        # The grace after the quorum: the fallback starts then; past the soft deadline, the answer goes out.
        after = state.quorum_at + rules.grace
        targets.append(after if waiting else max(rules.soft, after))
    if state.enough_at is not None:
        targets.append(state.enough_at + rules.grace)
    return state, Wait(min(t for t in targets if t > clock))


def _counted(state: TierState) -> TierState:
    """`quorum_at` and `enough_at` brought up to date with the engines' phases and the rows kept."""
    quorum = state.has_quorum
    quorum_at = (state.clock if state.quorum_at is None else state.quorum_at) if quorum else None
    enough_at = state.enough_at
    if enough_at is None and quorum and state.kept >= state.rules.limit:
        enough_at = state.clock
    return dataclasses.replace(state, quorum_at=quorum_at, enough_at=enough_at)


# ----- carrying it out -----
@dataclasses.dataclass(eq=False)
class Flight:
    """One engine run, shared by every search waiting for the same exchange."""

    key: str
    task: asyncio.Task[EngineRun]
    clock: EngineClock
    upstream: str  # whose cooldown its outcome updates
    waiters: int = 0


class Flights:
    """Engine runs in flight in this process (see the module docstring)."""

    def __init__(self) -> None:
        # Tasks of another (finished) event loop cannot be awaited here: each loop has its own.
        self._in_loop: PerLoop[tuple[dict[str, Flight], set[asyncio.Task]]] = PerLoop(lambda: ({}, set()))

    @property
    def _by_key(self) -> dict[str, Flight]:
        """This loop's runs by key (empty, and not kept, for a loop that started none)."""
        current = self._in_loop.current()
        return current[0] if current is not None else {}

    @property
    def _running(self) -> set[asyncio.Task]:
        current = self._in_loop.current()
        return current[1] if current is not None else set()

    def join(self, key: str, upstream: str, start: Callable[[EngineClock], "asyncio.Future[EngineRun] | object"],
             new_clock: Callable[[], EngineClock], on_done: Callable[[Flight], None] | None = None) -> Flight:
        by_key, running = self._in_loop.get()
        flight = by_key.get(key)
        if flight is not None:
            flight.clock.to_foreground()  # someone waits for it again
        else:
            clock = new_clock()
            task = asyncio.get_running_loop().create_task(start(clock))  # type: ignore[arg-type]
            flight = by_key[key] = Flight(key, task, clock, upstream)
            running.add(task)
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
        running = self._in_loop.get()[1]
        running.add(task)
        task.add_done_callback(running.discard)

    @property
    def running(self) -> int:
        return len(self._running)

    def unanswered(self) -> list[Flight]:
        """Runs whose request is out and has no answer yet."""
        return [flight for flight in self._by_key.values() if not flight.task.done() and flight.clock.admitted]

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
    """Runs one search's engines, tier by tier, as `step` decides."""

    def __init__(self, settings: Settings, runner: EngineRunner, flights: Flights):
        self.settings = settings
        self.runner = runner
        self.flights = flights

    def _start(self, slot: _Slot, plan: SearchPlan) -> Flight:
        engine, tier = slot.engine, slot.tier
        upstream = self.settings.upstream(engine.name)
        slot.flight = self.flights.join(flight_key(self.settings, engine, tier, plan), upstream,
                                        lambda clock: self.runner.run(engine, tier, plan, clock),
                                        self.runner.clock, self._given_up)
        return slot.flight

    def _given_up(self, flight: Flight) -> None:
        """A run nobody waited for, cancelled to free its slot, that had been out longer than any search
        waits (`deadline_ms`): a timeout for the engine's cooldown, as its own deadline would have been."""
        clock = flight.clock
        if not (flight.task.cancelled() and clock.preempted and clock.engine_s * 1000 >= self.settings.deadline_ms):
            return
        detail = f"no answer within {clock.engine_ms()} ms (its slot went to a search that waited)"
        self.flights.keep(asyncio.get_running_loop().create_task(
            self.runner.cooldowns.failure(flight.upstream, "timeout", None, detail)))

    async def close(self) -> None:
        """Cancel every run still going (the process ends), first recording each engine's time without an
        answer (`Cooldowns.unanswered`): a process that never waits for an engine that hangs still learns."""
        longest: dict[str, int] = {}
        for flight in self.flights.unanswered():
            longest[flight.upstream] = max(longest.get(flight.upstream, 0), flight.clock.engine_ms())
        for upstream, ms in longest.items():
            try:
                await self.runner.cooldowns.unanswered(upstream, ms)
            except Exception as exc:  # the store's trouble must not stop the exit; it is said, not hidden
                log.warning("could not record %s's unanswered request (%s: %s)", upstream, type(exc).__name__, exc)
        await self.flights.close()

    async def run(self, plan: SearchPlan, primary: Sequence[tuple[Engine, str]],
                  fallback: Sequence[tuple[Engine, str]]) -> list[EngineRun]:
        """Every engine's run for this search: primary first, fallback when the primaries will not deliver."""
        loop = asyncio.get_running_loop()
        slots = [_Slot(e, t) for e, t in primary] + [_Slot(e, t) for e, t in fallback]
        by_name = {slot.engine.name: slot for slot in slots}  # one slot per engine (query.check_engines)
        state = TierState.begin(Rules.of(self.settings, plan.request.limit), [e.name for e, _ in primary],
                                [e.name for e, _ in fallback], at=loop.time())
        wake: asyncio.Future[None] = loop.create_future()

        def poke() -> None:  # an engine started or stopped reading the state store
            if not wake.done():
                wake.set_result(None)

        def launch(names: Sequence[str]) -> None:
            for name in names:
                self._start(by_name[name], plan).clock.watch(poke)

        try:
            launch([engine.name for engine, _ in primary])
            events: list[Event] = [Tick(loop.time())]
            while True:
                for event in events:
                    state, action = step(state, event)
                    if isinstance(action, StartFallback):
                        launch(action.names)
                        state, action = step(state, Tick(event.at))
                if isinstance(action, Answer):
                    break
                pending = [slot.flight.task for slot in slots if slot.flight is not None and slot.run is None]
                timeout = None if action.until is None else action.until - state.clock  # type: ignore[union-attr]
                await asyncio.wait({*pending, wake}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if wake.done():
                    wake = loop.create_future()
                events = self._observe(slots, state, plan, loop.time())
            return [self._outcome(slot, plan) for slot in slots]
        finally:
            for slot in slots:
                if slot.flight is not None:
                    slot.flight.clock.unwatch(poke)
                    self.flights.leave(slot.flight)

    @staticmethod
    def _observe(slots: list[_Slot], state: TierState, plan: SearchPlan, at: float) -> list[Event]:
        """What happened to the engine runs since the search last looked, as events."""
        events: list[Event] = []
        arrived = []
        for slot in slots:
            if slot.run is None and slot.flight is not None and slot.flight.task.done():
                arrived.append(slot)
                if slot.flight.task.cancelled():  # the searcher's runs were cancelled (closed) under it
                    slot.run = EngineRun(slot.engine, slot.tier, "skipped", detail=OVERLOADED)
                else:
                    slot.run = dataclasses.replace(slot.flight.task.result())
        if arrived:
            runs = [slot.run for slot in slots if slot.run is not None]
            if any(run.status == "irrelevant" for run in runs):
                # Lists the gate dropped count as kept once another index agrees with them (the rule the
                # answer applies), so a misspelt query does not start the fallback.
                runs = restore_agreeing(runs, plan)
            kept = len({k for run in runs for k in (identity(row.url) for row in run.kept) if k})
            events.append(Came(at, tuple((slot.engine.name, phase_of(slot.run.status))  # type: ignore[union-attr]
                                         for slot in arrived), kept))
        on_store = frozenset(slot.engine.name for slot in slots
                             if slot.run is None and slot.flight is not None and slot.flight.clock.on_store)
        if on_store != {e.name for e in state.engines if e.phase == ON_STORE}:
            events.append(OnStore(at, on_store))
        return events or [Tick(at)]

    def _outcome(self, slot: _Slot, plan: SearchPlan) -> EngineRun:
        if slot.run is not None:
            return slot.run
        if slot.flight is None:  # not needed; a disabled engine still says so (runner.not_needed)
            return self.runner.not_needed(slot.engine, slot.tier, plan)
        clock = slot.flight.clock
        # never asked: its turn had not come (our load) when the search's deadlines did (one queued for a
        # follow-up request was asked: it is late, like one whose answer had not come)
        if clock.queued and not clock.admitted:
            why = ("waiting for the state store" if clock.on_store else
                   "queued for admission") + f" after {clock.queue_ms()} ms"
            if not clock.on_store:
                why += ", behind other requests to it"
            return EngineRun(slot.engine, slot.tier, "queued", queue_ms=clock.queue_ms(),
                             detail=f"not asked: still {why} (our load, not the engine's)")
        return EngineRun(slot.engine, slot.tier, "late", latency_ms=clock.engine_ms(), queue_ms=clock.queue_ms(),
                         detail=f"no answer after {clock.engine_ms()} ms when the search answered")
