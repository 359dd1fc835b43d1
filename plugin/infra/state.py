"""State that outlives one search: cooldowns, the result cache and per-engine request budgets.

Three stores with one interface:
- `MemoryState`: in-process, for tests, replay and embedding in a long-lived process.
- `SqliteState`: the embedded default, a file in METASEARCH_STATE_DIR shared by every process of one
  user on one machine (WAL, short transactions), so a CLI spawned per tool call still remembers that
  DuckDuckGo blocked us a second ago.
- `RedisState`: shared by every process and host of a fleet (METASEARCH_REDIS_URL).
`FailoverState` puts Redis in front of the embedded store: when Redis is down the search goes on with
the embedded store, and the response says so. A store that cannot be opened or written degrades to
memory with a warning; state is never a reason for a search to fail.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Protocol

from plugin.infra.cooldown import CooldownEntry
from plugin.infra.logs import get_logger
from plugin.settings import Settings

log = get_logger("metasearch.state")

# Cooldown rows are kept this long after they were written, so consecutive failures keep escalating
# across windows; a success deletes the row.
COOLDOWN_MEMORY_S = 24 * 3600


class State(Protocol):
    """Cooldowns (the CooldownStore interface), the result cache and request budgets."""

    backend: str
    warnings: list[str]

    async def get(self, engine: str) -> CooldownEntry | None: ...

    async def put(self, engine: str, entry: CooldownEntry) -> None: ...

    async def clear(self, engine: str) -> None: ...

    async def all(self) -> dict[str, CooldownEntry]: ...

    async def cache_get(self, key: str) -> str | None: ...

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None: ...

    async def spend(self, engine: str, per_minute: int) -> bool:
        """Take one request from the engine's budget for this minute; False when it is used up."""
        ...

    async def close(self) -> None: ...


def _window(now: float | None = None) -> int:
    return int((now if now is not None else time.time()) // 60)


class MemoryState:
    backend = "memory"

    def __init__(self, warnings: list[str] | None = None) -> None:
        self.warnings: list[str] = list(warnings or [])
        self._cooldowns: dict[str, CooldownEntry] = {}
        self._cache: dict[str, tuple[float, str]] = {}
        self._budget: dict[tuple[str, int], int] = {}

    async def get(self, engine: str) -> CooldownEntry | None:
        return self._cooldowns.get(engine)

    async def put(self, engine: str, entry: CooldownEntry) -> None:
        self._cooldowns[engine] = entry

    async def clear(self, engine: str) -> None:
        self._cooldowns.pop(engine, None)

    async def all(self) -> dict[str, CooldownEntry]:
        return dict(self._cooldowns)

    async def cache_get(self, key: str) -> str | None:
        found = self._cache.get(key)
        if found is None or found[0] < time.time():
            self._cache.pop(key, None)
            return None
        return found[1]

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        if len(self._cache) > 1000:  # bounded: drop expired entries, then the oldest
            now = time.time()
            for k in [k for k, (expires, _) in self._cache.items() if expires < now] or list(self._cache)[:100]:
                self._cache.pop(k, None)
        self._cache[key] = (time.time() + ttl_s, value)

    async def spend(self, engine: str, per_minute: int) -> bool:
        window = _window()
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
    """An SQLite operation that fails (disk full, file vanished, lock held too long) is logged and
    answered with `default`: the search goes on without that bit of state."""

    def wrap(method):
        @functools.wraps(method)
        async def guarded(self, *args):
            try:
                return await method(self, *args)
            except sqlite3.Error as exc:
                message = f"state store {self.path} failed ({type(exc).__name__}: {exc}); continuing without it"
                log.warning("%s", message)
                if message not in self.warnings:
                    self.warnings.append(message)
                return default
        return guarded
    return wrap


class SqliteState:
    """The embedded store. Every operation is one short transaction; WAL lets readers and a writer
    of different processes overlap, and busy_timeout waits out a concurrent writer."""

    backend = "sqlite"

    def __init__(self, path: Path):
        self.path = path
        self.warnings: list[str] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = self._open(path)

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

    def _write(self, sql: str, args: tuple) -> None:
        with self._db:  # BEGIN ... COMMIT
            self._db.execute(sql, args)

    @_degrades(None)
    async def get(self, engine: str) -> CooldownEntry | None:
        row = self._db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                               (engine,)).fetchone()
        return CooldownEntry(*row) if row else None

    @_degrades(None)
    async def put(self, engine: str, entry: CooldownEntry) -> None:
        self._write("INSERT OR REPLACE INTO cooldowns VALUES (?, ?, ?, ?, ?, ?)",
                    (engine, entry.until, entry.failures, entry.status, entry.detail, time.time()))

    @_degrades(None)
    async def clear(self, engine: str) -> None:
        self._write("DELETE FROM cooldowns WHERE engine = ?", (engine,))

    @_degrades({})
    async def all(self) -> dict[str, CooldownEntry]:
        rows = self._db.execute("SELECT engine, until, failures, status, detail FROM cooldowns WHERE written > ?",
                                (time.time() - COOLDOWN_MEMORY_S,)).fetchall()
        return {row[0]: CooldownEntry(*row[1:]) for row in rows}

    @_degrades(None)
    async def cache_get(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM cache WHERE key = ? AND expires > ?", (key, time.time())).fetchone()
        return row[0] if row else None

    @_degrades(None)
    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        now = time.time()
        with self._db:
            self._db.execute("DELETE FROM cache WHERE expires < ?", (now,))
            self._db.execute("INSERT OR REPLACE INTO cache VALUES (?, ?, ?)", (key, now + ttl_s, value))

    @_degrades(True)
    async def spend(self, engine: str, per_minute: int) -> bool:
        window = _window()
        with self._db:
            self._db.execute("DELETE FROM budget WHERE window < ?", (window,))
            # The increment and the check are one statement: two processes cannot both take the last slot.
            cursor = self._db.execute(
                "INSERT INTO budget VALUES (?, ?, 1) ON CONFLICT (engine, window) DO UPDATE SET used = used + 1 "
                "WHERE used < ?", (engine, window, per_minute))
            return cursor.rowcount == 1

    async def close(self) -> None:
        self._db.close()


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

    def _client(self):
        # redis.asyncio connections belong to one event loop; a new loop (asyncio.run per call) gets its own.
        import asyncio

        import redis.asyncio as redis

        loop = asyncio.get_running_loop()
        if self._redis is None or self._loop is not loop:
            self._redis = redis.Redis.from_url(self.url, socket_timeout=1.0, socket_connect_timeout=1.0,
                                               decode_responses=True)
            self._loop = loop
        return self._redis

    async def _call(self, name: str, *args):
        import redis

        try:
            return await getattr(self._client(), name)(*args)
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable(f"{type(exc).__name__}: {exc}") from None

    def _key(self, kind: str, name: str) -> str:
        return f"{self.prefix}{kind}:{name}"

    async def get(self, engine: str) -> CooldownEntry | None:
        raw = await self._call("get", self._key("cooldown", engine))
        return CooldownEntry(**json.loads(raw)) if raw else None

    async def put(self, engine: str, entry: CooldownEntry) -> None:
        await self._call("set", self._key("cooldown", engine), json.dumps(entry.to_dict()), COOLDOWN_MEMORY_S)

    async def clear(self, engine: str) -> None:
        await self._call("delete", self._key("cooldown", engine))

    async def all(self) -> dict[str, CooldownEntry]:
        keys = await self._call("keys", self._key("cooldown", "*"))
        entries = {}
        for key in keys:
            raw = await self._call("get", key)
            if raw:
                entries[key.rsplit(":", 1)[1]] = CooldownEntry(**json.loads(raw))
        return entries

    async def cache_get(self, key: str) -> str | None:
        return await self._call("get", self._key("cache", key))

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        await self._call("set", self._key("cache", key), value, max(1, int(ttl_s)))

    async def spend(self, engine: str, per_minute: int) -> bool:
        key = self._key("budget", f"{engine}:{_window()}")
        used = await self._call("incr", key)
        if used == 1:
            await self._call("expire", key, 120)
        return used <= per_minute

    async def close(self) -> None:
        if self._redis is None:
            return
        try:
            await self._redis.aclose()
        except Exception:  # closing a connection to a dead server must not fail anything
            pass
        self._redis = None


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
            return [f"redis unavailable at {_safe_url(self.primary.url)}; using the embedded "
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

    async def close(self) -> None:
        await self.primary.close()
        await self.fallback.close()


def _safe_url(url: str) -> str:
    """A Redis URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "metasearch"


def embedded_state(settings: Settings) -> State:
    directory = Path(settings.state_dir) if settings.state_dir else default_state_dir()
    path = directory / "state.sqlite3"
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

