"""The cooldown policy (plugin.infra.cooldown.Cooldowns) against a plain model: a Hypothesis stateful test
interleaves failures of every kind (Retry-After or not, sent before or during a window), successes, the
passing of time, and runs of many failure episodes (an engine that blocks us for weeks), and after every
step the policy benches exactly what the model says, never for longer than `cooldown_max_s`, and stops
benching once the window has passed.

The model is written as the README states the rules, not as the code computes them: a window is the
failure's base window grown by `cooldown_growth` per earlier episode (multiplied step by step, and held
at the cap once past it), at least Retry-After, at most `cooldown_max_s`; a failure of a request sent
before the window ended is the same episode (the window may lengthen, never shorten, and the worse
failure names it); an entry whose window ended more than `cooldown_memory_s` ago is forgotten; a
success clears it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from examples import scaled
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from plugin.infra.cooldown import Cooldowns
from plugin.infra.state import MemoryState
from plugin.settings import Settings

ENGINES = ("bing", "brave")
STATUSES = ("timeout", "error", "ratelimited", "blocked")
SEVERITY = {"timeout": 0, "error": 0, "ratelimited": 1, "blocked": 2}
START = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@dataclass
class Bench:
    until: float
    episodes: int
    status: str


class CooldownMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = Clock()
        self.model: dict[str, Bench] = {}

    def teardown(self) -> None:
        self.loop.close()

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    @initialize(timeout_s=st.sampled_from([0.0, 30.0]), growth=st.sampled_from([1.0, 2.0, 10.0]),
                max_s=st.sampled_from([0.0, 60.0, 600.0]), memory_s=st.sampled_from([0.0, 120.0, 86_400.0]))
    def setup(self, timeout_s, growth, max_s, memory_s):
        self.settings = Settings(cooldown_timeout_s=timeout_s, cooldown_ratelimited_s=45.0,
                                 cooldown_blocked_s=90.0, cooldown_growth=growth, cooldown_max_s=max_s,
                                 cooldown_memory_s=memory_s)
        self.cooldowns = Cooldowns(self.settings, MemoryState(clock=self.clock), clock=self.clock)

    # ----- the model -----
    def window(self, status: str, episodes: int, retry_after: float | None) -> float:
        s = self.settings
        base = {"blocked": s.cooldown_blocked_s, "ratelimited": s.cooldown_ratelimited_s}.get(status,
                                                                                             s.cooldown_timeout_s)
        seconds = base
        for _ in range(episodes - 1):
            if seconds >= s.cooldown_max_s:
                break
            seconds *= s.cooldown_growth
        if retry_after is not None:
            seconds = max(seconds, retry_after)
        return min(seconds, s.cooldown_max_s)

    def remembered(self, engine: str) -> Bench | None:
        bench = self.model.get(engine)
        if bench is not None and self.clock.now - bench.until > self.settings.cooldown_memory_s:
            return None
        return bench

    def model_failure(self, engine: str, status: str, retry_after: float | None, started: float) -> None:
        now = self.clock.now
        previous = self.remembered(engine)
        if previous is not None and started < previous.until:
            until = now + self.window(status, previous.episodes, retry_after)
            if until > previous.until:
                worse = SEVERITY[status] >= SEVERITY[previous.status]
                self.model[engine] = Bench(until, previous.episodes, status if worse else previous.status)
            return
        episodes = (previous.episodes if previous is not None else 0) + 1
        self.model[engine] = Bench(now + self.window(status, episodes, retry_after), episodes, status)

    # ----- steps -----
    @rule(engine=st.sampled_from(ENGINES), status=st.sampled_from(STATUSES),
          retry_after=st.none() | st.sampled_from([5.0, 100.0, 10_000.0]), sent_ago=st.sampled_from([0.0, 1.0, 50.0]))
    def failure(self, engine, status, retry_after, sent_ago):
        started = self.clock.now - sent_ago
        entry = self.run(self.cooldowns.failure(engine, status, retry_after, "detail", started=started))
        self.model_failure(engine, status, retry_after, started)
        assert entry.until == self.model[engine].until

    @rule(engine=st.sampled_from(ENGINES), count=st.sampled_from([3, 40, 1_100]), status=st.sampled_from(STATUSES))
    def failing_for_weeks(self, engine, count, status):
        """`count` episodes in a row, each request sent once the last window has ended."""
        async def episodes():
            for _ in range(count):
                bench = self.model.get(engine)
                if bench is not None:
                    self.clock.now = max(self.clock.now, bench.until)
                await self.cooldowns.failure(engine, status, None, "still blocked", started=self.clock.now)
                self.model_failure(engine, status, None, self.clock.now)

        self.run(episodes())

    @rule(engine=st.sampled_from(ENGINES))
    def success(self, engine):
        self.run(self.cooldowns.success(engine))
        self.model.pop(engine, None)

    @rule(seconds=st.sampled_from([0.5, 29.0, 30.0, 61.0, 600.0, 100_000.0]))
    def time_passes(self, seconds):
        self.clock.now += seconds

    # ----- what must hold after every step -----
    @invariant()
    def benches_what_the_model_benches_and_no_longer_than_the_cap(self):
        if not hasattr(self, "cooldowns"):
            return
        now = self.clock.now
        for engine in ENGINES:
            active = self.run(self.cooldowns.active(engine))
            bench = self.model.get(engine)
            expected = bench is not None and bench.until > now
            assert (active is not None) == expected, (engine, active, bench, now)
            if active is not None:
                assert active.until - now <= self.settings.cooldown_max_s
                assert active.until == bench.until and active.status == bench.status
            stored = self.run(self.cooldowns.store.get(engine))
            if bench is not None and self.remembered(engine) is not None:
                assert stored is not None and stored.failures == bench.episodes


def test_the_cooldown_policy_against_a_plain_model():
    run_state_machine_as_test(CooldownMachine, settings=hypothesis_settings(
        max_examples=scaled(100), stateful_step_count=30, deadline=None))
