"""Cooldowns under concurrency, offline, across backends and processes (issue 10), and their cap."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from plugin.infra.cooldown import Cooldowns, CooldownEntry, Reachability
from plugin.infra.state import MemoryState, RedisState, SqliteState
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, ddg_page, page
from test_state import redis_server, redis_url  # noqa: F401  (the real Redis the state tests use)

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("Python release notes", "https://docs.python.org/3/whatsnew/", "python release notes"),
        ("Python downloads", "https://www.python.org/downloads/", "python release notes downloads")]
WEEK = 7 * 24 * 3600


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def closed_port_url() -> str:
    """A loopback URL nobody listens on: connecting to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_concurrent_failures_of_one_episode_do_not_escalate(standins):
    """Ten searches in flight together against a failing engine: one episode, one base window
    (before the fix: failure 10, 15,360 s)."""
    failing = await standins(page("down", status=503, delay=0.2))
    async with Searcher(Settings(endpoints={"bing": failing.url}, engines=["bing"])) as searcher:
        # Distinct queries: identical ones in flight share one exchange (single-flight).
        responses = await asyncio.gather(*(searcher.search(f"python release notes {i}") for i in range(10)))
        entry = await searcher.cooldowns.store.get(searcher.settings.upstream("bing"))
    assert len(failing.requests) == 10
    assert entry.failures == 1
    assert all(r.engines[0].detail == "HTTP 503; cooling down 30s" for r in responses), \
        [r.engines[0].detail for r in responses]


async def test_gathered_module_level_searches_are_one_episode(standins):
    """Eight `asyncio.gather`ed `plugin.search()` calls (before the fix: 3,840 s)."""
    from plugin import search

    failing = await standins(page("down", status=503, delay=0.2))
    settings = Settings(endpoints={"bing": failing.url}, engines=["bing"])
    responses = await asyncio.gather(*(search(f"python release notes {i}", settings=settings) for i in range(8)))
    assert len(failing.requests) == 8
    assert {r.engines[0].detail for r in responses} == {"HTTP 503; cooling down 30s"}


async def test_a_failure_escalates_only_when_its_request_started_after_the_window():
    clock = FakeClock()
    cooldowns = Cooldowns(Settings(cooldown_timeout_s=30, cooldown_growth=2), MemoryState(), clock=clock)
    sent = clock.now
    clock.now += 1
    first = await cooldowns.failure("bing", "timeout", started=sent)
    assert (first.failures, first.until - clock.now) == (1, 30)
    clock.now += 5  # a request sent together with the first fails later: the same episode
    same = await cooldowns.failure("bing", "timeout", started=sent)
    assert same.failures == 1 and same.until - clock.now == pytest.approx(30)
    clock.now += 40  # the window is over; a request sent now fails: a new episode, the window doubles
    sent = clock.now
    clock.now += 1
    second = await cooldowns.failure("bing", "timeout", started=sent)
    assert (second.failures, second.until - clock.now) == (2, 60)
    # A worse failure of the same episode lengthens the window without counting as another failure.
    blocked = await cooldowns.failure("bing", "blocked", started=sent)
    assert blocked.failures == 2 and blocked.status == "blocked" and blocked.until - clock.now == pytest.approx(3600)


async def test_windows_are_capped_retry_after_included():
    clock = FakeClock()
    cooldowns = Cooldowns(Settings(cooldown_timeout_s=30, cooldown_growth=2, cooldown_max_s=100), MemoryState(),
                          clock=clock)
    windows = []
    for _ in range(6):
        entry = await cooldowns.failure("bing", "timeout", started=clock.now)
        windows.append(entry.until - clock.now)
        clock.now = entry.until + 1
    assert windows == [30, 60, 100, 100, 100, 100]
    entry = await cooldowns.failure("brave", "ratelimited", retry_after=7200, started=clock.now)
    assert entry.until - clock.now == 100


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request, tmp_path):
    clock = FakeClock()
    if request.param == "memory":
        return MemoryState(clock=clock), clock
    if request.param == "sqlite":
        return SqliteState(tmp_path / "state.sqlite3", clock=clock, wait_s=5), clock
    url = request.getfixturevalue("redis_url")
    return RedisState(url, prefix=f"metasearch-test-{os.getpid()}:"), clock


async def test_cooldown_memory_is_the_same_on_every_backend(store):
    """Five timeouts, then one a week later: the first of a new run (30 s), not failure 6 (960 s)."""
    state, clock = store
    cooldowns = Cooldowns(Settings(cooldown_timeout_s=30, cooldown_growth=2), state, clock=clock)
    for _ in range(5):
        entry = await cooldowns.failure("bing", "timeout", started=clock.now)
        clock.now = entry.until + 1
    assert entry.failures == 5
    clock.now += WEEK
    entry = await cooldowns.failure("bing", "timeout", started=clock.now)
    assert (entry.failures, entry.until - clock.now) == (1, 30)
    await state.close()


UPDATE_SCRIPT = """
import asyncio, json, sys, time
from plugin.infra.cooldown import CooldownEntry
from plugin.infra.state import RedisState, SqliteState
from pathlib import Path
def bump(entry):
    time.sleep(0.002)  # widen the gap between reading and writing, as a busy machine would
    return CooldownEntry(until=0, failures=(entry.failures if entry else 0) + 1, status="error")
async def main():
    kind, where, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    state = SqliteState(Path(where), wait_s=5) if kind == "sqlite" else RedisState(where, prefix="metasearch-atomic:")
    await asyncio.sleep(max(0, start - time.time()))  # every process starts updating at the same moment
    for _ in range(40):
        await state.update("bing", bump, 3600)
    await state.close()
asyncio.run(main())
"""


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_cooldown_updates_are_atomic_across_processes(kind, tmp_path, request):
    """Six processes each apply 40 read-modify-write updates to one entry at once: none may be lost."""
    where = str(tmp_path / "state.sqlite3")
    if kind == "redis":
        where = request.getfixturevalue("redis_url")
        import redis

        client = redis.Redis.from_url(where)
        client.delete("metasearch-atomic:cooldown:bing")
        client.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = str(time.time() + 4)
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", UPDATE_SCRIPT, kind, where, start, cwd=ROOT,
                                                  env=env, stderr=asyncio.subprocess.PIPE) for _ in range(6)]
    for proc in procs:
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
    state = SqliteState(Path(where), wait_s=5) if kind == "sqlite" else RedisState(where, prefix="metasearch-atomic:")
    assert (await state.get("bing")).failures == 240
    await state.close()


async def test_offline_every_engine_unreachable_benches_nothing(standins):
    """Every engine refuses the connection at once: the machine is offline. The response says so, each
    engine's detail says "network unreachable", and nothing is benched, however often it happens."""
    endpoints = {name: closed_port_url() for name in ("bing", "duckduckgo-html", "brave")}
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:
        for _ in range(6):
            response = await searcher.search("python release notes")
            assert any("network unreachable" in w for w in response.warnings), response.warnings
            assert {e.status for e in response.engines} == {"error"}
            assert all(e.detail.startswith("network unreachable") for e in response.engines), response.engines
            assert all("cooling down" not in e.detail for e in response.engines)
        assert await searcher.cooldowns.store.all() == {}
    # Back online: the engines answer at once, no window inherited from the offline spell.
    for name in endpoints:
        endpoints[name] = (await standins(page(bing_page(ROWS) if name != "duckduckgo-html" else ddg_page(ROWS)))).url
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:
        response = await searcher.search("python release notes")
    assert response.warnings == [] and {e.status for e in response.engines} <= {"ok", "error"}
    assert "cooldown" not in {e.status for e in response.engines}


async def test_offline_with_one_engine_benches_it_not_and_the_bench_does_not_spread():
    """`--engines bing` offline: bing alone refuses, nothing else connected. That is offline too (issue 21:
    it used to bench bing, and then `--engines bing,brave` tried brave alone and benched it as well)."""
    endpoints = {name: closed_port_url() for name in ("bing", "brave")}
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:
        alone = await searcher.search("what's new in python 3.13", engines="bing")
        both = await searcher.search("what's new in python 3.13", engines="bing,brave")
        benched = await searcher.cooldowns.store.all()
    for response in (alone, both):
        assert any(w.startswith("network unreachable") for w in response.warnings), response.warnings
        assert all(e.status == "error" and e.detail.startswith("network unreachable (connection failed")
                   for e in response.engines), response.engines
        assert all("cooling down" not in e.detail for e in response.engines)
    assert [e.name for e in both.engines] == ["bing", "brave"] and benched == {}


async def test_the_one_engine_refusing_while_another_connects_is_benched(standins):
    good = await standins(page(bing_page(ROWS)))
    endpoints = {"bing": good.url, "brave": closed_port_url()}
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:
        response = await searcher.search("python release notes")
        benched = await searcher.cooldowns.store.all()
    refused = {e.name: e for e in response.engines}["brave"]
    assert refused.status == "error" and refused.detail.endswith("cooling down 30s"), refused.detail
    assert response.warnings == [] and set(benched) == {searcher.settings.upstream("brave")}


async def test_one_unreachable_engine_among_answering_ones_is_benched(standins):
    good = await standins(page(bing_page(ROWS)))
    endpoints = {"bing": good.url, "duckduckgo-html": closed_port_url(), "brave": closed_port_url()}
    async with Searcher(Settings(endpoints=endpoints, engines=list(endpoints))) as searcher:
        response = await searcher.search("python release notes")
        statuses = {e.name: (e.status, e.detail) for e in response.engines}
        assert statuses["bing"][0] == "ok" and response.warnings == []
        for name in ("duckduckgo-html", "brave"):
            assert statuses[name][0] == "error" and "connection failed" in statuses[name][1]
            assert statuses[name][1].endswith("cooling down 30s")
        benched = await searcher.cooldowns.store.all()
    assert set(benched) == {searcher.settings.upstream("duckduckgo-html"), searcher.settings.upstream("brave")}


async def test_memory_state_budget_allows_exactly_the_budget():
    state = MemoryState(clock=FakeClock())
    assert [await state.spend("bing", 3) for _ in range(5)] == [True, True, True, False, False]
    assert [await state.spend("brave", 1) for _ in range(2)] == [True, False]


async def test_memory_state_cache_expires():
    clock = FakeClock()
    state = MemoryState(clock=clock)
    await state.cache_put("k", "v", 300)
    clock.now += 299
    assert await state.cache_get("k") == "v"
    clock.now += 2
    assert await state.cache_get("k") is None


def policy(clock: FakeClock, **knobs) -> Cooldowns:
    settings = Settings(**{"cooldown_timeout_s": 30, "cooldown_ratelimited_s": 300, "cooldown_blocked_s": 1800,
                           "cooldown_growth": 2, "cooldown_memory_s": 3600, **knobs})
    return Cooldowns(settings, MemoryState(), clock=clock)


async def test_each_failure_has_its_own_base_window():
    clock = FakeClock()
    cooldowns = policy(clock)
    for engine, status, window, detail in [("a", "timeout", 30, None), ("b", "error", 30, "HTTP 502"),
                                           ("c", "ratelimited", 300, "HTTP 429"), ("d", "blocked", 1800, None)]:
        entry = await cooldowns.failure(engine, status, **({"detail": detail} if detail else {}))
        assert (entry.status, entry.until - clock.now, entry.failures, entry.detail) == (status, window, 1,
                                                                                          detail or "")


async def test_a_window_ends_at_its_last_second_not_after_it():
    clock = FakeClock()
    cooldowns = policy(clock)
    entry = await cooldowns.failure("bing", "timeout")
    clock.now = entry.until - 0.001
    assert await cooldowns.active("bing") == entry
    clock.now = entry.until
    assert await cooldowns.active("bing") is None


async def test_a_request_sent_the_moment_the_window_ends_starts_a_new_episode():
    clock = FakeClock()
    cooldowns = policy(clock)
    first = await cooldowns.failure("bing", "timeout")
    clock.now = first.until + 1
    second = await cooldowns.failure("bing", "timeout", started=first.until)
    assert (second.failures, second.until - clock.now) == (2, 60)


async def test_a_request_sent_during_the_window_that_fails_after_it_belongs_to_that_episode():
    clock = FakeClock()
    cooldowns = policy(clock)
    first = await cooldowns.failure("bing", "timeout", started=clock.now)
    sent = first.until - 1  # sent anyway (ignore_cooldowns), answered after the window ended
    clock.now = first.until + 5
    late = await cooldowns.failure("bing", "timeout", started=sent)
    assert (late.failures, late.until - clock.now) == (1, 30)


async def test_memory_keeps_an_entry_up_to_exactly_cooldown_memory_s_after_its_window():
    clock = FakeClock()
    cooldowns = policy(clock)
    first = await cooldowns.failure("bing", "timeout")
    clock.now = first.until + 3600  # the last moment it is remembered: the next failure escalates
    assert (await cooldowns.failure("bing", "timeout")).failures == 2
    second = await cooldowns.store.get("bing")
    clock.now = second.until + 3600.001  # a moment later it is forgotten: the first failure again
    assert (await cooldowns.failure("bing", "timeout")).failures == 1


async def test_retry_after_lengthens_the_window_within_an_episode_too():
    clock = FakeClock()
    cooldowns = policy(clock)
    sent = clock.now
    await cooldowns.failure("bing", "timeout", started=sent)
    clock.now += 1
    later = await cooldowns.failure("bing", "timeout", retry_after=500, started=sent, detail="HTTP 503")
    assert (later.failures, later.until - clock.now, later.detail) == (1, 500, "HTTP 503")


async def test_a_same_episode_failure_that_does_not_lengthen_the_window_leaves_the_entry_as_it_was():
    clock = FakeClock()
    cooldowns = policy(clock)
    first = await cooldowns.failure("bing", "timeout", detail="no answer within 4000 ms", started=clock.now)
    again = await cooldowns.failure("bing", "error", detail="HTTP 502", started=clock.now)  # same instant
    assert again == first


async def test_within_an_episode_the_worst_failure_names_the_entry():
    clock = FakeClock()
    cooldowns = policy(clock)
    sent = clock.now
    # Rate-limited, then a CAPTCHA from a request of the same episode: now it is blocked, with that detail.
    await cooldowns.failure("bing", "ratelimited", detail="HTTP 429", started=sent)
    blocked = await cooldowns.failure("bing", "blocked", detail="captcha page", started=sent)
    assert (blocked.status, blocked.detail, blocked.failures) == ("blocked", "captcha page", 1)
    # A rate limit with a longer Retry-After lengthens the window but does not hide the CAPTCHA.
    longer = await cooldowns.failure("bing", "ratelimited", retry_after=7200, detail="HTTP 429", started=sent)
    assert (longer.status, longer.detail, longer.until - clock.now) == ("blocked", "captcha page", 7200)
    # Failures of equal severity: the later one names the entry.
    sent = clock.now
    await cooldowns.failure("brave", "timeout", detail="no answer within 4000 ms", started=sent)
    error = await cooldowns.failure("brave", "error", retry_after=120, detail="HTTP 500", started=sent)
    assert (error.status, error.detail, error.until - clock.now) == ("error", "HTTP 500", 120)


async def test_connection_failures_are_held_only_until_some_server_answered_or_the_search_concluded():
    async def record():
        return CooldownEntry(until=1.0, failures=1, status="error")

    before = Reachability()
    assert before.hold("bing", record) is True and set(before.held) == {"bing"}
    answered = Reachability()
    await answered.reached_server()
    assert answered.hold("bing", record) is False and answered.held == {}
    concluded = Reachability(concluded=True)
    assert concluded.hold("bing", record) is False and concluded.held == {}


async def test_memory_state_budget_is_per_calendar_minute():
    clock = FakeClock(60 * 16_667 - 1)  # the last second of a minute
    state = MemoryState(clock=clock)
    assert [await state.spend("bing", 1) for _ in range(2)] == [True, False]
    clock.now += 1  # the next minute: a new budget
    assert [await state.spend("bing", 1) for _ in range(2)] == [True, False]


async def test_memory_state_cache_entry_is_gone_at_its_expiry_time():
    clock = FakeClock()
    state = MemoryState(clock=clock)
    await state.cache_put("k", "v", 300)
    clock.now += 300
    assert await state.cache_get("k") is None


async def test_memory_state_cache_is_bounded_by_bytes_not_by_a_count_of_entries():
    """Issue 29, item 23: a count cap let a thousand page memories evict every cached answer, and 1,000
    large entries held tens of MB; the cap is in bytes (test_state_bytes.py pins it in every store)."""
    state = MemoryState(clock=FakeClock())
    for i in range(2000):
        await state.cache_put(f"k{i}", "v", 300)
    assert await state.cache_get("k0") == "v"  # 2,000 small entries are far under the default cap
    small = MemoryState(clock=FakeClock(), max_bytes=200_000)
    for i in range(1001):
        await small.cache_put(f"k{i}", "v" * 1000, 300)
    assert await small.cache_get("k0") is None and await small.cache_get("k1000") == "v" * 1000
    assert (await small.usage())["bytes"] <= 200_000


async def test_a_full_memory_cache_drops_its_expired_entries_before_any_live_one():
    clock = FakeClock()
    state = MemoryState(clock=clock, max_bytes=200_000)
    for i in range(150):  # about 184,000 bytes (as Python holds them): not full yet
        await state.cache_put(f"k{i}", "v" * 1000, 1 if i < 40 else 300)
    clock.now += 1  # k0..k39 expire now
    for i in range(150, 180):  # full: the expired go, not the oldest live ones
        await state.cache_put(f"k{i}", "v" * 1000, 300)
    assert [await state.cache_get(k) is not None for k in ("k39", "k40", "k41", "k179")] == [False, True, True, True]


# ----- unanswered at exit (issue 21, item 7): one-shot processes learn that an engine hangs -----
async def test_unanswered_exits_add_up_to_a_timeout_bench():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    first = await cooldowns.unanswered("bing", 1200)
    assert (first.status, first.failures) == ("slow", 0)
    assert first.detail == "1200 ms without an answer (processes that ended first: 1)"
    assert await cooldowns.active("bing") is None  # a record, not a bench
    clock.now += 10
    second = await cooldowns.unanswered("bing", 1799)
    assert (second.status, second.detail) == ("slow", "2999 ms without an answer (processes that ended first: 2)")
    clock.now += 10
    third = await cooldowns.unanswered("bing", 1)  # exactly deadline_ms in all: a timeout
    assert (third.status, third.failures, third.until - clock.now) == ("timeout", 1, 30)
    assert third.detail == "3000 ms without an answer (processes that ended first: 3)"
    assert await cooldowns.active("bing") == third


async def test_an_answer_between_unanswered_exits_starts_the_count_again():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    await cooldowns.unanswered("bing", 2000)
    await cooldowns.success("bing")
    entry = await cooldowns.unanswered("bing", 2000)
    assert (entry.status, entry.detail) == ("slow", "2000 ms without an answer (processes that ended first: 1)")


async def test_unanswered_exits_keep_the_failure_episodes_and_escalate_from_them():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    first = await cooldowns.failure("bing", "timeout")
    clock.now = first.until + 5
    slow = await cooldowns.unanswered("bing", 1000)
    assert (slow.status, slow.failures) == ("slow", 1)
    benched = await cooldowns.unanswered("bing", 2000)
    assert (benched.status, benched.failures, benched.until - clock.now) == ("timeout", 2, 60)
    # A real failure after a record of unanswered time is a new episode, whenever its request was sent.
    clock.now = benched.until + 5
    await cooldowns.unanswered("bing", 100)
    failure = await cooldowns.failure("bing", "error", started=clock.now - 3600)
    assert (failure.failures, failure.until - clock.now) == (3, 120)


async def test_an_unanswered_exit_of_a_benched_engine_changes_nothing():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    entry = await cooldowns.failure("bing", "blocked")
    assert await cooldowns.unanswered("bing", 2999) == entry
    assert await cooldowns.unanswered("bing", 5000) == entry


async def test_a_forgotten_record_of_unanswered_time_counts_no_more():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    await cooldowns.unanswered("bing", 2000)
    clock.now += 3600.001  # cooldown_memory_s after it
    entry = await cooldowns.unanswered("bing", 2000)
    assert (entry.status, entry.detail) == ("slow", "2000 ms without an answer (processes that ended first: 1)")


def test_a_record_of_unanswered_time_never_benches_whatever_its_time():
    assert not CooldownEntry(until=2e9, failures=0, status="slow").active(1e9)
    assert CooldownEntry(until=2e9, failures=0, status="timeout").active(1e9)


async def test_a_record_of_unanswered_time_that_cannot_be_read_starts_the_count_again():
    clock = FakeClock()
    cooldowns = policy(clock, deadline_ms=3000)
    await cooldowns.store.put("bing", CooldownEntry(until=clock.now - 5, failures=2, status="slow", detail="garbled"))
    entry = await cooldowns.unanswered("bing", 500)
    assert (entry.status, entry.failures, entry.detail) == ("slow", 2, "500 ms without an answer (processes that "
                                                                        "ended first: 1)")
