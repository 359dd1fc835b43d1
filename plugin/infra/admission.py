"""Admission: how much we ask of one upstream at once, decided before the engine's clock starts.

Every request waits here first, per upstream (the engine, or the engine at its endpoint override):
at most `upstream_concurrency` requests out at once, at most `upstream_rps` started per second where
one is set (by the upstream's key, else by the engine's name), and at most `pool_limit` out for the
whole process. The connection pool itself is not limited below these, so an admitted request gets a
connection at once.

`Lane` is the one politeness limiter: "at most N at once, starts at least T apart, first come first
served". Admission keeps one per upstream and one for the process; page reads keep one per host
(plugin.reading.hops). `turn()` takes a slot in each of a list of lanes for one `EngineClock`.

Time spent waiting here is queue time (`queue_ms` in the engine's report): it is our load, not the
engine's slowness, so it is never part of the engine's deadline and never a `timeout` or a cooldown.
It does count against the search's own deadlines (plugin.pipeline.tiers): a search that answers while
one of its engines still waits here withdraws the request, and the engine is `queued` (never asked).
A request not admitted within the wait budget (`admission_wait_ms`) is `Overloaded` (a search's
engine: `queued` too).
A run nobody waits for any more (an engine that was late for every search that asked) keeps its slot
only while no one else waits for one: a queued request takes it over (the background run is cancelled,
the most recent first, so the oldest one per upstream goes on longest and can still time out).

`EngineClock` is one engine run's own time: `timeout_ms` spent only while a request is out. When our
event loop was too busy to notice an answer in time (the timer itself fired late), the engine is
given that time back instead of being blamed for it (at most MAX_STALL_CREDIT times its deadline, so a
hung engine still ends while the loop stays overloaded).
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, Sequence

from plugin.infra.lifecycle import PerLoop
from plugin.settings import Settings

# A timer that fires this much after its due time means the event loop was busy elsewhere.
STALL_S = 0.05
# Stall time given back to one engine run, in multiples of its own deadline.
MAX_STALL_CREDIT = 10

OVERLOADED = "overloaded"


class Overloaded(Exception):
    """Not admitted within the wait budget."""


class EngineClock:
    """One engine run's time. `queue_s`: waiting on our side (admission, the state store); `engine_s`:
    requests out (the deadline's)."""

    def __init__(self, timeout_s: float, wait_s: float):
        loop = asyncio.get_running_loop()
        self.timeout_s = timeout_s
        self.created = loop.time()
        self.queue_until = self.created + wait_s
        self.queue_s = 0.0
        self.engine_s = 0.0
        self.queued_since: float | None = None  # set while waiting on our side
        self.out_since: float | None = None  # set while a request is out
        self.admitted_at: float | None = None  # the first admission
        self._waits = 0  # nested waits (a lane inside a store read never happens, but nesting is harmless)
        self._store_waits = 0  # of which waits for the state store
        self._watchers: list[Callable[[], None]] = []
        # Nobody waits for this run's answer any more: it gives way to requests someone waits for.
        self.background = False
        self.preempted = False  # cancelled to give its slot to a request someone waits for
        self.lane: Lane | None = None  # the lane whose slot this run holds (set and cleared by the lane)

    # --- what the orchestrator reads ---
    @property
    def admitted(self) -> bool:
        return self.admitted_at is not None

    @property
    def queued(self) -> bool:
        """Waiting on our side now (for admission, its first request or a follow-up; for the state store)."""
        return self.queued_since is not None

    @property
    def on_store(self) -> bool:
        """Waiting for the state store now (a cached answer, a cooldown, the budget)."""
        return self._store_waits > 0

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever the run starts or stops waiting for the state store."""
        self._watchers.append(callback)

    def unwatch(self, callback: Callable[[], None]) -> None:
        try:
            self._watchers.remove(callback)
        except ValueError:
            pass

    def to_background(self) -> None:
        """No search waits for this run now. It goes on (its outcome still counts for cooldowns) unless
        a request someone waits for is queued for its upstream: then it yields its slot at once."""
        self.background = True
        if self.lane is not None and self.lane.queued:
            self.lane.make_way()

    def to_foreground(self) -> None:
        self.background = False

    def queue_ms(self) -> int:
        now = asyncio.get_running_loop().time()
        return int((self.queue_s + (now - self.queued_since if self.queued_since is not None else 0)) * 1000)

    def engine_ms(self) -> int:
        now = asyncio.get_running_loop().time()
        return int((self.engine_s + (now - self.out_since if self.out_since is not None else 0)) * 1000)

    def remaining(self) -> float:
        return self.timeout_s - self.engine_s

    # --- what admission, the runner and the transport call ---
    def _notify(self) -> None:
        for callback in list(self._watchers):
            callback()

    @asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        """The block waits on our side (a lane, the state store): queue time, never the engine's. The
        searches' deadlines run on meanwhile (a burst never holds an answer past them)."""
        loop = asyncio.get_running_loop()
        self._waits += 1
        if self._waits == 1:
            self.queued_since = loop.time()
        try:
            yield
        finally:
            self._waits -= 1
            if self._waits == 0 and self.queued_since is not None:
                self.queue_s += loop.time() - self.queued_since
                self.queued_since = None

    @asynccontextmanager
    async def store_wait(self) -> AsyncIterator[None]:
        """The block waits for the state store: queue time too, and the searches' clocks stand still
        meanwhile (they watch `on_store`): the store's time never makes an engine late, and each read
        is bounded (`state_wait_ms`), so this pause is too."""
        self._store_waits += 1
        if self._store_waits == 1:
            self._notify()
        try:
            async with self.waiting():
                yield
        finally:
            self._store_waits -= 1
            if self._store_waits == 0:
                self._notify()

    def admit(self) -> None:
        """A request of this run was admitted (the first one sets `admitted_at`)."""
        if self.admitted_at is None:
            self.admitted_at = asyncio.get_running_loop().time()

    @asynccontextmanager
    async def out(self) -> AsyncIterator[None]:
        """A request is out: the engine's deadline runs. Raises TimeoutError when its time is spent."""
        loop = asyncio.get_running_loop()
        remaining = self.remaining()
        if remaining <= 0:
            raise TimeoutError("engine time spent")
        started = loop.time()
        credit = 0.0
        self.out_since = started
        async with asyncio.timeout(None) as timeout:
            def expire(due: float) -> None:
                nonlocal handle, credit
                late = loop.time() - due
                # The loop was busy when the deadline came: an answer may be sitting unread. Give the
                # engine that time back instead of calling it slow (bounded, so that a hung engine
                # still ends while our loop stays overloaded).
                if late > STALL_S and credit + late <= MAX_STALL_CREDIT * self.timeout_s:
                    credit += late
                    handle = loop.call_at(loop.time() + late, expire, loop.time() + late)
                else:
                    timeout.reschedule(loop.time())

            handle = loop.call_at(started + remaining, expire, started + remaining)
            try:
                yield
            finally:
                handle.cancel()
                self.out_since = None
                self.engine_s += max(0.0, loop.time() - started - credit)


class Lane:
    """One politeness limit: at most `limit` slots held at once, starts at least `interval` seconds
    apart, first come first served (a freed slot passes straight to the next in line)."""

    def __init__(self, limit: int, interval: float = 0.0):
        self.limit = limit
        self.interval = interval
        self.active = 0
        self.next_start = 0.0
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.holders: list[EngineClock] = []  # runs holding a slot, oldest first
        self._tasks: dict[EngineClock, asyncio.Task] = {}

    @property
    def queued(self) -> int:
        return len(self.waiters)

    def idle(self, now: float) -> bool:
        """Nothing held, nobody waiting, and no start spacing still to keep: forgetting it changes nothing."""
        return self.active == 0 and not self.waiters and self.next_start <= now

    async def acquire(self, until: float, spaced: bool = True) -> None:
        """A slot, started no earlier than `interval` after the previous one (unless not `spaced`: a
        follow-up of a request that already kept the spacing); TimeoutError past `until`."""
        if self.active < self.limit and not self.waiters:
            self.active += 1
        else:
            self.make_way()
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()
            self.waiters.append(waiter)
            try:
                async with asyncio.timeout_at(until):
                    await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self.release()  # the slot was handed over just as we gave up: pass it on
                else:
                    waiter.cancel()
                    try:
                        self.waiters.remove(waiter)
                    except ValueError:
                        pass
                raise
        if self.interval and spaced:
            loop = asyncio.get_running_loop()
            start = max(loop.time(), self.next_start)
            if start > until:
                self.release()
                raise TimeoutError
            self.next_start = start + self.interval
            if start > loop.time():
                try:
                    await asyncio.sleep(start - loop.time())
                except BaseException:
                    self.release()
                    raise

    def release(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes straight to the next in line
                return
        self.active -= 1

    def hold(self, clock: EngineClock, task: asyncio.Task) -> None:
        """`clock`'s run (`task`) holds a slot: it may be asked to make way once nobody waits for it."""
        self.holders.append(clock)
        self._tasks[clock] = task
        if clock.lane is None:
            clock.lane = self

    def drop(self, clock: EngineClock) -> None:
        self.holders.remove(clock)
        del self._tasks[clock]
        if clock.lane is self:
            clock.lane = None

    def make_way(self) -> None:
        """A request must wait: a run nobody waits for gives up its slot (it is cancelled). The most recent
        one goes first: the oldest keeps going longest, so a hung engine still reaches its own timeout
        (and its cooldown) while younger runs make way."""
        idle = [clock for clock in self.holders
                if clock.background and not clock.preempted and not self._tasks[clock].done()]
        if idle:
            victim = idle[-1]
            victim.preempted = True
            self._tasks[victim].cancel()


class Lanes:
    """Lanes by key (a host, an upstream), made on first use in each event loop (futures belong to one
    loop) by `make(key)` or the maker `get` is given; past `keep` lanes, the idle ones are forgotten."""

    def __init__(self, make: Callable[[str], Lane] | None = None, keep: int = 1024):
        self._make = make
        self._keep = keep
        self._by_key: PerLoop[dict[str, Lane]] = PerLoop(dict)

    def get(self, key: str, make: Callable[[], Lane] | None = None) -> Lane:
        """The lane of `key`, made now (by `make` when given) if the running loop has none yet."""
        lanes = self._by_key.get()
        lane = lanes.get(key)
        if lane is None:
            if len(lanes) >= self._keep:
                now = asyncio.get_running_loop().time()
                for idle in [k for k, held in lanes.items() if held.idle(now)]:
                    del lanes[idle]
            if make is None:
                if self._make is None:
                    raise ValueError(f"no way to make the lane of {key!r}")
                make = functools.partial(self._make, key)
            lane = lanes[key] = make()
        return lane

    def find(self, key: str) -> Lane | None:
        """The lane of `key` in the running loop, without making one."""
        lanes = self._by_key.current()
        return lanes.get(key) if lanes is not None else None


@asynccontextmanager
async def turn(lanes: Sequence[Lane], clock: EngineClock, *, spaced: bool = True) -> AsyncIterator[None]:
    """A slot in each lane, taken in order and held for the body of the block. The wait is `clock`'s
    queue time, bounded by `clock.queue_until` (Overloaded past it). The first lane's slot is the one a
    run nobody waits for may be asked to give up. `spaced=False`: the lanes' start spacing is not kept
    again (a redirect hop of a read that already waited it)."""
    taken: list[Lane] = []
    async with clock.waiting():
        try:
            for lane in lanes:
                await lane.acquire(clock.queue_until, spaced)
                taken.append(lane)
        except BaseException as exc:
            for lane in reversed(taken):
                lane.release()
            if isinstance(exc, TimeoutError):
                raise Overloaded(OVERLOADED) from None
            raise
    clock.admit()
    task = asyncio.current_task()
    first = lanes[0] if lanes and task is not None else None
    if first is not None:
        first.hold(clock, task)  # type: ignore[arg-type]
    try:
        yield
    finally:
        if first is not None:
            first.drop(clock)
        for lane in reversed(taken):
            lane.release()


class Admission:
    """Per-upstream and process-wide limits on requests out; see the module docstring."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._upstreams = Lanes()  # each made knowing its engine (`lane`)
        self._process: PerLoop[Lane] = PerLoop(lambda: Lane(settings.pool_limit))

    def _new_lane(self, upstream: str, engine: str) -> Lane:
        rates = self.settings.upstream_rps
        # Set by the upstream's key ("bing@http://host:port"), else by the engine's name, which then
        # holds behind an endpoint override too.
        rps = rates.get(upstream) or rates.get(engine)
        return Lane(self.settings.upstream_concurrency, 1.0 / rps if rps else 0.0)

    def lane(self, upstream: str, engine: str) -> Lane:
        """The lane of `upstream` (the engine, or the engine at its endpoint override), made on first use."""
        return self._upstreams.get(upstream, lambda: self._new_lane(upstream, engine))

    def find(self, upstream: str) -> Lane | None:
        """The lane of `upstream` if a request has been admitted for it in the running loop."""
        return self._upstreams.find(upstream)

    def admit(self, upstream: str, engine: str, clock: EngineClock):
        """Wait for a slot of the upstream and of the process (queue time, on `clock`), hold both for
        the body of the `async with` block."""
        return turn([self.lane(upstream, engine), self._process.get()], clock)
