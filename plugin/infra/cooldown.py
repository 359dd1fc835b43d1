"""Cooling engines down after they fail, so we stop hammering an engine that blocks us.

The window depends on the failure (timeouts and errors short, rate limits
longer, CAPTCHAs longest), grows with each consecutive failure, honours
Retry-After, and a success resets it. State lives behind `CooldownStore`, implemented
by the stores in `plugin.infra.state` (in-process, embedded SQLite, Redis).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Protocol

from plugin.settings import Settings


@dataclass(frozen=True)
class CooldownEntry:
    until: float  # wall-clock epoch seconds
    failures: int  # consecutive failures so far
    status: str  # the failure that set it: timeout, error, ratelimited, blocked
    detail: str = ""

    def active(self, now: float) -> bool:
        return self.until > now

    def to_dict(self) -> dict:
        return asdict(self)


class CooldownStore(Protocol):
    """Where cooldown state lives. Implementations must be safe for concurrent use."""

    async def get(self, engine: str) -> CooldownEntry | None: ...

    async def put(self, engine: str, entry: CooldownEntry) -> None: ...

    async def clear(self, engine: str) -> None: ...

    async def all(self) -> dict[str, CooldownEntry]: ...


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
        seconds = self.base_window(status) * self.settings.cooldown_growth ** max(0, failures - 1)
        if retry_after is not None:
            seconds = max(seconds, retry_after)
        return min(seconds, self.settings.cooldown_max_s)

    async def active(self, engine: str) -> CooldownEntry | None:
        entry = await self.store.get(engine)
        if entry is not None and entry.active(self.clock()):
            return entry
        return None

    async def failure(self, engine: str, status: str, retry_after: float | None = None,
                      detail: str = "") -> CooldownEntry:
        # Read-modify-write without a lock: two searches failing the same engine at
        # once may count one failure instead of two, which only shortens a window.
        previous = await self.store.get(engine)
        failures = (previous.failures if previous else 0) + 1
        seconds = self.window(status, failures, retry_after)
        entry = CooldownEntry(until=self.clock() + seconds, failures=failures, status=status, detail=detail)
        await self.store.put(engine, entry)
        return entry

    async def success(self, engine: str) -> None:
        if await self.store.get(engine) is not None:
            await self.store.clear(engine)
