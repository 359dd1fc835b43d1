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
