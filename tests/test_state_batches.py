"""The embedded store's writer, write by write (issue 29, items 8 and 11): what one batch of queued writes
commits, what this process's reads answer before a write is committed, and what a failure leaves.

The writer thread is held still (`held_writer`: a queued write that waits on an event) so that the writes
queued meanwhile land in one batch, deterministically; "another process" holding the file is a second
connection with the write lock, as test_state_waits.py does.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from plugin.infra.cooldown import CooldownEntry, Cooldowns
from plugin.infra.state import SqliteState, _commit, _Write, collecting_problems
from plugin.settings import Settings

ENTRY = CooldownEntry(until=2_000_000_000.0, failures=2, status="ratelimited", detail="HTTP 429")
OTHER = CooldownEntry(until=2_000_000_500.0, failures=1, status="timeout", detail="no answer")


@asynccontextmanager
async def held_writer(store: SqliteState):
    """The writer thread busy with a write of ours until the block ends: every write queued inside the
    block is committed afterwards, together, in one batch."""
    inside, release = threading.Event(), threading.Event()
    done = store._queue(lambda db: (inside.set(), release.wait(30)))
    await asyncio.to_thread(inside.wait, 30)
    try:
        yield
    finally:
        release.set()
        await done


def committed(path: Path, engine: str) -> tuple | None:
    """What another process reads of `engine`'s cooldown: only committed writes."""
    with sqlite3.connect(str(path)) as db:
        return db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                          (engine,)).fetchone()


def locked_by_another_process(path: Path) -> sqlite3.Connection:
    other = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


def bump(entry: CooldownEntry | None) -> CooldownEntry:
    return CooldownEntry(until=3_000_000_000.0, failures=(entry.failures if entry else 0) + 1, status="blocked",
                         detail="captcha")


@pytest.fixture
async def store(tmp_path):
    made = SqliteState(tmp_path / "s.db", wait_s=5)
    await made.flush()  # the file and its tables exist
    yield made
    await made.close()


# ----- item 8: a success behind a failure; a failure seen by its own process -----
async def test_a_success_queued_behind_a_failure_in_one_batch_clears_the_cooldown(store):
    """A failure (update) and then a success (clear) of one engine, committed in one batch: the clear's
    "is anything stored?" check ran before the failure was written, so it dropped the clear, and the
    engine stayed benched for its whole window."""
    async with held_writer(store):
        failure = asyncio.create_task(store.update("bing", bump, 3600))
        await asyncio.sleep(0)  # the update's write is queued
        await store.clear("bing")
    assert (await failure).failures == 1
    await store.flush()
    assert committed(store.path, "bing") is None
    assert await store.get("bing") is None


async def test_a_failure_this_process_recorded_is_visible_before_it_is_committed(store, tmp_path):
    """Another process holds the write lock: the failure is recorded in the background, and until then
    this process's reads answer it (a 1,800 s `blocked` window, not "not benched")."""
    store.wait_s = 0.1
    clock = lambda: 1_000_000.0  # noqa: E731
    cooldowns = Cooldowns(Settings(), store, clock=clock)
    other = locked_by_another_process(store.path)
    try:
        with collecting_problems() as problems:
            entry = await cooldowns.failure("bing", "blocked", detail="captcha")
        assert entry.status == "blocked" and entry.until == 1_000_000.0 + Settings().cooldown_blocked_s
        assert any("did not answer within 100 ms (a write, which goes on in the background)" in p for p in problems)
        assert committed(store.path, "bing") is None  # not committed yet...
        assert await cooldowns.active("bing") == entry  # ...and yet benched for this process
        assert await store.all() == {"bing": entry}
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.flush()
    assert committed(store.path, "bing") == (entry.until, 1, "blocked", "captcha")
    assert store._unsaved_cooldowns == {}  # committed: answered from the file from now on
    assert await cooldowns.active("bing") == entry


async def test_a_write_queued_after_a_failure_still_wins_over_it_in_this_process(store):
    """The failure falls back (the lock is held) after a later success was queued: this process reads
    what will be committed last, the success, not the failure."""
    store.wait_s = 0.1
    other = locked_by_another_process(store.path)
    try:
        failure = asyncio.create_task(store.update("bing", bump, 3600))
        await asyncio.sleep(0)
        await store.clear("bing")
        assert (await failure).status == "blocked"  # fell back: the change of nothing known
        assert await store.get("bing") is None
        await store.put("brave", ENTRY)
        failure = asyncio.create_task(store.update("brave", bump, 3600))
        await asyncio.sleep(0)
        await store.put("brave", OTHER)
        assert (await failure).failures == 3  # of the entry known (brave's queued put)
        assert await store.get("brave") == OTHER
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.flush()
    assert committed(store.path, "bing") is None
    assert committed(store.path, "brave") == (OTHER.until, OTHER.failures, OTHER.status, OTHER.detail)
    assert store._unsaved_cooldowns == {}


# ----- item 11: behaviour each hand-written mutant changed unnoticed -----
async def test_a_clear_after_a_put_in_one_batch_deletes_what_the_put_wrote(store):
    async with held_writer(store):
        await store.put("bing", ENTRY)
        await store.clear("bing")
        await store.put("brave", OTHER)
        assert await store.get("bing") is None and await store.get("brave") == OTHER
    await store.flush()
    assert committed(store.path, "bing") is None
    assert committed(store.path, "brave") == (OTHER.until, OTHER.failures, OTHER.status, OTHER.detail)
    assert await store.get("bing") is None and store._unsaved_cooldowns == {}


async def test_clears_alone_take_no_lock_when_nothing_is_stored_and_delete_what_is(store):
    """A batch of clears only: each asks first whether its engine has an entry; one that has none writes
    nothing (no lock taken: another process holding it does not hold the clear up), one that has is deleted."""
    await store.put("bing", ENTRY)
    await store.flush()
    other = locked_by_another_process(store.path)
    try:
        await store.clear("never-benched")
        for _ in range(500):  # done (nothing to write), though the lock is still held elsewhere
            if not store._unsaved_cooldowns:
                break
            await asyncio.sleep(0.01)
        assert store._unsaved_cooldowns == {}
    finally:
        other.execute("ROLLBACK")
        other.close()
    async with held_writer(store):
        await store.clear("never-benched")
        await store.clear("bing")
    await store.flush()
    assert committed(store.path, "bing") is None


async def test_a_newer_unsaved_write_is_kept_until_it_is_saved(store):
    """put A, then put B of the same engine in the next batch: when A is committed, B (not yet committed)
    is still what this process reads, not A from the file."""
    inside, release = threading.Event(), threading.Event()
    async with held_writer(store):
        await store.put("bing", ENTRY)  # batch 1, with the next write of ours
        store._queue(lambda db: (inside.set(), release.wait(30)))
    await asyncio.to_thread(inside.wait, 30)  # batch 1 is being written; B is queued after it
    await store.put("bing", OTHER)
    second_hold = threading.Event()
    store._queue(lambda db: second_hold.wait(30))  # batch 2: B, then a write that waits
    release.set()
    try:
        for _ in range(500):  # batch 1 committed: ENTRY is in the file
            if committed(store.path, "bing") is not None:
                break
            await asyncio.sleep(0.01)
        assert committed(store.path, "bing")[1] == ENTRY.failures
        assert await store.get("bing") == OTHER
        assert await store.all() == {"bing": OTHER}
    finally:
        second_hold.set()
    await store.flush()
    assert await store.get("bing") == OTHER and store._unsaved_cooldowns == {}


async def test_the_cache_keeps_a_newer_unsaved_value_until_it_is_saved(store):
    inside, release = threading.Event(), threading.Event()
    await store.cache_put("k", "old", 600)
    store._queue(lambda db: (inside.set(), release.wait(30)))
    await asyncio.to_thread(inside.wait, 30)
    await store.cache_put("k", "new", 600)
    hold = threading.Event()
    store._queue(lambda db: hold.wait(30))
    release.set()
    try:
        for _ in range(500):
            with sqlite3.connect(str(store.path)) as db:
                if db.execute("SELECT value FROM cache WHERE key = 'k'").fetchone() == ("old",):
                    break
            await asyncio.sleep(0.01)
        assert await store.cache_get("k") == "new"
    finally:
        hold.set()
    await store.flush()
    assert await store.cache_get("k") == "new" and store._unsaved_cache == {}


async def test_a_write_that_fails_is_rolled_back_to_its_savepoint_and_the_batch_goes_on(store):
    def half_then_fail(db):
        db.execute("INSERT INTO cache VALUES ('half', 9e18, 'written before the failure', 10)")
        raise sqlite3.IntegrityError("this write fails")

    async with held_writer(store):
        await store.put("bing", ENTRY)
        failing = store._queue(half_then_fail)
        await store.cache_put("after", "v", 600)
    with pytest.raises(sqlite3.IntegrityError, match="this write fails"):
        await failing
    await store.flush()
    with sqlite3.connect(str(store.path)) as db:
        keys = {key for (key,) in db.execute("SELECT key FROM cache")}
    assert keys == {"after"}  # the failed write's half is undone, the writes around it are committed
    assert committed(store.path, "bing") is not None


def test_a_batch_whose_commit_fails_is_rolled_back_whole_and_the_next_one_commits(tmp_path):
    """The transaction cannot be committed (a full disk, an I/O error): every write of the batch reports
    the failure, nothing of it stays, and the connection is out of the transaction for the next batch."""
    db = sqlite3.connect(str(tmp_path / "c.db"), isolation_level=None)
    db.execute("CREATE TABLE t (v TEXT)")

    class CommitFails:
        def __init__(self):
            self.failed = False

        def execute(self, sql, *args):
            if sql == "COMMIT" and not self.failed:
                self.failed = True
                raise sqlite3.OperationalError("disk I/O error")
            return db.execute(sql, *args)

        @property
        def in_transaction(self):
            return db.in_transaction

    outcomes = []
    batch = [_Write(lambda c, v=v: c.execute("INSERT INTO t VALUES (?)", (v,)),
                    lambda result, exc: outcomes.append(exc)) for v in ("a", "b")]
    wrapped = CommitFails()
    _commit(wrapped, batch)
    assert [str(exc) for exc in outcomes] == ["disk I/O error", "disk I/O error"]
    assert not db.in_transaction and db.execute("SELECT v FROM t").fetchall() == []
    outcomes.clear()
    _commit(wrapped, [_Write(lambda c: c.execute("INSERT INTO t VALUES ('c')"), lambda r, e: outcomes.append(e))])
    assert outcomes == [None] and db.execute("SELECT v FROM t").fetchall() == [("c",)]
    db.close()


async def test_update_falls_back_to_the_change_of_the_entry_known_when_the_store_is_too_slow(store):
    """The write lock held elsewhere longer than `wait_s`: update answers the entry the change makes of the
    one this process knows (its queued put), says the store did not answer, and the write still happens."""
    store.wait_s = 0.1
    await store.flush()
    other = locked_by_another_process(store.path)
    try:
        await store.put("bing", ENTRY)
        with collecting_problems() as problems:
            entry = await store.update("bing", bump, 3600)
        assert entry.failures == ENTRY.failures + 1
        assert problems == [f"state store {store.path} did not answer within 100 ms (a write, which goes on in "
                            "the background); continuing without it"]
        with collecting_problems() as problems:
            entry = await store.update("brave", bump, 3600)  # nothing known: the change of nothing
        assert entry.failures == 1 and len(problems) == 1
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.flush()
    assert committed(store.path, "bing")[1] == ENTRY.failures + 1 and committed(store.path, "brave")[1] == 1


async def test_a_queued_cache_value_is_a_miss_from_exactly_its_expiry(tmp_path):
    now = [1000.0]
    store = SqliteState(tmp_path / "s.db", clock=lambda: now[0], wait_s=5)
    async with held_writer(store):  # not committed: answered from the queue
        await store.cache_put("k", "v", 10)
        now[0] = 1009.999
        assert await store.cache_get("k") == "v"
        now[0] = 1010.0
        assert await store.cache_get("k") is None
    await store.flush()
    assert await store.cache_get("k") is None  # committed: the same from the file
    now[0] = 1009.5
    assert await store.cache_get("k") == "v"
    await store.close()


async def test_every_read_of_a_closed_store_degrades_and_a_search_hears_of_it_once(tmp_path):
    store = SqliteState(tmp_path / "s.db", wait_s=5)
    await store.close()
    with collecting_problems() as problems:
        assert await store.get("bing") is None
        assert await store.all() == {}
        assert await store.cache_get("k") is None
        assert await store.usage() is None
        await store.cache_put("k", "v", 60)
        await store.clear("bing")
    assert problems == [f"state store {store.path} failed (ProgrammingError: the state store is closed); "
                        "continuing without it"]


async def test_problems_outside_a_search_are_only_logged(tmp_path, caplog):
    import logging

    from plugin.infra.state import note_problem

    note_problem("nobody collects this")  # no search under way: nothing to add it to, nothing raised
    store = SqliteState(tmp_path / "s.db", wait_s=5)
    await store.close()
    with caplog.at_level(logging.WARNING, logger="metasearch.state"):
        assert await store.get("bing") is None
    assert "the state store is closed" in caplog.text
    with collecting_problems() as outer:
        with collecting_problems() as inner:
            note_problem("inner only")
        note_problem("outer")
    assert inner == ["inner only"] and outer == ["outer"]


async def test_a_read_still_queued_when_its_caller_gave_up_is_never_run(tmp_path):
    from plugin.infra.state import READERS

    store = SqliteState(tmp_path / "s.db", wait_s=0.1)
    release = threading.Event()
    for _ in range(READERS):  # every reader busy (earlier reads of a burst)
        store._readers.submit(release.wait)
    ran = []
    with pytest.raises(sqlite3.OperationalError, match="no answer within 100 ms"):
        await store._read(lambda db: ran.append(1))
    release.set()
    await store.close()  # waits until the readers have worked through their queue
    assert ran == []
