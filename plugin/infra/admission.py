"""Admission: how much we ask of one upstream at once, decided before the engine's clock starts.

Every request waits here first, per upstream (the engine, or the engine at its endpoint override):
at most `upstream_concurrency` requests out at once, at most `upstream_rps` started per second where
one is set, and at most `pool_limit` out for the whole process. The connection pool itself is not
limited below these, so an admitted request gets a connection at once.

Time spent waiting here is queue time (`queue_ms` in the engine's report): it is our load, not the
engine's slowness, so it is never part of the engine's deadline and never a `timeout` or a cooldown.
A request not admitted within the wait budget (`admission_wait_ms`) is `skipped`, detail `overloaded`.
A run nobody waits for any more (an engine that was late for every search that asked) keeps its slot
only while no one else waits for one: a queued request takes it over (the background run is cancelled,
the most recent first, so the oldest one per upstream goes on longest and can still time out).

`EngineClock` is one engine run's own time: `timeout_ms` spent only while a request is out. When our
event loop was too busy to notice an answer in time (the timer itself fired late), the engine is
given that time back instead of being blamed for it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable

from plugin.settings import Settings

# A timer that fires this much after its due time means the event loop was busy elsewhere.
STALL_S = 0.05
# Stall time given back to one engine run, in multiples of its own deadline.
MAX_STALL_CREDIT = 10

OVERLOADED = "overloaded"


class Overloaded(Exception):
    """Not admitted within the wait budget."""


class EngineClock:
    """One engine run's time. `queue_s`: waiting for admission; `engine_s`: requests out (the deadline's)."""

    def __init__(self, timeout_s: float, wait_s: float):
        loop = asyncio.get_running_loop()
        self.timeout_s = timeout_s
        self.created = loop.time()
        self.queue_until = self.created + wait_s
        self.queue_s = 0.0
        self.engine_s = 0.0
        self.queued_since: float | None = None  # set while waiting for admission
        self.out_since: float | None = None  # set while a request is out
        self.admitted_at: float | None = None  # the first admission
        self._watchers: list[Callable[[], None]] = []
        # Nobody waits for this run's answer any more: it gives way to requests someone waits for.
        self.background = False
        self.preempted = False  # cancelled to give its slot to a request someone waits for
        self._holding: tuple[_Lane, asyncio.Task] | None = None  # the lane slot it holds, and its task

    # --- what the orchestrator reads ---
    @property
    def admitted(self) -> bool:
        return self.admitted_at is not None

    @property
    def queued(self) -> bool:
        """Waiting for admission now (its first request, or a follow-up)."""
        return self.queued_since is not None

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever the run starts or stops waiting for admission."""
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
        if self._holding is not None and self._holding[0].waiters:
            self._holding[0]._preempt()

    def to_foreground(self) -> None:
        self.background = False

    def _changed(self) -> None:
        for callback in list(self._watchers):
            callback()

    def queue_ms(self) -> int:
        now = asyncio.get_running_loop().time()
        return int((self.queue_s + (now - self.queued_since if self.queued_since is not None else 0)) * 1000)

    def engine_ms(self) -> int:
        now = asyncio.get_running_loop().time()
        return int((self.engine_s + (now - self.out_since if self.out_since is not None else 0)) * 1000)

    def remaining(self) -> float:
        return self.timeout_s - self.engine_s

    # --- what admission and the transport call ---
    def _queued(self, seconds: float) -> None:
        self.queue_s += seconds

    def _admitted(self) -> None:
        if self.admitted_at is None:
            self.admitted_at = asyncio.get_running_loop().time()
        self._changed()  # out of the queue (a follow-up request too): the searches' clocks run again

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


class _Lane:
    """A FIFO of requests for one limit: `limit` out at once, starts spaced by `interval` seconds."""

    def __init__(self, limit: int, interval: float = 0.0):
        self.limit = limit
        self.interval = interval
        self.active = 0
        self.next_start = 0.0
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.holders: list[EngineClock] = []

    async def acquire(self, until: float) -> None:
        if self.active < self.limit and not self.waiters:
            self.active += 1
        else:
            self._preempt()
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
        if self.interval:
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

    def _preempt(self) -> None:
        """A request must wait: a run nobody waits for gives up its slot (it is cancelled). The most recent
        one goes first: the oldest keeps going longest, so a hung engine still reaches its own timeout
        (and its cooldown) while younger runs make way."""
        idle = [clock for clock in self.holders
                if clock.background and not clock.preempted and clock._holding is not None
                and not clock._holding[1].done()]
        if idle:
            victim = idle[-1]
            victim.preempted = True
            victim._holding[1].cancel()  # type: ignore[index]

    def release(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes straight to the next in line
                return
        self.active -= 1

    @property
    def queued(self) -> int:
        return len(self.waiters)


class Admission:
    """Per-upstream and process-wide limits on requests out; see the module docstring."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lanes: dict[str, _Lane] = {}
        self._process: _Lane | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _lane(self, upstream: str, engine: str) -> _Lane:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # futures belong to one event loop; a new loop starts afresh
            self._lanes, self._process, self._loop = {}, None, loop
        lane = self._lanes.get(upstream)
        if lane is None:
            rps = self.settings.upstream_rps.get(upstream) or self.settings.upstream_rps.get(engine)
            lane = self._lanes[upstream] = _Lane(self.settings.upstream_concurrency, 1.0 / rps if rps else 0.0)
        return lane

    def queued(self, upstream: str) -> int:
        lane = self._lanes.get(upstream)
        return lane.queued if lane else 0

    @asynccontextmanager
    async def admit(self, upstream: str, engine: str, clock: EngineClock) -> AsyncIterator[None]:
        """Wait for a slot (queue time, on `clock`), hold it for the body of the block."""
        lane = self._lane(upstream, engine)
        if self._process is None:
            self._process = _Lane(self.settings.pool_limit)
        process = self._process
        loop = asyncio.get_running_loop()
        started = clock.queued_since = loop.time()
        clock._changed()
        try:
            await lane.acquire(clock.queue_until)
            try:
                await process.acquire(clock.queue_until)
            except BaseException:
                lane.release()
                raise
        except TimeoutError:
            raise Overloaded(OVERLOADED) from None
        finally:
            clock.queued_since = None
            clock._queued(loop.time() - started)
        task = asyncio.current_task()
        if task is not None:
            clock._holding = (lane, task)
            lane.holders.append(clock)
        try:
            clock._admitted()
            yield
        finally:
            if task is not None:
                clock._holding = None
                lane.holders.remove(clock)
            process.release()
            lane.release()
