"""Every state store against a plain model (issue 29, "tests that hold invariants"): a Hypothesis stateful
test interleaves cooldown writes (put, update, clear), reads (get, all), cache writes and reads, request
budgets and the passing of time, and after every step the store answers what a dict would.

- memory: the in-process store.
- SQLite in two processes: one store here and one in a child process, on one file. Writes of one process
  are committed (flushed) before the other acts, as the store promises; within one process, its queued
  writes answer its own reads. The writer thread here is held still while this process acts, so that its
  writes are committed in batches (a clear behind a put or a failure, an update behind both); an update
  queued in a batch is answered once the batch commits, and its engine is not compared until then. The
  process here is also restarted now and then (what it queued is committed first).
- Redis: a real redis-server (`METASEARCH_TEST_REDIS_URL`, or one of our own). Redis keeps time itself,
  so its machine does not move the clock (no expiry, no budgets); each example has its own key prefix.

Examples: a quarter of the profile's (`stable`, CI's: 25; `explore`: 500), each of up to 30 steps.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from plugin.infra.cooldown import CooldownEntry
from plugin.infra.state import MemoryState, RedisState, SqliteState
from test_state import redis_server, redis_url  # noqa: F401  (a real Redis, as the state tests use)

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("bing", "brave")
KEYS = ("answer:a", "pages:b", "robots:c")
KEEP_S = 10_000_000.0  # updates forget entries not written for this long: never, within an example
START = 1_000_000.0

# The changes an update applies, by name: the same source here and in the child process.
CHANGES_SOURCE = '''
from plugin.infra.cooldown import CooldownEntry

def bump(entry):
    if entry is None:
        return CooldownEntry(until=100.0, failures=1, status="timeout", detail="")
    return CooldownEntry(until=entry.until + 10.0, failures=entry.failures + 1, status=entry.status,
                         detail=entry.detail[-20:] + "+")

def reset(entry):
    return CooldownEntry(until=5.0, failures=0, status="error", detail="reset")

CHANGES = {"bump": bump, "reset": reset}
'''
namespace: dict = {}
exec(CHANGES_SOURCE, namespace)
CHANGES = namespace["CHANGES"]

CHILD = CHANGES_SOURCE + '''
import asyncio, json, sys
from pathlib import Path
from plugin.infra.state import SqliteState

now = [0.0]
store = None

def entry_json(entry):
    return None if entry is None else [entry.until, entry.failures, entry.status, entry.detail]

async def handle(cmd):
    global store
    now[0] = cmd.get("now", now[0])
    op = cmd["op"]
    if op == "open":
        if store is not None:
            await store.close()
        store = SqliteState(Path(cmd["path"]), clock=lambda: now[0], wait_s=30)
        return None
    if op == "put":
        return await store.put(cmd["engine"], CooldownEntry(*cmd["entry"]))
    if op == "update":
        return entry_json(await store.update(cmd["engine"], CHANGES[cmd["change"]], cmd["keep"]))
    if op == "clear":
        return await store.clear(cmd["engine"])
    if op == "get":
        return entry_json(await store.get(cmd["engine"]))
    if op == "all":
        return {engine: entry_json(entry) for engine, entry in (await store.all()).items()}
    if op == "cache_put":
        return await store.cache_put(cmd["key"], cmd["value"], cmd["ttl"])
    if op == "cache_get":
        return await store.cache_get(cmd["key"])
    if op == "spend":
        return await store.spend(cmd["engine"], cmd["per_minute"])
    if op == "flush":
        return await store.flush()
    raise ValueError(op)

async def main():
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        try:
            reply = {"ok": await handle(json.loads(line))}
        except Exception as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
    if store is not None:
        await store.close()

asyncio.run(main())
'''


class Child:
    """The other process: a SqliteState in a child Python, driven one JSON command per line."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})

    def __call__(self, op: str, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert "error" not in reply, reply["error"]
        return reply["ok"]

    def stop(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def as_entry(data) -> CooldownEntry | None:
    return None if data is None else CooldownEntry(*data)


entries = st.builds(CooldownEntry,
                    until=st.sampled_from([0.0, 50.5, START + 30, 2e9]),
                    failures=st.integers(min_value=0, max_value=6),
                    status=st.sampled_from(["timeout", "error", "ratelimited", "blocked", "slow"]),
                    detail=st.text(max_size=12))
values = st.text(max_size=40)
engines = st.sampled_from(ENGINES)
keys = st.sampled_from(KEYS)


class StoreMachine(RuleBasedStateMachine):
    """The model: cooldowns and cache as dicts, budgets as counts per minute, and a clock."""

    backend = "memory"
    processes: tuple[str, ...] = ("here",)
    choices: tuple[str, ...] = ("here",)
    timed = True  # the machine moves the store's clock (expiry, budget windows)
    context: dict = {}

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.now = START
        self.cooldowns: dict[str, CooldownEntry] = {}
        self.cache: dict[str, tuple[float, str]] = {}
        self.used: dict[tuple[str, int], int] = {}
        self.last = "here"  # the process that acted last: the other one flushes before acting
        self.dirty = {name: False for name in self.processes}
        self.store = self.open_here()

    # ----- the stores -----
    def open_here(self):
        return MemoryState(clock=lambda: self.now)

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def on(self, process: str):
        """Act in `process`: what the other one queued is committed first."""
        if process != self.last and self.dirty[self.last]:
            self.flush(self.last)
        self.last = process
        return process

    def flush(self, process: str) -> None:
        self.dirty[process] = False

    def teardown(self) -> None:
        self.run(self.store.close())
        self.loop.close()

    # ----- the operations, in one process or the other -----
    def call(self, process: str, op: str, **args):
        method = getattr(self.store, op)
        if op == "update":
            return self.run(method(args["engine"], CHANGES[args["change"]], KEEP_S))
        return self.run(method(*args.values()))

    # ----- rules -----
    @rule(data=st.data(), engine=engines, entry=entries)
    def put(self, data, engine, entry):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        self.call(process, "put", engine=engine, entry=entry)
        self.dirty[process] = True
        self.cooldowns[engine] = entry

    @rule(data=st.data(), engine=engines, change=st.sampled_from(sorted(CHANGES)))
    def update(self, data, engine, change):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        expected = CHANGES[change](self.cooldowns.get(engine))
        self.updated(process, engine, change, expected)
        self.cooldowns[engine] = expected

    def updated(self, process: str, engine: str, change: str, expected: CooldownEntry) -> None:
        assert self.call(process, "update", engine=engine, change=change) == expected

    @rule(data=st.data(), engine=engines)
    def clear(self, data, engine):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        self.call(process, "clear", engine=engine)
        self.dirty[process] = True
        self.cooldowns.pop(engine, None)

    @rule(data=st.data(), engine=engines)
    def get(self, data, engine):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        if engine not in self.unsettled():
            assert self.call(process, "get", engine=engine) == self.cooldowns.get(engine)

    @rule(data=st.data())
    def all(self, data):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        found = self.call(process, "all")
        skip = self.unsettled()
        assert {e: v for e, v in found.items() if e not in skip} == \
            {e: v for e, v in self.cooldowns.items() if e not in skip}

    @rule(data=st.data(), key=keys, value=values, ttl=st.sampled_from([4.0, 5.0, 60.0, 3600.0]))
    def cache_put(self, data, key, value, ttl):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        self.call(process, "cache_put", key=key, value=value, ttl=ttl)
        self.dirty[process] = True
        self.cache[key] = (self.now + ttl, value)

    @rule(data=st.data(), key=keys)
    def cache_get(self, data, key):
        process = self.on(data.draw(st.sampled_from(self.choices)))
        found = self.cache.get(key)
        expected = found[1] if found is not None and found[0] > self.now else None
        assert self.call(process, "cache_get", key=key) == expected

    @precondition(lambda self: self.timed)
    @rule(seconds=st.sampled_from([0.5, 4.0, 30.0, 61.0]))
    def tick(self, seconds):
        self.now += seconds

    @precondition(lambda self: self.timed)
    @rule(data=st.data(), engine=engines, per_minute=st.integers(min_value=1, max_value=3))
    def spend(self, data, engine, per_minute):
        process = self.waiting_on(data.draw(st.sampled_from(self.choices)))
        window = int(self.now // 60)
        used = self.used.get((engine, window), 0)
        allowed = used < per_minute
        if allowed:
            self.used[(engine, window)] = used + 1
        assert self.call(process, "spend", engine=engine, per_minute=per_minute) is allowed

    # ----- what the SQLite machine refines -----
    def waiting_on(self, process: str) -> str:
        """Act in `process` with a write whose answer is waited for."""
        return self.on(process)

    def unsettled(self) -> set[str]:
        """Engines whose queued update has not been committed yet (not compared until it is)."""
        return set()


class SqliteMachine(StoreMachine):
    """This process's writer is held still whenever this process acts, so that its writes queue up and
    are committed together, in one batch, when it is let go: before the other process acts, before a write
    whose answer is waited for (a budget), or by the `commit_batch` rule. An update queued in a batch is
    answered when the batch commits; its engine is not compared until then."""

    backend = "sqlite"
    processes = ("here", "there")
    # Drawn from: this process thrice as often (its queued writes, its batches, its reads of them).
    choices = ("here", "here", "here", "there")

    def __init__(self) -> None:
        self.examples = self.context["counter"]
        self.path = self.context["dir"] / f"example-{next(self.examples)}.db"
        self.held: threading.Event | None = None
        self.pending: list[tuple[str, asyncio.Task, CooldownEntry]] = []
        super().__init__()
        self.context["child"]("open", path=str(self.path), now=self.now)

    def open_here(self):
        return SqliteState(self.path, clock=lambda: self.now, wait_s=30)

    def on(self, process: str):
        if process == "there":
            self.release()  # the held writer holds the file's write lock: the other process could not write
        process = super().on(process)
        if process == "here" and self.held is None:
            self.hold()
        return process

    def waiting_on(self, process: str) -> str:
        process = super().on(process)
        self.release()
        return process

    def flush(self, process: str) -> None:
        if process == "here":
            self.release()
            self.run(self.store.flush())
        else:
            self.context["child"]("flush", now=self.now)
        self.dirty[process] = False

    def call(self, process: str, op: str, **args):
        if process == "here":
            return super().call(process, op, **args)
        if op == "put":
            args["entry"] = [args["entry"].until, args["entry"].failures, args["entry"].status, args["entry"].detail]
        if op == "update":
            args["keep"] = KEEP_S
        reply = self.context["child"](op, now=self.now, **args)
        if op in ("get", "update"):
            return as_entry(reply)
        if op == "all":
            return {engine: as_entry(entry) for engine, entry in reply.items()}
        return reply

    def updated(self, process: str, engine: str, change: str, expected: CooldownEntry) -> None:
        if process != "here":
            return super().updated(process, engine, change, expected)
        task = self.loop.create_task(self.store.update(engine, CHANGES[change], KEEP_S))
        self.run(asyncio.sleep(0))  # queued now, in order with the writes around it
        self.pending.append((engine, task, expected))
        self.dirty["here"] = True

    def unsettled(self) -> set[str]:
        return {engine for engine, _, _ in self.pending}

    # ----- batches -----
    def hold(self) -> None:
        inside, self.held = threading.Event(), threading.Event()
        held = self.held

        async def queue() -> None:
            self.store._queue(lambda db: (inside.set(), held.wait(30)))

        self.run(queue())
        assert inside.wait(30)

    def release(self) -> None:
        if self.held is None:
            return
        self.held.set()
        self.held = None
        pending, self.pending = self.pending, []
        for engine, task, expected in pending:
            assert self.run(task) == expected, engine

    @precondition(lambda self: self.held is not None)
    @rule()
    def commit_batch(self):
        self.release()

    @rule()
    def restart_here(self):
        """This process ends (what it queued is committed) and another starts on the same file."""
        self.release()
        self.run(self.store.close())
        self.store = self.open_here()
        self.dirty["here"] = False

    def teardown(self) -> None:
        self.release()
        super().teardown()


class RedisMachine(StoreMachine):
    backend = "redis"
    timed = False

    def __init__(self) -> None:
        self.prefix = f"model-{next(self.context['counter'])}:"
        super().__init__()

    def open_here(self):
        return RedisState(self.context["url"], prefix=self.prefix)


def examples(steps: int = 30) -> hypothesis_settings:
    return hypothesis_settings(max_examples=scaled(50),
                               stateful_step_count=steps, deadline=None)


def test_the_memory_store_answers_as_the_model():
    run_state_machine_as_test(StoreMachine, settings=examples())


def test_the_sqlite_store_in_two_processes_answers_as_the_model(tmp_path):
    child = Child()
    SqliteMachine.context = {"child": child, "dir": tmp_path, "counter": itertools.count()}
    try:
        run_state_machine_as_test(SqliteMachine, settings=examples())
    finally:
        child.stop()


def test_the_redis_store_answers_as_the_model(redis_url):
    RedisMachine.context = {"url": redis_url, "counter": itertools.count()}
    run_state_machine_as_test(RedisMachine, settings=examples())
