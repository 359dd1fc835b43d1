"""State that outlives one search: cooldowns, the answer cache and per-engine request budgets.

Three stores with one interface:
- `MemoryState`: in-process, for tests, replay and embedding in a long-lived process.
- `SqliteState`: the embedded default, a file in METASEARCH_STATE_DIR shared by every process of one
  user on one machine (WAL, short transactions), so a CLI spawned per tool call still remembers that
  DuckDuckGo blocked us a second ago. Its calls run on a thread of their own, never on the event loop:
  waiting out another process's write lock must not freeze every engine in flight.
- `RedisState`: shared by every process and host of a fleet (METASEARCH_REDIS_URL).
`FailoverState` puts Redis in front of the embedded store: when Redis is down the search goes on with
the embedded store, and the response says so. A store that cannot be opened or written degrades to
memory with a warning; state is never a reason for a search to fail.

Warnings describe the current state: `warnings` holds standing conditions (a store that could not be
opened, Redis down right now); an operation that failed during a search is reported in that search's
response only (`collecting_problems`), not in every later one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, Iterator, Protocol, TypeVar

from plugin.infra.cooldown import Change, CooldownEntry
from plugin.infra.lifecycle import LoopBound
from plugin.infra.logs import get_logger
from plugin.infra.secrets import mask_url
from plugin.settings import Settings

log = get_logger("metasearch.state")

T = TypeVar("T")


class State(Protocol):
    """Cooldowns (the CooldownStore interface), the answer cache and request budgets."""

    backend: str
    warnings: list[str]

    async def get(self, engine: str) -> CooldownEntry | None: ...

    async def put(self, engine: str, entry: CooldownEntry) -> None: ...

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry: ...

    async def clear(self, engine: str) -> None: ...

    async def all(self) -> dict[str, CooldownEntry]: ...

    async def cache_get(self, key: str) -> str | None: ...

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None: ...

    async def spend(self, engine: str, per_minute: int) -> bool:
        """Take one request from the engine's budget for this minute; False when it is used up."""
        ...

    async def close(self) -> None: ...


# Problems met by state operations during the current search (None outside a search).
_PROBLEMS: ContextVar[list[str] | None] = ContextVar("metasearch_state_problems", default=None)


@contextlib.contextmanager
def collecting_problems() -> Iterator[list[str]]:
    """Collect the state problems met while the block runs (engine tasks it starts included)."""
    problems: list[str] = []
    token = _PROBLEMS.set(problems)
    try:
        yield problems
    finally:
        _PROBLEMS.reset(token)


def note_problem(message: str) -> None:
    problems = _PROBLEMS.get()
    if problems is not None and message not in problems:
        problems.append(message)


def _window(now: float) -> int:
    return int(now // 60)


class MemoryState:
    backend = "memory"

    def __init__(self, warnings: list[str] | None = None, clock: Callable[[], float] = time.time) -> None:
        self.warnings: list[str] = list(warnings or [])
        self.clock = clock
        self._cooldowns: dict[str, CooldownEntry] = {}
        self._cache: dict[str, tuple[float, str]] = {}
        self._budget: dict[tuple[str, int], int] = {}

    async def get(self, engine: str) -> CooldownEntry | None:
        return self._cooldowns.get(engine)

    async def put(self, engine: str, entry: CooldownEntry) -> None:
        self._cooldowns[engine] = entry

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        # No await between reading and writing: atomic within the process, the only one that sees it.
        entry = change(self._cooldowns.get(engine))
        self._cooldowns[engine] = entry
        return entry

    async def clear(self, engine: str) -> None:
        self._cooldowns.pop(engine, None)

    async def all(self) -> dict[str, CooldownEntry]:
        return dict(self._cooldowns)

    async def cache_get(self, key: str) -> str | None:
        found = self._cache.get(key)
        if found is None or found[0] <= self.clock():
            self._cache.pop(key, None)
            return None
        return found[1]

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        if len(self._cache) > 1000:  # bounded: drop expired entries, then the oldest
            now = self.clock()
            for k in [k for k, (expires, _) in self._cache.items() if expires <= now] or list(self._cache)[:100]:
                self._cache.pop(k, None)
        self._cache[key] = (self.clock() + ttl_s, value)

    async def spend(self, engine: str, per_minute: int) -> bool:
        window = _window(self.clock())
        for old in [k for k in self._budget if k[1] < window]:
            del self._budget[old]
        used = self._budget.get((engine, window), 0)
        if used >= per_minute:
            return False
        self._budget[(engine, window)] = used + 1
        return True

    async def close(self) -> None:
        return None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS cooldowns (engine TEXT PRIMARY KEY, until REAL, failures INTEGER, status TEXT,
                                      detail TEXT, written REAL);
CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, expires REAL, value TEXT);
CREATE TABLE IF NOT EXISTS budget (engine TEXT, window INTEGER, used INTEGER, PRIMARY KEY (engine, window));
"""


def _degrades(default):
    """An SQLite operation that fails (disk full, file vanished, lock held too long) is logged, reported
    in the current search's warnings, and answered with `default`: the search goes on without that bit
    of state."""

    def wrap(method):
        @functools.wraps(method)
        async def guarded(self, *args):
            try:
                return await method(self, *args)
            except sqlite3.Error as exc:
                message = f"state store {self.path} failed ({type(exc).__name__}: {exc}); continuing without it"
                log.warning("%s", message)
                note_problem(message)
                return default
        return guarded
    return wrap


class SqliteState:
    """The embedded store. Every operation is one short transaction (`BEGIN IMMEDIATE` where it reads
    and writes, so a read-modify-write is atomic across processes); WAL lets readers and a writer of
    different processes overlap, and busy_timeout waits out a concurrent writer, on the store's own
    thread."""

    backend = "sqlite"

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.clock = clock
        self.warnings: list[str] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = self._open(path)
        # One thread owns the connection: calls are serialised (a transaction is never interleaved with
        # another call) and none of them blocks the event loop.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metasearch-sqlite")
        self._closed = False

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        """Open and prepare the file. Processes starting together race to switch it to WAL and create
        the tables; SQLite may refuse the loser at once ("database is locked") without waiting, so the
        opening is retried briefly instead of giving up on shared state."""
        delay = 0.02
        for attempt in range(10):
            db = sqlite3.connect(str(path), timeout=2.0, isolation_level=None, check_same_thread=False)
            try:
                if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    db.execute("PRAGMA journal_mode=WAL")  # persistent: only the first process pays for it
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA busy_timeout=2000")
                db.executescript(_SCHEMA)
                db.execute("PRAGMA quick_check").fetchone()
                return db
            except sqlite3.OperationalError as exc:
                db.close()
                if attempt == 9 or not any(word in str(exc) for word in ("locked", "busy")):
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
            except BaseException:
                db.close()
                raise
        raise AssertionError("unreachable")

    async def _run(self, work: Callable[[], T]) -> T:
        if self._closed:  # answered like any other failed operation: the caller goes on without state
            raise sqlite3.ProgrammingError("the state store is closed")
        return await asyncio.get_running_loop().run_in_executor(self._thread, work)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error). Under isolation_level=None, `with connection:`
        opens no transaction at all; this does, and takes the write lock before the first read."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @_degrades(None)
    async def get(self, engine: str) -> CooldownEntry | None:
        def work():
            row = self._db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                                   (engine,)).fetchone()
            return CooldownEntry(*row) if row else None
        return await self._run(work)

    @_degrades(None)
    async def put(self, engine: str, entry: CooldownEntry) -> None:
        def work():
            self._db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?, ?, ?, ?, ?)",
                             (engine, entry.until, entry.failures, entry.status, entry.detail, self.clock()))
        await self._run(work)

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        def work():
            now = self.clock()
            with self._transaction() as db:
                db.execute("DELETE FROM cooldowns WHERE written < ?", (now - keep_s,))
                row = db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                                 (engine,)).fetchone()
                entry = change(CooldownEntry(*row) if row else None)
                db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?, ?, ?, ?, ?)",
                           (engine, entry.until, entry.failures, entry.status, entry.detail, now))
            return entry
        try:
            return await self._run(work)
        except sqlite3.Error as exc:  # unrecorded, but the caller still learns the window it would have had
            message = f"state store {self.path} failed ({type(exc).__name__}: {exc}); continuing without it"
            log.warning("%s", message)
            note_problem(message)
            return change(None)

    @_degrades(None)
    async def clear(self, engine: str) -> None:
        await self._run(lambda: self._db.execute("DELETE FROM cooldowns WHERE engine = ?", (engine,)))

    @_degrades({})
    async def all(self) -> dict[str, CooldownEntry]:
        def work():
            rows = self._db.execute("SELECT engine, until, failures, status, detail FROM cooldowns").fetchall()
            return {row[0]: CooldownEntry(*row[1:]) for row in rows}
        return await self._run(work)

    @_degrades(None)
    async def cache_get(self, key: str) -> str | None:
        def work():
            row = self._db.execute("SELECT value FROM cache WHERE key = ? AND expires > ?",
                                   (key, self.clock())).fetchone()
            return row[0] if row else None
        return await self._run(work)

    @_degrades(None)
    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        def work():
            now = self.clock()
            with self._transaction() as db:
                db.execute("DELETE FROM cache WHERE expires <= ?", (now,))
                db.execute("INSERT OR REPLACE INTO cache VALUES (?, ?, ?)", (key, now + ttl_s, value))
        await self._run(work)

    @_degrades(True)
    async def spend(self, engine: str, per_minute: int) -> bool:
        def work():
            window = _window(self.clock())
            with self._transaction() as db:
                db.execute("DELETE FROM budget WHERE window < ?", (window,))
                # The increment and the check are one statement: two processes cannot both take the last slot.
                cursor = db.execute(
                    "INSERT INTO budget VALUES (?, ?, 1) ON CONFLICT (engine, window) DO UPDATE SET used = used + 1 "
                    "WHERE used < ?", (engine, window, per_minute))
                return cursor.rowcount == 1
        return await self._run(work)

    def close_at_exit(self) -> None:
        """Close from outside any event loop (interpreter exit); the store's thread is idle by then."""
        if not self._closed:
            self._closed = True
            self._db.close()
            self._thread.shutdown(wait=False)

    async def close(self) -> None:
        if self._closed:
            return
        try:
            await self._run(self._db.close)
        except RuntimeError:  # no running loop: close from here
            self._db.close()
        self._closed = True
        self._thread.shutdown(wait=False)


class RedisUnavailable(Exception):
    pass


class RedisState:
    backend = "redis"

    def __init__(self, url: str, prefix: str = "metasearch:"):
        import importlib.util

        if importlib.util.find_spec("redis") is None:  # fail here, at construction, when the extra is missing
            raise ImportError("the redis package is not installed")

        self.url = url
        self.prefix = prefix
        self.warnings: list[str] = []
        self._redis = None
        self._loop = None
        self._closer: LoopBound | None = None

    def _client(self):
        # redis.asyncio connections belong to one event loop; a new loop (asyncio.run per call) gets its own,
        # and each is closed when its loop ends (LoopBound) or at close().
        import redis.asyncio as redis

        loop = asyncio.get_running_loop()
        if self._redis is None or self._loop is not loop:
            client = redis.Redis.from_url(self.url, socket_timeout=1.0, socket_connect_timeout=1.0,
                                          decode_responses=True)
            self._redis, self._loop = client, loop
            self._closer = LoopBound(functools.partial(_close_quietly, client))
        return self._redis

    async def _call(self, name: str, *args, **kwargs):
        import redis

        try:
            return await getattr(self._client(), name)(*args, **kwargs)
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable(f"{type(exc).__name__}: {exc}") from None

    def _key(self, kind: str, name: str) -> str:
        return f"{self.prefix}{kind}:{name}"

    async def get(self, engine: str) -> CooldownEntry | None:
        raw = await self._call("get", self._key("cooldown", engine))
        return CooldownEntry(**json.loads(raw)) if raw else None

    async def put(self, engine: str, entry: CooldownEntry, keep_s: float = 30 * 3600) -> None:
        await self._call("set", self._key("cooldown", engine), json.dumps(entry.to_dict()), ex=max(1, int(keep_s)))

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        """WATCH the key, compute, MULTI/EXEC: a concurrent writer makes EXEC fail, and we start over."""
        import redis

        key = self._key("cooldown", engine)
        try:
            async with self._client().pipeline(transaction=True) as pipe:
                for attempt in range(100):
                    try:
                        await pipe.watch(key)
                        raw = await pipe.get(key)
                        entry = change(CooldownEntry(**json.loads(raw)) if raw else None)
                        pipe.multi()
                        pipe.set(key, json.dumps(entry.to_dict()), ex=max(1, int(keep_s)))
                        await pipe.execute()
                        return entry
                    except redis.WatchError:  # another writer got there first: back off a little, retry
                        await asyncio.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
                raise RedisUnavailable("cooldown update kept conflicting with other writers")
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable(f"{type(exc).__name__}: {exc}") from None

    async def clear(self, engine: str) -> None:
        await self._call("delete", self._key("cooldown", engine))

    async def all(self) -> dict[str, CooldownEntry]:
        import redis

        prefix = self._key("cooldown", "")
        try:
            keys = [key async for key in self._client().scan_iter(match=prefix + "*")]
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable(f"{type(exc).__name__}: {exc}") from None
        entries = {}
        for key in keys:
            raw = await self._call("get", key)
            if raw:
                entries[key[len(prefix):]] = CooldownEntry(**json.loads(raw))
        return entries

    async def cache_get(self, key: str) -> str | None:
        return await self._call("get", self._key("cache", key))

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        await self._call("set", self._key("cache", key), value, ex=max(1, int(ttl_s)))

    async def spend(self, engine: str, per_minute: int) -> bool:
        key = self._key("budget", f"{engine}:{_window(time.time())}")
        used = await self._call("incr", key)
        if used == 1:
            await self._call("expire", key, 120)
        return used <= per_minute

    async def close(self) -> None:
        closer, self._closer, self._redis = self._closer, None, None
        if closer is not None and self._loop is asyncio.get_running_loop():
            await closer.close()


async def _close_quietly(client) -> None:
    try:
        await client.aclose()
    except Exception:  # closing a connection to a dead server must not fail anything
        pass


class FailoverState:
    """Redis first; while Redis is unreachable, the embedded store, with a warning in the response."""

    RETRY_S = 15.0

    def __init__(self, primary: RedisState, fallback: State):
        self.primary = primary
        self.fallback = fallback
        self._down_until = 0.0

    @property
    def warnings(self) -> list[str]:
        if time.monotonic() < self._down_until:
            return [f"redis unavailable at {mask_url(self.primary.url)}; using the embedded "
                    f"{self.fallback.backend} store", *self.fallback.warnings]
        return []

    @property
    def backend(self) -> str:
        return f"redis (falling back to {self.fallback.backend})"

    async def _run(self, name: str, *args):
        if time.monotonic() >= self._down_until:
            try:
                return await getattr(self.primary, name)(*args)
            except RedisUnavailable as exc:
                self._down_until = time.monotonic() + self.RETRY_S
                log.warning("redis unavailable (%s); using the %s store", exc, self.fallback.backend)
        return await getattr(self.fallback, name)(*args)

    async def get(self, engine):
        return await self._run("get", engine)

    async def put(self, engine, entry):
        return await self._run("put", engine, entry)

    async def update(self, engine, change, keep_s):
        return await self._run("update", engine, change, keep_s)

    async def clear(self, engine):
        return await self._run("clear", engine)

    async def all(self):
        return await self._run("all")

    async def cache_get(self, key):
        return await self._run("cache_get", key)

    async def cache_put(self, key, value, ttl_s):
        return await self._run("cache_put", key, value, ttl_s)

    async def spend(self, engine, per_minute):
        return await self._run("spend", engine, per_minute)

    def close_at_exit(self) -> None:
        close = getattr(self.fallback, "close_at_exit", None)
        if close is not None:
            close()

    async def close(self) -> None:
        await self.primary.close()
        await self.fallback.close()



def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "metasearch"


def state_path(settings: Settings) -> Path:
    """Where the embedded store lives: `state_dir`, else $XDG_STATE_HOME/metasearch, else ~/.local/state/metasearch."""
    directory = Path(settings.state_dir) if settings.state_dir else default_state_dir()
    return directory / "state.sqlite3"


def embedded_state(settings: Settings) -> State:
    path = state_path(settings)
    try:
        return SqliteState(path)
    except (sqlite3.Error, OSError) as exc:
        message = f"state store {path} unusable ({type(exc).__name__}: {exc}); using in-memory state"
        log.warning("%s", message)
        return MemoryState(warnings=[message])


def open_state(settings: Settings) -> State:
    backend = settings.state_backend
    if backend == "memory":
        return MemoryState()
    if backend == "redis" or (backend == "auto" and settings.redis_url):
        if not settings.redis_url:
            return MemoryState(warnings=["state_backend is redis but METASEARCH_REDIS_URL is not set"])
        try:
            primary = RedisState(settings.redis_url)
        except ImportError:
            state = embedded_state(settings)
            state.warnings.append("METASEARCH_REDIS_URL is set but the redis package is not installed "
                                  "(pip install 'metasearch[redis]'); using the embedded store")
            return state
        return FailoverState(primary, embedded_state(settings))
    return embedded_state(settings)
