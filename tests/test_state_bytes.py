"""Every store's cache is capped in bytes (issue 29, item 23): past `state_max_bytes` the oldest written
entries go first, an entry larger than the cap is not kept, expired entries go before live ones, and each
store says how full it is. Memory, SQLite (one file shared by two stores, as two processes share it) and
a real Redis."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from plugin.infra.cooldown import CooldownEntry
from plugin.infra.state import MemoryState, RedisState, SqliteState
from plugin.settings import Settings
from test_state import free_port, redis_server, redis_url  # noqa: F401  (a real Redis, as the state tests use)

CAP = 10_000
VALUE = "v" * 3000  # three fit under CAP in every store (with each store's own overhead), four do not


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def capped(request, tmp_path):
    clock = FakeClock()
    if request.param == "memory":
        store = MemoryState(clock=clock, max_bytes=CAP)
    elif request.param == "sqlite":
        store = SqliteState(tmp_path / "s.db", clock=clock, wait_s=5, max_bytes=CAP)
    else:
        store = RedisState(request.getfixturevalue("redis_url"), prefix=f"bytes-{id(clock)}:", max_bytes=CAP)
    store.test_clock = clock
    yield store
    await store.close()


async def settle(store) -> None:
    if isinstance(store, SqliteState):
        await store.flush()


async def kept(store, *keys: str) -> list[str]:
    return [key for key in keys if await store.cache_get(key) is not None]


async def test_past_the_cap_the_oldest_written_go_first(capped):
    for key in ("a", "b", "c"):
        await capped.cache_put(key, VALUE, 600)
    await settle(capped)
    assert await kept(capped, "a", "b", "c") == ["a", "b", "c"]
    await capped.cache_put("d", VALUE, 600)
    await settle(capped)
    assert await kept(capped, "a", "b", "c", "d") == ["b", "c", "d"]
    usage = await capped.usage()
    assert usage["entries"] == 3 and 3 * 3000 < usage["bytes"] <= CAP and usage["max_bytes"] == CAP
    assert usage["used_percent"] == round(100 * usage["bytes"] / CAP, 1)


async def test_a_value_written_again_is_the_newest(capped):
    for key in ("a", "b", "c"):
        await capped.cache_put(key, VALUE, 600)
    await capped.cache_put("a", VALUE.upper(), 600)  # a is now the newest: b is the oldest
    await capped.cache_put("d", VALUE, 600)
    await settle(capped)
    assert await kept(capped, "a", "b", "c", "d") == ["a", "c", "d"]
    assert await capped.cache_get("a") == VALUE.upper()
    assert (await capped.usage())["entries"] == 3


async def test_many_small_entries_make_way_for_a_large_one_and_the_count_stays_true(capped):
    for i in range(40):
        await capped.cache_put(f"small{i}", "s" * 100, 600)
    await capped.cache_put("large", "L" * 7000, 600)
    await settle(capped)
    assert await capped.cache_get("large") == "L" * 7000
    left = await kept(capped, *(f"small{i}" for i in range(40)))
    assert left and left == [f"small{i}" for i in range(40 - len(left), 40)]  # the newest small ones stay
    usage = await capped.usage()
    assert usage["entries"] == len(left) + 1 and usage["bytes"] <= CAP


async def test_an_entry_larger_than_the_cap_is_not_kept_and_drops_what_its_key_held(capped):
    await capped.cache_put("a", VALUE, 600)
    await capped.cache_put("b", VALUE, 600)
    await capped.cache_put("b", "x" * (CAP + 1), 600)
    assert await capped.cache_get("b") is None  # at once, before anything is committed
    await settle(capped)
    assert await kept(capped, "a", "b") == ["a"]
    assert (await capped.usage())["entries"] == 1


async def test_expired_entries_go_before_live_ones(capped):
    await capped.cache_put("live", VALUE, 600)  # older than the expired one: still it stays
    if isinstance(capped, RedisState):
        await capped.cache_put("old", VALUE, 0.05)  # Redis keeps time itself
        await asyncio.sleep(0.2)
    else:
        await capped.cache_put("old", VALUE, 5)
        capped.test_clock.now += 10
    await capped.cache_put("b", VALUE, 600)
    await capped.cache_put("c", VALUE, 600)
    await settle(capped)
    assert await kept(capped, "old", "live", "b", "c") == ["live", "b", "c"]
    assert (await capped.usage())["entries"] == 3


async def test_cooldowns_and_budgets_are_not_cached_values_and_are_never_dropped(capped):
    entry = CooldownEntry(until=2e9, failures=1, status="blocked")
    await capped.put("bing", entry)
    for i in range(10):
        await capped.cache_put(f"k{i}", VALUE, 600)
    await settle(capped)
    assert await capped.get("bing") == entry


async def test_the_cap_holds_for_two_stores_sharing_one_file(tmp_path):
    """Two processes' stores on one file: the count is the file's, kept by every write."""
    first = SqliteState(tmp_path / "s.db", wait_s=5, max_bytes=CAP)
    second = SqliteState(tmp_path / "s.db", wait_s=5, max_bytes=CAP)
    try:
        await first.cache_put("a", VALUE, 600)
        await first.cache_put("b", VALUE, 600)
        await first.flush()
        await second.cache_put("c", VALUE, 600)
        await second.cache_put("d", VALUE, 600)
        await second.flush()
        assert await kept(first, "a", "b", "c", "d") == ["b", "c", "d"]
        with sqlite3.connect(str(tmp_path / "s.db")) as db:
            total = db.execute("SELECT total FROM cache_bytes").fetchone()[0]
            assert total == db.execute("SELECT sum(size) FROM cache").fetchone()[0] <= CAP
        assert await first.usage() == await second.usage()
    finally:
        await first.close()
        await second.close()


async def test_a_store_file_of_an_earlier_version_loses_its_cache_not_its_cooldowns(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(str(path)) as db:
        db.executescript("""
            CREATE TABLE cooldowns (engine TEXT PRIMARY KEY, until REAL, failures INTEGER, status TEXT,
                                    detail TEXT, written REAL);
            CREATE TABLE cache (key TEXT PRIMARY KEY, expires REAL, value TEXT);
            CREATE INDEX cache_expires ON cache (expires);
            INSERT INTO cooldowns VALUES ('bing', 2e9, 2, 'blocked', 'captcha', 1e9);
            INSERT INTO cache VALUES ('answer:old', 9e18, 'uncounted');
        """)
    store = SqliteState(path, wait_s=5, max_bytes=CAP)
    try:
        assert await store.get("bing") == CooldownEntry(until=2e9, failures=2, status="blocked", detail="captcha")
        assert await store.cache_get("answer:old") is None
        assert await store.usage() == {"bytes": 0, "max_bytes": CAP, "entries": 0, "used_percent": 0.0}
        await store.cache_put("new", VALUE, 600)
        await store.flush()
        assert await store.cache_get("new") == VALUE and (await store.usage())["entries"] == 1
    finally:
        await store.close()
    reopened = SqliteState(path, wait_s=5, max_bytes=CAP)  # opening again changes nothing
    assert await reopened.cache_get("new") == VALUE
    await reopened.close()


def test_the_setting_reaches_every_store(tmp_path):
    from plugin.infra.state import open_state

    settings = Settings(state_max_bytes=123_456, state_dir=tmp_path)
    assert open_state(settings.model_copy(update={"state_backend": "memory"})).max_bytes == 123_456
    embedded = open_state(settings)
    assert embedded.max_bytes == 123_456
    embedded.close_at_exit()
    failover = open_state(settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"}))
    assert failover.primary.max_bytes == 123_456 and failover.fallback.max_bytes == 123_456
    failover.close_at_exit()
    assert Settings().state_max_bytes == Settings.model_fields["state_max_bytes"].default


async def test_a_full_memory_store_looks_for_expired_entries_at_most_every_sweep_interval():
    """Looking through every entry on every write of a full store would cost a scan per write: expired
    entries are looked for at most every SWEEP_S; in between, the oldest written go, expired or not."""
    from plugin.infra.state import SWEEP_S

    clock = FakeClock()
    store = MemoryState(clock=clock, max_bytes=CAP)
    for key in ("x1", "x2", "x3", "x4"):  # full at once: looked (nothing expired), x1 dropped
        await store.cache_put(key, VALUE, 600)
    await store.cache_put("x3", VALUE, 5)  # x3 written again, short-lived: x2, x4, x3
    clock.now += 10
    await store.cache_put("y", VALUE, 600)  # x3 expired, but not looked for yet: the oldest, x2, goes
    assert await kept(store, "x2", "x4") == ["x4"]
    clock.now += SWEEP_S - 10
    await store.cache_put("z", VALUE, 600)  # SWEEP_S since the last look: x3 is found, x4 stays
    assert await kept(store, "x4", "y", "z") == ["x4", "y", "z"]
    assert SWEEP_S == 30.0


async def test_a_cache_holding_exactly_the_cap_keeps_everything_and_one_byte_more_drops_the_oldest(capped):
    await capped.cache_put("a", "v" * 4000, 600)
    await settle(capped)
    first = (await capped.usage())["bytes"]
    overhead = first - 4000  # what this store counts beyond a value, for a key as long as "a"
    await capped.cache_put("b", "w" * (CAP - first - overhead), 600)  # exactly the cap in all
    await settle(capped)
    assert (await capped.usage())["bytes"] == CAP
    assert await kept(capped, "a", "b") == ["a", "b"]
    await capped.cache_put("b", "w" * (CAP - first - overhead + 1), 600)  # one byte over
    await settle(capped)
    assert await kept(capped, "a", "b") == ["b"]


# ----- how full: `metasearch config` and `/health` say it -----
def test_config_says_how_full_the_store_is_without_creating_one(private_state, monkeypatch, capsys):
    import json

    from plugin.infra.state import state_path
    from plugin.surfaces.cli import main

    monkeypatch.setenv("METASEARCH_STATE_MAX_BYTES", "500000")
    assert main(["config", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["state_store"]
    path = state_path(Settings())
    assert report == {"backend": "sqlite", "path": str(path), "bytes": 0, "max_bytes": 500_000, "entries": 0,
                      "used_percent": 0.0}
    assert not path.exists()  # looking did not create it

    async def fill() -> None:
        store = SqliteState(path, wait_s=5, max_bytes=500_000)
        await store.cache_put("answer:one", "x" * 100_000, 600)
        await store.cache_put("pages:two", "y" * 25_000, 600)
        await store.close()

    asyncio.run(fill())
    assert main(["config"]) == 0
    report = json.loads(capsys.readouterr().out)["state_store"]
    assert report["entries"] == 2 and 125_000 < report["bytes"] < 126_000
    assert report["used_percent"] == round(100 * report["bytes"] / 500_000, 1) and report["max_bytes"] == 500_000


async def test_health_says_how_full_the_store_is():
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.pipeline.searcher import Searcher
    from plugin.surfaces.service import build_app

    settings = Settings(state_backend="memory", state_max_bytes=50_000)
    searcher = Searcher(settings)
    await searcher.state.cache_put("answer:k", "z" * 20_000, 600)
    async with TestClient(TestServer(build_app(settings, searcher))) as client:
        health = await (await client.get("/health")).json()
    store = health["state_store"]
    assert store["backend"] == "memory" and store["entries"] == 1 and store["max_bytes"] == 50_000
    assert 20_000 < store["bytes"] < 21_000 and store["used_percent"] == round(store["bytes"] / 500, 1)


async def test_a_store_that_cannot_say_how_full_it_is_is_said_unknown():
    from plugin.infra.state import state_usage

    class Silent(MemoryState):
        async def usage(self):
            await asyncio.sleep(3600)

    report = await state_usage(Silent(max_bytes=20_000), timeout_s=0.05)
    assert report == {"backend": "memory", "bytes": None, "max_bytes": 20_000, "entries": None, "used_percent": None}


async def test_the_store_files_stay_near_the_cap_whatever_is_written(tmp_path):
    """4 MB in one batch, then 4 MB more one value at a time, under a 3 MB cap: the file holds about the cap
    (freed pages are reused), and its write-ahead log, 4 MB after that batch, is folded back and cut to
    WAL_BYTES instead of keeping its largest size."""
    import os
    import threading

    from plugin.infra.state import WAL_BYTES

    store = SqliteState(tmp_path / "s.db", wait_s=5, max_bytes=3_000_000)
    await store.flush()
    inside, release = threading.Event(), threading.Event()
    done = store._queue(lambda db: (inside.set(), release.wait(30)))
    await asyncio.to_thread(inside.wait, 30)
    for i in range(40):
        await store.cache_put(f"big{i}", "x" * 100_000, 600)
    release.set()
    await done
    await store.flush()
    assert os.path.getsize(tmp_path / "s.db-wal") > WAL_BYTES  # one batch: the log holds it whole
    for i in range(40):
        await store.cache_put(f"more{i}", "y" * 100_000, 600)
        await store.flush()
    wal, main = os.path.getsize(tmp_path / "s.db-wal"), os.path.getsize(tmp_path / "s.db")
    assert wal <= WAL_BYTES + 65_536 and main <= 4_500_000, (wal, main)
    assert WAL_BYTES == 2 * 1024 * 1024
    await store.close()


async def test_a_file_missing_its_byte_count_gets_it_back_counted(tmp_path):
    """The count and its triggers are made once per file; a file without them (made by hand, or by a
    tool that copied only the tables) gets them again, counting what is there."""
    store = SqliteState(tmp_path / "s.db", wait_s=5, max_bytes=CAP)
    await store.cache_put("a", VALUE, 600)
    await store.close()
    for dropped in ("DROP TRIGGER cache_added; DROP TRIGGER cache_removed; DROP TABLE cache_bytes;",
                    "DROP TRIGGER cache_removed;", "DROP TRIGGER cache_added;"):
        with sqlite3.connect(str(tmp_path / "s.db")) as db:
            db.executescript(dropped)
        again = SqliteState(tmp_path / "s.db", wait_s=5, max_bytes=CAP)
        try:
            first = (await again.usage())["bytes"]
            assert first > 3000
            await again.cache_put("b", VALUE, 600)
            await again.flush()
            assert (await again.usage())["bytes"] == 2 * first, dropped
            await again.cache_put("b", "", 0)  # gone again (written to expire at once, then purged)
            await again.cache_put("c", "", 0)
            await again.flush()
            assert (await again.usage())["bytes"] == first, dropped
        finally:
            await again.close()


def test_config_reports_each_backend_without_creating_a_file(tmp_path, monkeypatch, capsys):
    import json

    from plugin.surfaces.cli import main

    monkeypatch.setenv("METASEARCH_STATE_DIR", str(tmp_path / "fresh"))
    monkeypatch.setenv("METASEARCH_STATE_BACKEND", "sqlite")
    assert main(["config"]) == 0
    report = json.loads(capsys.readouterr().out)["state_store"]
    assert report["backend"] == "sqlite" and report["entries"] == 0 and not (tmp_path / "fresh").exists()
    monkeypatch.setenv("METASEARCH_STATE_BACKEND", "memory")
    assert main(["config"]) == 0
    report = json.loads(capsys.readouterr().out)["state_store"]
    assert report == {"backend": "memory", "bytes": 0, "max_bytes": Settings().state_max_bytes, "entries": 0,
                      "used_percent": 0.0}


async def test_what_a_value_costs_is_counted_in_bytes_not_characters(capped):
    await capped.cache_put("ascii", "e" * 1000, 600)
    await settle(capped)
    ascii_bytes = (await capped.usage())["bytes"]
    await capped.cache_put("ascii", "字" * 1000, 600)  # 2 bytes a character in Python, 3 in UTF-8
    await settle(capped)
    assert (await capped.usage())["bytes"] - ascii_bytes >= 1000


async def test_a_value_with_no_time_to_live_is_not_kept_and_drops_what_its_key_held(capped):
    await capped.cache_put("a", "old", 600)
    await capped.cache_put("a", "new", 0)
    await capped.cache_put("b", "never", -5)
    await settle(capped)
    assert (await capped.usage())["entries"] == 0  # (asked first: a read drops what it finds expired)
    assert await kept(capped, "a", "b") == []


def test_an_upgrade_another_process_made_meanwhile_is_not_made_again(tmp_path):
    """Two processes open an earlier version's file together: the first drops the uncounted cache and makes
    the new one; the second, which saw the old table a moment before, checks again under the lock and
    leaves the new table (and what the first has written to it) alone."""
    from plugin.infra.state import _prepare

    path = tmp_path / "s.db"
    with sqlite3.connect(str(path)) as db:
        _prepare(db)  # the first process: the file is up to date
        db.execute("INSERT INTO cache VALUES ('answer:new', 9e18, 'kept', 10)")

    class SawTheOldTable:
        """The second process's connection, whose first look at the cache table came before the upgrade."""

        def __init__(self, db):
            self.db, self.looked = db, False

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA table_info(cache)") and not self.looked:
                self.looked = True
                return self.db.execute("SELECT 0, 'key' UNION ALL SELECT 1, 'value'")
            return self.db.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self.db, name)

    db = sqlite3.connect(str(path), isolation_level=None)
    _prepare(SawTheOldTable(db))
    assert db.execute("SELECT value FROM cache").fetchall() == [("kept",)]
    assert db.execute("SELECT total FROM cache_bytes").fetchone() == (10,)
    db.close()
