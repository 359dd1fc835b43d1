"""One contract for every state store, called in this process (the cross-process tests in test_state.py
run the CLI in subprocesses, where mutation testing could not see which store code they exercise):
memory, SQLite, a real Redis, and Redis behind the failover wrapper. Then what is particular to each:
Redis's key layout and expiry, SQLite's purges, the failover's fallback and its warning."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from plugin.infra.cooldown import CooldownEntry
from plugin.infra.state import (FailoverState, MemoryState, RedisState, RedisUnavailable, SqliteState,
                                collecting_problems)
from test_state import free_port, redis_server, redis_url  # noqa: F401  (a real Redis, as the state tests use)

BACKENDS = ["memory", "sqlite", "redis", "failover"]
ENTRY = CooldownEntry(until=2_000_000_000.5, failures=3, status="ratelimited", detail="HTTP 429 (retry after 60s)")


@pytest.fixture
async def store(request, tmp_path):
    kind = request.param
    if kind == "memory":
        made = MemoryState()
    elif kind == "sqlite":
        made = SqliteState(tmp_path / "state.db", wait_s=5)
    else:
        redis = RedisState(request.getfixturevalue("redis_url"))
        made = redis if kind == "redis" else FailoverState(redis, MemoryState())
    yield made
    await made.close()
    if isinstance(made, FailoverState):
        await made.primary.close()


def each_backend(test):
    return pytest.mark.parametrize("store", BACKENDS, indirect=True)(test)


@each_backend
async def test_a_cooldown_is_stored_whole_listed_and_cleared_per_engine(store):
    assert await store.get("bing") is None and await store.all() == {}
    await store.put("bing", ENTRY)
    other = CooldownEntry(until=1.0, failures=1, status="timeout")
    await store.put("brave", other)
    assert await store.get("bing") == ENTRY and await store.get("brave") == other
    assert await store.all() == {"bing": ENTRY, "brave": other}
    await store.clear("bing")
    await store.clear("never-stored")
    assert await store.get("bing") is None and await store.all() == {"brave": other}


@each_backend
async def test_update_hands_the_stored_entry_to_the_change_and_keeps_what_it_returns(store):
    seen = []

    def bump(entry):
        seen.append(entry)
        return CooldownEntry(until=100.0, failures=(entry.failures if entry else 0) + 1, status="error")

    first = await store.update("bing", bump, 3600)
    second = await store.update("bing", bump, 3600)
    assert seen == [None, first] and second.failures == 2
    assert await store.get("bing") == second and await store.get("brave") is None


@each_backend
async def test_the_cache_returns_what_was_put_under_its_key(store):
    assert await store.cache_get("q1") is None
    await store.cache_put("q1", '{"rows": 1}', 600)
    await store.cache_put("q2", "other", 600)
    assert await store.cache_get("q1") == '{"rows": 1}' and await store.cache_get("q2") == "other"
    await store.cache_put("q1", "newer", 600)
    assert await store.cache_get("q1") == "newer"


@each_backend
async def test_a_budget_gives_exactly_per_minute_requests_per_engine(store):
    if time.time() % 60 > 58:  # budgets are per calendar minute (real clock): do not straddle one
        await asyncio.sleep(60 - time.time() % 60 + 0.05)
    assert [await store.spend("bing", 3) for _ in range(5)] == [True, True, True, False, False]
    assert await store.spend("brave", 1) is True and await store.spend("brave", 1) is False


# ----- Redis: where things live, and for how long -----
async def raw_redis(url):
    import redis.asyncio as redis
    return redis.Redis.from_url(url, decode_responses=True)


async def test_redis_keys_are_prefixed_by_kind_and_expire(redis_url):
    store = RedisState(redis_url)
    raw = await raw_redis(redis_url)
    try:
        await store.put("bing", ENTRY)
        assert 30 * 3600 - 5 <= await raw.ttl("metasearch:cooldown:bing") <= 30 * 3600
        await store.update("brave", lambda _: ENTRY, keep_s=900)
        assert 890 <= await raw.ttl("metasearch:cooldown:brave") <= 900
        await store.update("mojeek", lambda _: ENTRY, keep_s=0.2)  # never a key without expiry, nor 0
        assert await raw.ttl("metasearch:cooldown:mojeek") == 1
        await store.cache_put("key1", "value", 300)
        assert await raw.get("metasearch:cache:key1") == "value"
        assert 295 <= await raw.ttl("metasearch:cache:key1") <= 300
        await store.spend("bing", 10)
        budget = [key async for key in raw.scan_iter(match="metasearch:budget:bing:*")]
        assert len(budget) == 1 and int(budget[0].rsplit(":", 1)[1]) in (int(time.time() // 60),
                                                                           int(time.time() // 60) - 1)
        assert 110 <= await raw.ttl(budget[0]) <= 120
        await store.clear("bing")
        assert await raw.exists("metasearch:cooldown:bing") == 0
        assert await raw.exists("metasearch:cooldown:brave") == 1
    finally:
        await raw.aclose()
        await store.close()


async def test_redis_stores_with_different_prefixes_do_not_see_each_other(redis_url):
    ours, theirs = RedisState(redis_url), RedisState(redis_url, prefix="other-app:")
    try:
        await ours.put("bing", ENTRY)
        await theirs.cache_put("k", "theirs", 60)
        assert await theirs.get("bing") is None and await theirs.all() == {}
        assert await ours.cache_get("k") is None and await ours.all() == {"bing": ENTRY}
    finally:
        await ours.close()
        await theirs.close()


async def test_concurrent_redis_updates_all_count(redis_url):
    """WATCH/MULTI/EXEC: writers racing on one key retry until each increment lands."""
    writers = [RedisState(redis_url) for _ in range(4)]

    def bump(entry):
        return CooldownEntry(until=0.0, failures=(entry.failures if entry else 0) + 1, status="error")

    try:
        await asyncio.gather(*(w.update("bing", bump, 600) for w in writers for _ in range(15)))
        assert (await writers[0].get("bing")).failures == 60
    finally:
        for w in writers:
            await w.close()


async def test_one_process_s_concurrent_redis_updates_of_a_key_never_conflict(redis_url):
    """Updates of one key from one process wait for each other: each computes its change once (no EXEC
    that our own writer made fail, no retry), so a burst of them cannot use up the retries."""
    store = RedisState(redis_url)
    computed = 0

    def bump(entry):
        nonlocal computed
        computed += 1
        return CooldownEntry(until=0.0, failures=(entry.failures if entry else 0) + 1, status="error")

    try:
        await asyncio.gather(*(store.update("mojeek", bump, 600) for _ in range(30)))
        assert (await store.get("mojeek")).failures == 30
        assert computed == 30
    finally:
        await store.close()


async def test_an_unreachable_redis_is_redis_unavailable_naming_the_error():
    store = RedisState(f"redis://127.0.0.1:{free_port()}/0")
    for call in (store.get("bing"), store.update("bing", lambda _: ENTRY, 60), store.all(),
                 store.cache_put("k", "v", 60)):
        with pytest.raises(RedisUnavailable, match=r"^(ConnectionError|ConnectionRefusedError|OSError): .+"):
            await call
    await store.close()


# ----- failover: Redis down, the embedded store carries on, and says so -----
async def test_failover_uses_the_fallback_while_redis_is_down_and_says_so(caplog):
    url = f"redis://user:hunter22@127.0.0.1:{free_port()}/0"
    fallback = MemoryState()
    store = FailoverState(RedisState(url), fallback)
    assert store.warnings == []
    with caplog.at_level(logging.WARNING, logger="metasearch.state"):
        await store.put("bing", ENTRY)
    assert await fallback.get("bing") == ENTRY and await store.get("bing") == ENTRY
    warning = [r.getMessage() for r in caplog.records if "redis unavailable" in r.getMessage()]
    assert len(warning) == 1 and "Connection" in warning[0] and warning[0].endswith("using the memory store")
    assert store.warnings == [f"redis unavailable at redis://****@127.0.0.1:{url.rsplit(':', 1)[1]}; "
                              "using the embedded memory store"]
    await store.cache_put("k", "v", 60)
    await store.update("brave", lambda _: ENTRY, 60)
    assert await fallback.cache_get("k") == "v" and await store.cache_get("k") == "v"
    assert await store.all() == {"bing": ENTRY, "brave": ENTRY}
    await store.clear("bing")
    assert await fallback.get("bing") is None
    assert await store.spend("x", 1) is True and await store.spend("x", 1) is False
    assert len([r for r in caplog.records if "redis unavailable" in r.getMessage()]) == 1  # retried after RETRY_S
    await store.close()
    await store.primary.close()


# ----- SQLite: what it purges, and a failure that costs only that bit of state -----
async def test_sqlite_update_forgets_entries_not_written_for_keep_s(tmp_path):
    now = [1000.0]
    store = SqliteState(tmp_path / "s.db", clock=lambda: now[0], wait_s=5)
    await store.put("bing", ENTRY)
    now[0] += 100
    await store.update("brave", lambda _: ENTRY, keep_s=100)  # bing written exactly keep_s ago: kept
    assert await store.get("bing") == ENTRY
    now[0] += 0.5
    await store.update("brave", lambda _: ENTRY, keep_s=100)
    assert await store.get("bing") is None and await store.get("brave") == ENTRY
    await store.close()


async def test_sqlite_cache_entries_expire_at_their_time_and_are_purged_on_write(tmp_path):
    now = [1000.0]
    store = SqliteState(tmp_path / "s.db", clock=lambda: now[0], wait_s=5)
    await store.cache_put("old", "v", 10)
    now[0] += 9.9
    assert await store.cache_get("old") == "v"
    now[0] += 0.1
    assert await store.cache_get("old") is None
    await store.cache_put("new", "w", 10)
    await store.flush()  # writes are committed in the background
    rows = store._db.execute("SELECT key FROM cache").fetchall()
    assert rows == [("new",)]
    await store.close()


async def test_sqlite_budget_starts_again_each_minute_and_forgets_old_minutes(tmp_path):
    now = [60 * 1000 + 59.0]
    store = SqliteState(tmp_path / "s.db", clock=lambda: now[0], wait_s=5)
    assert await store.spend("bing", 1) is True and await store.spend("bing", 1) is False
    now[0] += 1  # the next minute
    assert await store.spend("bing", 1) is True
    assert store._db.execute("SELECT window FROM budget").fetchall() == [(1001,)]
    await store.close()


async def test_a_failing_sqlite_update_still_answers_and_reports_the_store(tmp_path):
    store = SqliteState(tmp_path / "s.db", wait_s=5)
    await store.close()
    with collecting_problems() as problems:
        entry = await store.update("bing", lambda old: CooldownEntry(until=5.0, failures=1 if old is None else 9,
                                                                      status="timeout"), 60)
    assert entry.failures == 1  # the window the caller would have had, from no stored entry
    assert problems == [f"state store {tmp_path / 's.db'} failed (ProgrammingError: the state store is closed); "
                        "continuing without it"]


async def test_redis_expiry_is_never_zero_nor_rounded_up(redis_url):
    """A keep or TTL under a second still expires (Redis refuses 0), after one second, not two."""
    store = RedisState(redis_url)
    raw = await raw_redis(redis_url)
    try:
        await store.put("bing", ENTRY, keep_s=0.3)
        await store.cache_put("k", "v", 0.5)
        for key in ("metasearch:cooldown:bing", "metasearch:cache:k"):
            assert await raw.pttl(key) <= 1000 and await raw.pttl(key) != -1  # -2 once gone: still fine
    finally:
        await raw.aclose()
        await store.close()


def _clients(url) -> int:
    """Connections to the test's own database (another test worker may use the same server meanwhile)."""
    import redis
    with redis.Redis.from_url(url) as client:
        database = str(client.connection_pool.connection_kwargs.get("db", 0))
        return sum(1 for entry in client.client_list() if str(entry.get("db")) == database)


def test_a_redis_store_closes_its_connection_when_its_loop_ends_or_at_close(redis_url):
    """One connection per event loop (asyncio.run per tool call), closed when that loop ends, or at
    close() inside it: a long-lived process does not pile up connections on a shared Redis."""
    store = RedisState(redis_url)
    before = _clients(redis_url)

    async def use(then_close: bool):
        await store.cache_put("k", "v", 60)
        assert _clients(redis_url) == before + 1
        if then_close:
            await store.close()
            assert _clients(redis_url) == before

    asyncio.run(use(then_close=False))
    assert _clients(redis_url) == before  # the loop ended: its connection went with it
    asyncio.run(use(then_close=False))  # a new loop gets a connection of its own, which works
    assert _clients(redis_url) == before
    asyncio.run(use(then_close=True))


async def test_a_redis_update_that_always_conflicts_gives_up_naming_why(redis_url):
    """Another writer changing the key between WATCH and EXEC, every time: after its retries the update
    raises RedisUnavailable (the failover store then takes over) instead of spinning for ever."""
    import redis

    store = RedisState(redis_url)
    rival = redis.Redis.from_url(redis_url)
    calls = []

    def change_while_another_writes(entry):
        calls.append(entry)
        rival.incr("metasearch:cooldown:bing:rival")  # not our key: must not conflict
        rival.set("metasearch:cooldown:bing", '{"until": 0, "failures": %d, "status": "error"}' % len(calls))
        return ENTRY

    try:
        with pytest.raises(RedisUnavailable, match="^cooldown update kept conflicting with other writers$"):
            await store.update("bing", change_while_another_writes, 60)
        assert len(calls) == 100
    finally:
        rival.close()
        await store.close()


async def test_closing_at_exit_ends_the_store_and_later_calls_only_degrade(tmp_path):
    """Interpreter exit closes the embedded store from outside any loop; a call after that (a task still
    finishing) is answered like any failed operation, with the reason, never an exception."""
    store = SqliteState(tmp_path / "s.db", wait_s=5)
    await store.put("bing", ENTRY)
    failover = FailoverState(RedisState(f"redis://127.0.0.1:{free_port()}/0"), store)
    failover.close_at_exit()  # closes the embedded store behind it
    closed = [f"state store {tmp_path / 's.db'} failed (ProgrammingError: the state store is closed); "
              "continuing without it"]
    with collecting_problems() as problems:
        assert await store.get("bing") is None
    assert problems == closed
    store.close_at_exit()  # twice: nothing more happens
    with collecting_problems() as problems:
        assert await store.spend("bing", 1) is True
    assert problems == closed
    FailoverState(RedisState("redis://127.0.0.1:1/0"), MemoryState()).close_at_exit()  # nothing to close


@pytest.mark.parametrize("wedged", ["from the start", "after the handshake"])
async def test_a_redis_that_stops_answering_is_unavailable_not_a_hang(wedged):
    """A wedged Redis (the port open, nothing coming back) must not hold a search: the connect and
    socket timeouts turn it into RedisUnavailable, and the failover store takes over."""
    accepted = []

    async def silent(reader, writer):
        accepted.append(writer)  # keep the connection open
        while wedged == "after the handshake" and (chunk := await reader.read(65536)):
            lines = chunk.split(b"\r\n")
            if any(line.upper() == b"GET" for line in lines):
                break  # the first real command: from here on, silence
            writer.write(b"+OK\r\n" * sum(1 for line in lines if line.startswith(b"*")))  # CLIENT SETINFO ...
            await writer.drain()
        await asyncio.sleep(3600)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    store = RedisState(f"redis://127.0.0.1:{port}/0")
    try:
        with pytest.raises(RedisUnavailable, match="Timeout"):
            await asyncio.wait_for(store.get("bing"), 30)  # a hang would end here, as TimeoutError
        assert accepted
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
        await store.close()


# ----- opening the embedded store -----
def test_a_new_store_file_is_switched_to_wal(tmp_path):
    """WAL lets the readers of one process and the writer of another overlap (the file keeps the mode)."""
    import sqlite3

    SqliteState(tmp_path / "new.db").close_at_exit()
    with sqlite3.connect(tmp_path / "new.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _refusing_connect(monkeypatch, message: str, times: int) -> list[int]:
    """sqlite3.connect whose first `times` connections fail to switch the file with `message`."""
    import sqlite3

    import plugin.infra.state as state_module

    real_connect, calls = sqlite3.connect, []

    class Refusing:
        def __init__(self, db):
            self._db = db

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA journal_mode") and len(calls) <= times:
                raise sqlite3.OperationalError(message)
            return self._db.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._db, name)

    def connect(*args, **kwargs):
        calls.append(1)
        return Refusing(real_connect(*args, **kwargs))

    monkeypatch.setattr(state_module.sqlite3, "connect", connect)
    return calls


def test_opening_retries_a_busy_or_locked_file_and_gives_up_after_ten_tries(tmp_path, monkeypatch):
    import sqlite3

    calls = _refusing_connect(monkeypatch, "database is busy", times=1)
    SqliteState(tmp_path / "busy.db").close_at_exit()
    assert len(calls) == 2
    calls = _refusing_connect(monkeypatch, "database is locked", times=100)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        SqliteState(tmp_path / "locked.db")
    assert len(calls) == 10


def test_opening_does_not_retry_other_errors(tmp_path, monkeypatch):
    import sqlite3

    calls = _refusing_connect(monkeypatch, "disk I/O error", times=100)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        SqliteState(tmp_path / "broken.db")
    assert len(calls) == 1


def test_an_unusable_store_file_is_logged_with_its_reason(tmp_path, caplog):
    from plugin.infra.state import embedded_state
    from plugin.settings import Settings

    (tmp_path / "state.sqlite3").write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="metasearch.state"):
        state = embedded_state(Settings(state_dir=tmp_path))
    expected = (f"state store {tmp_path / 'state.sqlite3'} unusable (DatabaseError: file is not a database); "
                "using in-memory state")
    assert isinstance(state, MemoryState) and state.warnings == [expected]
    assert [r.getMessage() for r in caplog.records] == [expected]


async def test_a_failing_update_is_logged_as_it_is_reported(tmp_path, caplog):
    store = SqliteState(tmp_path / "s.db", wait_s=5)
    await store.close()
    with caplog.at_level(logging.WARNING, logger="metasearch.state"), collecting_problems() as problems:
        await store.update("bing", lambda _: ENTRY, 60)
    assert [r.getMessage() for r in caplog.records] == problems and len(problems) == 1


async def test_memory_cache_forgets_an_expired_entry_when_it_is_read():
    now = [100.0]
    store = MemoryState(clock=lambda: now[0])
    await store.cache_put("k", "v", 5)
    now[0] = 105.0
    assert await store.cache_get("k") is None and "k" not in store._cache  # not kept until the next purge


async def test_the_embedded_store_makes_its_folders_and_runs_on_threads_of_its_own(tmp_path):
    """~/.local/state may not exist yet on a new machine; and the store's work runs on named threads of
    its own, never the caller's: reads on reader threads, every write on one writer thread (so writes are
    committed in the order they were asked and transactions never interleave)."""
    import threading

    store = SqliteState(tmp_path / "not" / "yet" / "there" / "state.db", wait_s=5)
    readers = await asyncio.gather(*(store._read(lambda db: threading.current_thread().name) for _ in range(20)))
    writers = await asyncio.gather(*(store._queue(lambda db: threading.current_thread().name) for _ in range(20)))
    assert all(name.startswith("metasearch-sqlite-read") for name in readers)
    assert set(writers) == {"metasearch-sqlite-write"}
    assert threading.current_thread().name not in {*readers, *writers}
    await store.close()


def test_the_state_backend_setting_picks_the_store(tmp_path):
    from plugin.infra.state import open_state
    from plugin.settings import Settings

    url = f"redis://127.0.0.1:{free_port()}/0"
    assert type(open_state(Settings(state_backend="memory", redis_url=url))) is MemoryState
    embedded = open_state(Settings(state_backend="auto", state_dir=tmp_path))
    assert type(embedded) is SqliteState
    embedded.close_at_exit()
    for backend in ("auto", "redis"):
        store = open_state(Settings(state_backend=backend, redis_url=url, state_dir=tmp_path))
        assert type(store) is FailoverState and store.primary.url == url
        store.close_at_exit()
    alone = open_state(Settings(state_backend="redis", state_dir=tmp_path))
    assert type(alone) is MemoryState
    assert alone.warnings == ["state_backend is redis but METASEARCH_REDIS_URL is not set"]


def test_a_redis_url_without_the_redis_package_uses_the_embedded_store_and_says_so(tmp_path, monkeypatch):
    import importlib.util

    from plugin.infra.state import open_state
    from plugin.settings import Settings

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a))
    store = open_state(Settings(redis_url="redis://127.0.0.1:6379/0", state_dir=tmp_path))
    assert type(store) is SqliteState
    assert store.warnings == ["METASEARCH_REDIS_URL is set but the redis package is not installed "
                              "(pip install 'metasearch[redis]'); using the embedded store"]
    store.close_at_exit()
