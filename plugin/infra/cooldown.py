"""Cooling engines down after they fail, so we stop hammering an engine that blocks us.

The window depends on the failure (timeouts and errors short, rate limits
longer, CAPTCHAs longest), grows with each consecutive failure episode, honours
Retry-After, and a success resets it. State lives behind `CooldownStore`, implemented
by the stores in `plugin.infra.state` (in-process, embedded SQLite, Redis).

Two rules keep the window honest under load and offline:
- Episodes, not failures, escalate. A failure escalates the window only if its request started after
  the previous window ended; requests already in flight when the first failure was recorded fail for the
  same reason and belong to the same episode. Ten concurrent searches against a dead engine bench it for
  one base window, not 30 s x 2^9. Every store applies the change atomically (one transaction).
- Failures caused by our own network are not the engine's: when every engine a search tried (one or
  many) fails to connect and none connected, this machine is offline, and no engine is benched for it
  (`Reachability`). A proxy of ours that cannot be connected to benches nothing either (runner.py).

Memory is the same on every backend: an entry whose window ended more than `cooldown_memory_s` ago is
forgotten by the policy itself, so the next failure counts as the first again.

A process that ends while an engine's request is still out (the CLI, once it has printed its answer)
never sees that engine time out. It records the time the request had been out instead (`unanswered`):
an entry with status `slow` that benches nothing, keeps the count of earlier failure episodes, and adds
up the unanswered time of such exits with no answer in between (any answer clears it, as a success
does). Once that time reaches `deadline_ms`, the engine is benched as a timeout would have benched it,
the rule for a background run given up for a search that waits (plugin.pipeline.tiers): one-shot
processes learn that an engine hangs, as a long-lived one does.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Awaitable, Callable, Protocol

from plugin.settings import Settings


@dataclass(frozen=True)
class CooldownEntry:
    until: float  # wall-clock epoch seconds
    failures: int  # consecutive failure episodes so far
    status: str  # the failure that set it: timeout, error, ratelimited, blocked
    detail: str = ""

    def active(self, now: float) -> bool:
        return self.until > now and self.status != SLOW

    def to_dict(self) -> dict:
        return asdict(self)


# Status of an entry that benches nothing: time an engine's requests were out, unanswered, when the
# processes that sent them ended (`Cooldowns.unanswered`); its detail says how much, in this form.
SLOW = "slow"
_SLOW_DETAIL = "{ms} ms without an answer (processes that ended first: {exits})"
_SLOW_PARSE = re.compile(r"(\d+) ms without an answer \(processes that ended first: (\d+)\)")


# A pure function from the stored entry (or None) to the new one; stores apply it atomically.
Change = Callable[[CooldownEntry | None], CooldownEntry]


class CooldownStore(Protocol):
    """Where cooldown state lives. Implementations must be safe for concurrent use."""

    async def get(self, engine: str) -> CooldownEntry | None: ...

    async def put(self, engine: str, entry: CooldownEntry) -> None: ...

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        """Read, change and write the engine's entry as one atomic step (across processes too);
        the entry may be dropped `keep_s` seconds later."""
        ...

    async def clear(self, engine: str) -> None: ...

    async def all(self) -> dict[str, CooldownEntry]: ...


# Base windows grow in this order; a same-episode failure may upgrade the entry's status.
_SEVERITY = {"timeout": 0, "error": 0, "ratelimited": 1, "blocked": 2}


class Cooldowns:
    """Policy over a store: when an engine may run, and how long a failure benches it."""

    def __init__(self, settings: Settings, store: CooldownStore, clock=time.time):
        self.settings = settings
        self.store = store  # plugin.infra.state: memory, the embedded SQLite store, or Redis
        self.clock = clock

    def base_window(self, status: str) -> float:
        s = self.settings
        if status == "blocked":
            return s.cooldown_blocked_s
        if status == "ratelimited":
            return s.cooldown_ratelimited_s
        return s.cooldown_timeout_s

    def window(self, status: str, failures: int, retry_after: float | None) -> float:
        base = self.base_window(status)
        try:
            seconds = base * self.settings.cooldown_growth ** max(0, failures - 1)
        except OverflowError:  # over a thousand episodes (an engine that blocks us for good): long since capped
            seconds = self.settings.cooldown_max_s if base > 0 else 0.0
        if retry_after is not None:
            seconds = max(seconds, retry_after)
        return min(seconds, self.settings.cooldown_max_s)

    def remembered(self, entry: CooldownEntry | None, now: float) -> CooldownEntry | None:
        """The entry, unless its window ended longer than `cooldown_memory_s` ago (then forgotten)."""
        if entry is None or now - entry.until > self.settings.cooldown_memory_s:
            return None
        return entry

    def next_entry(self, previous: CooldownEntry | None, status: str, retry_after: float | None, detail: str,
                   started: float, now: float) -> CooldownEntry:
        """The entry after a failure of a request that started at `started` (policy clock)."""
        previous = self.remembered(previous, now)
        if previous is not None and previous.status != SLOW and started < previous.until:
            # In flight when the window was set (or sent despite it): the same episode, no escalation.
            # A worse failure (a CAPTCHA after a timeout) may still lengthen the window, never shorten it.
            until = now + self.window(status, previous.failures, retry_after)
            if until <= previous.until:
                return previous
            worse = _SEVERITY.get(status, 0) >= _SEVERITY.get(previous.status, 0)
            return CooldownEntry(until=until, failures=previous.failures,
                                 status=status if worse else previous.status,
                                 detail=detail if worse else previous.detail)
        failures = (previous.failures if previous else 0) + 1
        return CooldownEntry(until=now + self.window(status, failures, retry_after), failures=failures,
                             status=status, detail=detail)

    @property
    def keep_s(self) -> float:
        """How long a store must keep an entry: its longest window plus the memory after it."""
        return self.settings.cooldown_max_s + self.settings.cooldown_memory_s

    async def active(self, engine: str) -> CooldownEntry | None:
        entry = await self.store.get(engine)
        if entry is not None and entry.active(self.clock()):
            return entry
        return None

    async def failure(self, engine: str, status: str, retry_after: float | None = None,
                      detail: str = "", started: float | None = None) -> CooldownEntry:
        """Record a failure of a request sent at `started` (policy clock; None: just now)."""
        def change(previous: CooldownEntry | None) -> CooldownEntry:
            now = self.clock()
            return self.next_entry(previous, status, retry_after, detail, now if started is None else started, now)

        return await self.store.update(engine, change, self.keep_s)

    def after_unanswered(self, previous: CooldownEntry | None, ms: int, now: float) -> CooldownEntry:
        """The entry after a process ended with the engine's request out for `ms`, unanswered."""
        previous = self.remembered(previous, now)
        if previous is not None and previous.active(now):
            return previous  # benched already (it was asked anyway)
        episodes = previous.failures if previous is not None else 0
        so_far, exits = 0, 0
        if previous is not None and previous.status == SLOW:
            found = _SLOW_PARSE.match(previous.detail)
            so_far, exits = (int(found[1]), int(found[2])) if found else (0, 0)
        total, exits = so_far + ms, exits + 1
        if total >= self.settings.deadline_ms:
            return CooldownEntry(until=now + self.window("timeout", episodes + 1, None), failures=episodes + 1,
                                 status="timeout", detail=_SLOW_DETAIL.format(ms=total, exits=exits))
        return CooldownEntry(until=now, failures=episodes, status=SLOW,
                             detail=_SLOW_DETAIL.format(ms=total, exits=exits))

    async def unanswered(self, engine: str, ms: int) -> CooldownEntry:
        """Record that this process ends with the engine's request out for `ms`, unanswered."""
        return await self.store.update(engine, lambda previous: self.after_unanswered(previous, ms, self.clock()),
                                       self.keep_s)

    async def success(self, engine: str) -> None:
        # No read first: the embedded store queues the clear and skips it when nothing is stored.
        await self.store.clear(engine)


@dataclass
class Reachability:
    """One search's evidence on whether this machine reaches the network at all.

    A connection failure (DNS, refused, unreachable) is held back instead of benching the engine at once:
    it is recorded as soon as any engine of the search reaches its server, or when the search concludes
    with some engine having done so or having failed otherwise. When every engine tried (one or many)
    failed to connect, the machine is offline: the held failures are dropped, no engine is benched, and
    the search says so. (A single engine refusing is offline too: one search cannot tell a dead engine
    from a dead network, and benching it would spread: the next search would try only the others.) After the search has concluded, failures are recorded at once (an
    engine still running then did not fail "at once" with the others).
    """

    reached: bool = False
    concluded: bool = False
    held: dict[str, Callable[[], Awaitable[CooldownEntry]]] = field(default_factory=dict)
    benched: dict[str, CooldownEntry] = field(default_factory=dict)  # held failures recorded since, by engine

    def hold(self, engine: str, record: Callable[[], Awaitable[CooldownEntry]]) -> bool:
        """Keep `record` (the engine's connection failure) until the search knows; False: record it now."""
        if self.reached or self.concluded:
            return False
        self.held[engine] = record
        return True

    async def reached_server(self) -> None:
        self.reached = True
        await self.flush()

    async def flush(self) -> None:
        held, self.held = self.held, {}
        for engine, record in held.items():
            self.benched[engine] = await record()


OFFLINE_DETAIL = "network unreachable"
OFFLINE_WARNING = ("network unreachable: every engine tried failed to connect (DNS or connection error); this "
                   "machine looks offline, so no engine was benched for it")
