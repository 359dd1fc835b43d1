"""State that outlives one search: cooldowns, the answer cache and per-engine request budgets.

Three stores with one interface:
- `MemoryState`: in-process, for tests, replay and embedding in a long-lived process.
- `SqliteState`: the embedded default, a file in METASEARCH_STATE_DIR shared by every process of one
  user on one machine (WAL), so a CLI spawned per tool call still remembers that DuckDuckGo blocked us
  a second ago. Its calls run on threads of their own, never on the event loop, and a search never
  waits on it for long: a read answers within `state_wait_ms` or counts as a miss, and writes are
  committed in the background, in batches (see the class).
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
import queue
import random
import sqlite3
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, Iterator, Protocol, TypeVar

from plugin.infra.cooldown import Change, CooldownEntry
from plugin.infra.lifecycle import LoopBound, PerLoop
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

    async def usage(self) -> dict[str, object] | None:
        """How full the cache is (`usage_report`): bytes counted against `state_max_bytes`, entries."""
        ...

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


# The cap on cached values a store keeps, unless it is given one (`state_max_bytes`).
DEFAULT_MAX_BYTES: int = Settings.model_fields["state_max_bytes"].default
# How often at most the memory store looks through its cache for expired entries when it is full.
SWEEP_S = 30.0


def usage_report(used: int, entries: int, max_bytes: int) -> dict[str, object]:
    """How full a store's cache is, as `/health` and `metasearch config` say it."""
    return {"bytes": used, "max_bytes": max_bytes, "entries": entries,
            "used_percent": round(100 * used / max_bytes, 1) if max_bytes else 0.0}


class MemoryState:
    """In-process state. The cache holds at most `max_bytes` of entries (as Python holds them: the key's
    and the value's objects and the entry around them); past it the oldest written go first, after the
    expired ones (looked for at most every SWEEP_S while full). An entry larger than the cap, or with no
    time to live, is not kept."""

    backend = "memory"
    ENTRY_BYTES = 120  # the dict slot, the tuple and the expiry around a key and a value

    def __init__(self, warnings: list[str] | None = None, clock: Callable[[], float] = time.time,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.warnings: list[str] = list(warnings or [])
        self.clock = clock
        self.max_bytes = max_bytes
        self._cooldowns: dict[str, CooldownEntry] = {}
        self._cache: dict[str, tuple[float, str, int]] = {}  # key -> (expires, value, bytes), oldest first
        self._cache_bytes = 0
        self._swept = float("-inf")
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
        if found is None:
            return None
        if found[0] <= self.clock():
            self._forget(key)
            return None
        return found[1]

    def _forget(self, key: str) -> None:
        found = self._cache.pop(key, None)
        if found is not None:
            self._cache_bytes -= found[2]

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        self._forget(key)  # a new value is the newest entry, whatever its key held before
        size = sys.getsizeof(key) + sys.getsizeof(value) + self.ENTRY_BYTES
        if size > self.max_bytes or ttl_s <= 0:
            return
        now = self.clock()
        self._cache[key] = (now + ttl_s, value, size)
        self._cache_bytes += size
        if self._cache_bytes > self.max_bytes and now - self._swept >= SWEEP_S:
            self._swept = now
            for expired in [k for k, (expires, _, _) in self._cache.items() if expires <= now]:
                self._forget(expired)
        while self._cache_bytes > self.max_bytes:
            self._forget(next(iter(self._cache)))

    async def usage(self) -> dict[str, object]:
        return usage_report(self._cache_bytes, len(self._cache), self.max_bytes)

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
CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, expires REAL, value TEXT, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS budget (engine TEXT, window INTEGER, used INTEGER, PRIMARY KEY (engine, window));
CREATE INDEX IF NOT EXISTS cache_expires ON cache (expires);
CREATE INDEX IF NOT EXISTS cooldowns_written ON cooldowns (written);
"""

# The cache's size, kept up to date by every process's writes (triggers), so that a full store knows how
# much to drop without adding its rows up. Created in one transaction, before the first write that counts.
_CACHE_BYTES = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS cache_bytes (total INTEGER NOT NULL);
INSERT INTO cache_bytes SELECT coalesce(sum(size), 0) FROM cache WHERE NOT EXISTS (SELECT 1 FROM cache_bytes);
CREATE TRIGGER IF NOT EXISTS cache_added AFTER INSERT ON cache BEGIN
    UPDATE cache_bytes SET total = total + new.size; END;
CREATE TRIGGER IF NOT EXISTS cache_removed AFTER DELETE ON cache BEGIN
    UPDATE cache_bytes SET total = total - old.size; END;
COMMIT;
"""
# What a cache row costs beyond its key (stored twice: the row and its index) and its value, in bytes.
ROW_BYTES = 40
# The write-ahead log is folded into the file every this many pages, and cut back to this size after.
WAL_PAGES = 256
WAL_BYTES = 2 * 1024 * 1024


def _prepare(db: sqlite3.Connection) -> None:
    """The tables, the cache's byte count and its triggers, on a new file or one of an earlier version."""
    def counted() -> bool:
        return "size" in {row[1] for row in db.execute("PRAGMA table_info(cache)")}

    db.executescript(_SCHEMA)
    if not counted():
        # Written by a version that did not count bytes: its cache entries (a cache) are dropped, once (the
        # check is made again under the lock: another process opening the file may have done it since).
        db.execute("BEGIN IMMEDIATE")
        try:
            if not counted():
                db.execute("DROP TABLE IF EXISTS cache_bytes")
                db.execute("DROP TABLE cache")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.executescript(_SCHEMA)
    found = db.execute("SELECT count(*) FROM sqlite_master WHERE name IN "
                       "('cache_bytes', 'cache_added', 'cache_removed')").fetchone()[0]
    if found < 3:
        db.executescript(_CACHE_BYTES)


def _cache_size(key: str, value: str) -> int:
    return 2 * len(key.encode()) + len(value.encode()) + ROW_BYTES


def _evict_oldest(db: sqlite3.Connection, max_bytes: int) -> None:
    """Drop the oldest written cache rows until the cache holds at most `max_bytes`."""
    excess = db.execute("SELECT total FROM cache_bytes").fetchone()[0] - max_bytes
    if excess <= 0:
        return
    freed, last = 0, None
    cursor = db.execute("SELECT rowid, size FROM cache ORDER BY rowid")
    while freed < excess:
        rows = cursor.fetchmany(64)
        if not rows:
            break
        for rowid, size in rows:
            freed, last = freed + size, rowid
            if freed >= excess:
                break
    cursor.close()
    if last is not None:
        db.execute("DELETE FROM cache WHERE rowid <= ?", (last,))


# How long the store's writer waits for another process's write lock before a batch of writes fails.
# Writes never hold an answer up, so this can be long enough for several processes writing at once.
WRITE_BUSY_S = 10.0
# Writes committed together in one transaction at most (one lock taken instead of one per write).
WRITE_BATCH = 500
# Threads (each with its own connection) that serve reads; WAL lets them read while a writer writes.
READERS = 2


def _store_failed(path: Path, exc: BaseException) -> str:
    if isinstance(exc, _Slow):
        message = f"state store {path} did not answer within {exc.ms} ms ({exc.what}); continuing without it"
    else:
        message = f"state store {path} failed ({type(exc).__name__}: {exc}); continuing without it"
    log.warning("%s", message)
    note_problem(message)
    return message


def _degrades(default):
    """A read that fails (file vanished, store closed, lock held too long) is logged, reported in the
    current search's warnings, and answered with `default`: the search goes on without that bit of state."""

    def wrap(method):
        @functools.wraps(method)
        async def guarded(self, *args):
            try:
                return await method(self, *args)
            except sqlite3.Error as exc:
                _store_failed(self.path, exc)
                return default
        return guarded
    return wrap


class _Cleared:
    """A queued `clear`, not yet committed: reads answer None (each one its own, to tell them apart)."""


class _Slow(sqlite3.OperationalError):
    """Not answered within the store's wait (another process holding the file, a burst of reads)."""

    def __init__(self, ms: int, what: str):
        super().__init__(f"no answer within {ms} ms")
        self.ms, self.what = ms, what


class _Stale(Exception):
    """A read still queued when its caller stopped waiting: not run at all."""


class _Write:
    """One write for the writer thread: `work(connection)` inside the batch's transaction; `needed`, when
    given, is asked first outside any transaction (a write that would change nothing takes no lock)."""

    __slots__ = ("work", "needed", "done")

    def __init__(self, work: Callable[[sqlite3.Connection], object],
                 done: Callable[[object, BaseException | None], None],
                 needed: Callable[[sqlite3.Connection], bool] | None = None):
        self.work, self.done, self.needed = work, done, needed


def _write_loop(writes: "queue.SimpleQueue[_Write | None]", db: sqlite3.Connection) -> None:
    """The writer thread: every write queued by now, committed in one transaction, in order, until told
    to stop (None); then the connection is closed. It holds no reference to its store, so a store
    nobody uses any more is collected, and its finalizer stops this thread."""
    stopping = False
    while not stopping:
        first = writes.get()
        if first is None:
            break
        batch = [first]
        while len(batch) < WRITE_BATCH:
            try:
                more = writes.get_nowait()
            except queue.Empty:
                break
            if more is None:
                stopping = True
                break
            batch.append(more)
        _commit(db, batch)
    db.close()


def _commit(db: sqlite3.Connection, batch: list[_Write]) -> None:
    wanted = batch
    # A write that would change nothing takes no lock, but only in a batch of such writes: behind any
    # other write of the batch (a failure, then a success clearing it) its check, made before that write
    # ran, could be wrong, and the lock is taken for that write anyway.
    if all(write.needed is not None for write in batch):
        try:
            wanted = [write for write in batch if write.needed(db)]  # type: ignore[misc]
        except sqlite3.Error:
            wanted = batch
    if len(wanted) < len(batch):
        kept = set(map(id, wanted))
        for write in batch:
            if id(write) not in kept:
                write.done(None, None)
    if not wanted:
        return
    outcomes: list[tuple[_Write, object, BaseException | None]] = []
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            for write in wanted:
                db.execute("SAVEPOINT one")
                try:
                    outcomes.append((write, write.work(db), None))
                    db.execute("RELEASE one")
                except Exception as exc:  # this write only: the rest of the batch goes on
                    db.execute("ROLLBACK TO one")
                    db.execute("RELEASE one")
                    outcomes.append((write, None, exc))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    except Exception as exc:  # the lock not had within WRITE_BUSY_S, a full disk: the batch is lost
        for write in wanted:
            write.done(None, exc)
        return
    for write, result, exc in outcomes:
        write.done(result, exc)


def _note_thread(threads: set[threading.Thread]) -> None:
    threads.add(threading.current_thread())


def _stop_writer(writes, writer: threading.Thread, readers: ThreadPoolExecutor,
                 reader_dbs: list[sqlite3.Connection], lock: threading.Lock,
                 reader_threads: set[threading.Thread] = frozenset()) -> None:  # type: ignore[assignment]
    """Commit what is queued, stop the writer thread, close the readers' connections. Runs once: at
    close(), when the store is collected, or at interpreter exit (weakref.finalize), whichever first.
    The collection can happen on one of the store's own threads (the garbage collector runs wherever an
    allocation triggers it): a thread cannot wait for itself to end, so it does not."""
    me = threading.current_thread()
    writes.put(None)
    if me is not writer:
        writer.join(WRITE_BUSY_S + 5)
    readers.shutdown(wait=me not in reader_threads)
    with lock:
        for db in reader_dbs:
            db.close()
        reader_dbs.clear()


# SQLite's files beside the database; it creates them with the database file's mode.
_JOURNALS = ("-wal", "-shm", "-journal")


def _private(path: Path) -> None:
    """The store holds cooldowns and cached pages (and may hold cookies): its file is created 0600 before SQLite
    opens it (SQLite then gives its WAL and shared-memory files the same mode), whatever the umask; one left
    readable by others (an older version, a copy) is narrowed, with its journal files, if it is ours."""
    if os.name != "posix":
        return
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        _narrow(descriptor)
    finally:
        os.close(descriptor)
    for suffix in _JOURNALS:
        try:
            descriptor = os.open(f"{path}{suffix}", os.O_RDONLY)
        except OSError:
            continue
        try:
            _narrow(descriptor)
        finally:
            os.close(descriptor)


def _narrow(descriptor: int) -> None:
    found = os.fstat(descriptor)
    if found.st_mode & 0o077 and found.st_uid == os.getuid():
        os.fchmod(descriptor, found.st_mode & 0o700)


class SqliteState:
    """The embedded store, built so that a search never waits on it for long (`wait_s` at most per read)
    and never waits for a write:

    - Reads run on a few threads of their own, each with its own connection. WAL lets them read while
      another process writes, so a read does not queue behind a write waiting for a lock. A read not
      answered within `wait_s` counts as a miss (and is reported in the search's warnings).
    - Writes go to one writer thread and return once queued: it commits what has queued up in one
      transaction (`BEGIN IMMEDIATE`, so a read-modify-write is atomic across processes), waiting up to
      WRITE_BUSY_S for another process's lock. Until a write is committed this store answers its own
      reads from it (a search sees the answer it just cached). `update` and `spend`, whose result the
      caller needs, wait for it at most `wait_s`: then `update` answers the entry the change would have
      made of the last one known, and this store's reads answer that entry until the write is committed
      (a failure recorded while another process holds the file benches the engine here at once), and
      `spend` lets the request go (the write still happens).
    - Writes are committed in batches, in order. A write that would change nothing (a clear of an engine
      with no entry, the usual success) is asked first and takes no lock, but only in a batch of such
      writes: behind another write of its batch, its answer could be out of date.
    - The cache holds at most `max_bytes` (keys, values and a row's overhead, counted by trigger in the
      file so that every process sharing it keeps one count); past it the oldest written rows go.
    - `flush()` waits for the writes queued so far; `close()` (and `close_at_exit()`) commits every
      queued write first, so a CLI process that exits has stored what it learnt.
    """

    backend = "sqlite"

    def __init__(self, path: Path, clock: Callable[[], float] = time.time, wait_s: float = 0.25,
                 max_bytes: int = DEFAULT_MAX_BYTES):
        self.path = path
        self.clock = clock
        self.wait_s = wait_s
        self.max_bytes = max_bytes
        self.warnings: list[str] = []
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # a new directory: the user's alone
        _private(path)
        self._db = self._open(path, WRITE_BUSY_S)  # the writer thread's connection
        self._closed = False
        # Each reader thread notes itself before its first job (the executor adds a thread to its own set only
        # after starting it: a finalizer run as that thread's first job could not tell it was on a reader).
        reader_threads: set[threading.Thread] = set()
        self._readers = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="metasearch-sqlite-read",
                                           initializer=_note_thread, initargs=(reader_threads,))
        self._local = threading.local()
        self._reader_dbs: list[sqlite3.Connection] = []
        # Queued writes, not yet committed: answered from here by this store's reads.
        self._lock = threading.Lock()
        self._unsaved_cache: dict[str, tuple[float, str]] = {}
        self._unsaved_cooldowns: dict[str, CooldownEntry | _Cleared] = {}
        self._cooldown_writes: dict[str, int] = {}  # cooldown writes queued so far, by engine
        self._writes: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=_write_loop, args=(self._writes, self._db),
                                        name="metasearch-sqlite-write", daemon=True)
        self._writer.start()
        # Queued writes are committed whatever ends the store: close(), its collection, or the interpreter's
        # exit (a module-level reader or searcher nobody closed).
        self._finalizer = weakref.finalize(self, _stop_writer, self._writes, self._writer, self._readers,
                                           self._reader_dbs, self._lock, reader_threads)

    @staticmethod
    def _open(path: Path, busy_s: float) -> sqlite3.Connection:
        """Open and prepare the file. Processes starting together race to switch it to WAL and create
        the tables; SQLite may refuse the loser at once ("database is locked") without waiting, so the
        opening is retried briefly instead of giving up on shared state."""
        delay = 0.02
        for attempt in range(10):
            db = sqlite3.connect(str(path), timeout=busy_s, isolation_level=None, check_same_thread=False)
            try:
                if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    db.execute("PRAGMA journal_mode=WAL")  # persistent: only the first process pays for it
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(f"PRAGMA busy_timeout={int(busy_s * 1000)}")
                db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
                db.execute(f"PRAGMA journal_size_limit={WAL_BYTES}")
                _prepare(db)
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

    # ----- reads -----
    def _reader(self) -> sqlite3.Connection:
        """This reader thread's own connection (read-only, waiting for a lock no longer than a read may)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(str(self.path), timeout=self.wait_s, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA query_only=1")
            self._local.db = db
            with self._lock:
                self._reader_dbs.append(db)
        return db

    async def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:  # answered like any other failed operation: the caller goes on without state
            raise sqlite3.ProgrammingError("the state store is closed")
        give_up = time.monotonic() + self.wait_s

        def run() -> T:
            if time.monotonic() > give_up:  # queued too long: nobody waits for the answer any more
                raise _Stale
            return work(self._reader())

        try:
            return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(self._readers, run), self.wait_s)
        except (asyncio.TimeoutError, TimeoutError, _Stale):
            raise _Slow(round(self.wait_s * 1000), "a read, taken as a miss") from None

    @_degrades(None)
    async def get(self, engine: str) -> CooldownEntry | None:
        with self._lock:
            if engine in self._unsaved_cooldowns:
                return self._known(engine)

        def work(db):
            row = db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                             (engine,)).fetchone()
            return CooldownEntry(*row) if row else None
        return await self._read(work)

    @_degrades({})
    async def all(self) -> dict[str, CooldownEntry]:
        def work(db):
            rows = db.execute("SELECT engine, until, failures, status, detail FROM cooldowns").fetchall()
            return {row[0]: CooldownEntry(*row[1:]) for row in rows}
        with self._lock:  # taken before the read: a write committed meanwhile is in one or the other
            unsaved = dict(self._unsaved_cooldowns)
        found = await self._read(work)
        for engine, entry in unsaved.items():
            if isinstance(entry, _Cleared):
                found.pop(engine, None)
            else:
                found[engine] = entry
        return found

    @_degrades(None)
    async def cache_get(self, key: str) -> str | None:
        with self._lock:
            unsaved = self._unsaved_cache.get(key)
        if unsaved is not None:
            return unsaved[1] if unsaved[0] > self.clock() else None

        def work(db):
            row = db.execute("SELECT value FROM cache WHERE key = ? AND expires > ?", (key, self.clock())).fetchone()
            return row[0] if row else None
        return await self._read(work)

    # ----- writes -----
    def _queue(self, work: Callable[[sqlite3.Connection], object], *, needed=None,
               after: Callable[[], None] | None = None) -> "asyncio.Future[object]":
        """Queue a write; the future (of the running loop) settles once it is committed or has failed.
        `after` runs on the writer thread when it is done either way."""
        if self._closed:
            raise sqlite3.ProgrammingError("the state store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()

        def settle(result: object, exc: BaseException | None) -> None:
            if not future.done():
                if exc is not None:
                    future.set_exception(exc)
                else:
                    future.set_result(result)

        def done(result: object, exc: BaseException | None) -> None:
            if after is not None:
                after()
            try:
                loop.call_soon_threadsafe(settle, result, exc)
            except RuntimeError:  # that event loop has ended: nobody waits
                pass

        self._writes.put(_Write(work, done, needed))
        return future

    def _background(self, work, *, needed=None, after=None) -> None:
        """A write nobody waits for: queued at once, its failure logged (and reported in the current
        search's warnings while it is still being answered)."""
        path = self.path
        try:
            future = self._queue(work, needed=needed, after=after)
        except sqlite3.Error as exc:
            if after is not None:
                after()
            _store_failed(path, exc)
            return
        context_problems = _PROBLEMS.get()

        def report(done: "asyncio.Future[object]") -> None:
            exc = None if done.cancelled() else done.exception()
            if exc is not None:
                token = _PROBLEMS.set(context_problems)
                try:
                    _store_failed(path, exc)
                finally:
                    _PROBLEMS.reset(token)

        future.add_done_callback(report)

    def _forget_unsaved(self, table: dict, key: str, value: object) -> Callable[[], None]:
        def forget() -> None:
            with self._lock:
                if key in table and table[key] is value:
                    del table[key]
        return forget

    async def put(self, engine: str, entry: CooldownEntry) -> None:
        written = self.clock()  # when it was asked, not when the writer got to it
        with self._lock:
            self._unsaved_cooldowns[engine] = entry
            self._cooldown_writes[engine] = self._cooldown_writes.get(engine, 0) + 1
        self._background(lambda db: db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?, ?, ?, ?, ?)",
                                               (engine, entry.until, entry.failures, entry.status, entry.detail,
                                                written)),
                         after=self._forget_unsaved(self._unsaved_cooldowns, engine, entry))

    def _known(self, engine: str) -> CooldownEntry | None:
        """The entry of a queued write for `engine` (call with the lock held); None when none or cleared."""
        entry = self._unsaved_cooldowns.get(engine)
        return None if isinstance(entry, _Cleared) else entry

    async def clear(self, engine: str) -> None:
        marker = _Cleared()
        with self._lock:
            self._unsaved_cooldowns[engine] = marker
            self._cooldown_writes[engine] = self._cooldown_writes.get(engine, 0) + 1
        # Nothing stored for it (the usual case after a success): no write lock taken (see _commit).
        self._background(lambda db: db.execute("DELETE FROM cooldowns WHERE engine = ?", (engine,)),
                         needed=lambda db: db.execute("SELECT 1 FROM cooldowns WHERE engine = ?",
                                                      (engine,)).fetchone() is not None,
                         after=self._forget_unsaved(self._unsaved_cooldowns, engine, marker))

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        """Kept until `ttl_s` from now, or until it is among the oldest written when the cache holds more
        than `max_bytes` (an entry larger than that, or with no time to live, is not kept, and what the key
        held is dropped)."""
        now = self.clock()
        size = _cache_size(key, value)
        kept = size <= self.max_bytes and ttl_s > 0
        item = (now + ttl_s, value) if kept else (now, "")  # not kept: this process's reads miss at once
        with self._lock:
            self._unsaved_cache[key] = item

        def work(db):
            db.execute("DELETE FROM cache WHERE expires <= ?", (now,))
            db.execute("DELETE FROM cache WHERE key = ?", (key,))  # a new value is the newest row
            if kept:
                db.execute("INSERT INTO cache VALUES (?, ?, ?, ?)", (key, item[0], value, size))
                _evict_oldest(db, self.max_bytes)
        self._background(work, after=self._forget_unsaved(self._unsaved_cache, key, item))

    @_degrades(None)
    async def usage(self) -> dict[str, object] | None:
        """How full the cache is, as committed (what every process sharing the file sees)."""
        def work(db):
            used = db.execute("SELECT total FROM cache_bytes").fetchone()[0]
            return usage_report(used, db.execute("SELECT count(*) FROM cache").fetchone()[0], self.max_bytes)
        return await self._read(work)

    async def _answer(self, work, fallback: Callable[[BaseException], T], after: Callable[[], None] | None = None) -> T:
        """A write whose result the caller needs, waited for at most `wait_s`; `fallback(reason)` otherwise.
        `after` runs once the write is done either way (at once when it could not be queued)."""
        try:
            future = self._queue(work, after=after)
        except sqlite3.Error as exc:
            if after is not None:
                after()
            _store_failed(self.path, exc)
            return fallback(exc)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.wait_s)  # type: ignore[return-value]
        except (asyncio.TimeoutError, TimeoutError):
            slow = _Slow(round(self.wait_s * 1000), "a write, which goes on in the background")
            _store_failed(self.path, slow)
            return fallback(slow)
        except sqlite3.Error as exc:
            _store_failed(self.path, exc)
            return fallback(exc)

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        def work(db):
            now = self.clock()
            db.execute("DELETE FROM cooldowns WHERE written < ?", (now - keep_s,))
            row = db.execute("SELECT until, failures, status, detail FROM cooldowns WHERE engine = ?",
                             (engine,)).fetchone()
            entry = change(CooldownEntry(*row) if row else None)
            db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?, ?, ?, ?, ?)",
                       (engine, entry.until, entry.failures, entry.status, entry.detail, now))
            return entry

        with self._lock:
            known = self._known(engine)
            ticket = self._cooldown_writes[engine] = self._cooldown_writes.get(engine, 0) + 1
        pending: dict[str, object] = {"done": False, "entry": None}

        def after() -> None:  # on the writer thread: committed (or failed), so the file answers from now on
            with self._lock:
                pending["done"] = True
                if pending["entry"] is not None and self._unsaved_cooldowns.get(engine) is pending["entry"]:
                    del self._unsaved_cooldowns[engine]

        def fallback(reason: BaseException) -> CooldownEntry:
            # Unrecorded (or not yet): the caller still learns the window it would have had, and until the
            # write is committed this process's reads answer it, unless a later write of ours replaced it.
            entry = change(known)
            with self._lock:
                if not pending["done"] and self._cooldown_writes.get(engine) == ticket:
                    self._unsaved_cooldowns[engine] = entry
                    pending["entry"] = entry
            return entry

        return await self._answer(work, fallback, after)

    async def spend(self, engine: str, per_minute: int) -> bool:
        def work(db):
            window = _window(self.clock())
            db.execute("DELETE FROM budget WHERE window < ?", (window,))
            # The increment and the check are one statement: two processes cannot both take the last slot.
            cursor = db.execute(
                "INSERT INTO budget VALUES (?, ?, 1) ON CONFLICT (engine, window) DO UPDATE SET used = used + 1 "
                "WHERE used < ?", (engine, window, per_minute))
            return cursor.rowcount == 1
        return await self._answer(work, lambda reason: True)

    async def flush(self) -> None:
        """Wait until every write queued so far is committed (or has failed)."""
        if not self._closed:
            await asyncio.shield(self._queue(lambda db: None))

    # ----- closing -----
    def _stop(self) -> None:
        """Commit what is queued, stop the writer and close every connection (from any thread)."""
        self._closed = True
        self._finalizer()

    def close_at_exit(self) -> None:
        """Close from outside any event loop (interpreter exit): queued writes are committed first."""
        self._stop()

    async def close(self) -> None:
        if not self._closed:
            await asyncio.to_thread(self._stop)


class RedisUnavailable(Exception):
    pass


# A cache write on Redis, as one atomic script: the expired entries' bytes are taken off first (64 at most per
# write), then what the key held; the value is set; past the cap the oldest written go until it fits.
# KEYS: the value's key, the write order (a sorted set), the expiry times (a sorted set), the sizes (a hash),
#       the byte count, the write counter.  ARGV: the value, its ttl in ms, its size, now in ms, the cap.
_REDIS_CACHE_PUT = """
local key, order, expiry, sizes, total, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function drop(name)
  local size = tonumber(redis.call('HGET', sizes, name) or '0')
  redis.call('DEL', name)
  redis.call('HDEL', sizes, name)
  redis.call('ZREM', order, name)
  redis.call('ZREM', expiry, name)
  if size > 0 then redis.call('DECRBY', total, size) end
end
for _, name in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', ARGV[4], 'LIMIT', 0, 64)) do drop(name) end
drop(key)
local size, cap = tonumber(ARGV[3]), tonumber(ARGV[5])
if size > cap or tonumber(ARGV[2]) <= 0 then return 0 end
redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', order, redis.call('INCR', counter), key)
redis.call('ZADD', expiry, tonumber(ARGV[4]) + tonumber(ARGV[2]), key)
redis.call('HSET', sizes, key, size)
local used = redis.call('INCRBY', total, size)
while used > cap do
  local oldest = redis.call('ZRANGE', order, 0, 0)[1]
  if not oldest then break end
  drop(oldest)
  used = tonumber(redis.call('GET', total) or '0')
end
return 1
"""


def _redis_entry(engine: str, raw: str | None) -> CooldownEntry | None:
    """A cooldown entry as Redis holds it (JSON); one this version cannot read (written by another version of
    metasearch sharing the server, or damaged) is said in the log and taken as no entry, never raised."""
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return CooldownEntry(until=float(data["until"]), failures=int(data["failures"]), status=str(data["status"]),
                             detail=str(data.get("detail", "")))
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("redis cooldown entry of %s unreadable (%s: %s); taken as none", engine, type(exc).__name__, exc)
        return None


class RedisState:
    """State on Redis, shared by every process that uses the same server and prefix. The cache holds at most
    `max_bytes` of entries in all (values, their keys and the bookkeeping of each), counted by the cache
    writes themselves in an atomic script (plain Redis, not Redis Cluster: it touches keys it computes);
    past it the oldest written go first, after the expired ones. The server's own `maxmemory` is left alone:
    it is the operator's, and shared with whatever else uses that Redis."""

    backend = "redis"
    ENTRY_BYTES = 64

    def __init__(self, url: str, prefix: str = "metasearch:", max_bytes: int = DEFAULT_MAX_BYTES):
        import importlib.util

        if importlib.util.find_spec("redis") is None:  # fail here, at construction, when the extra is missing
            raise ImportError("the redis package is not installed")

        self.url = url
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.warnings: list[str] = []
        # redis.asyncio connections belong to one event loop; a new loop (asyncio.run per call) gets its
        # own client, closed when its loop ends (LoopBound) or at close().
        self._clients: PerLoop[tuple[object, LoopBound]] = PerLoop(self._connect)
        # One update of a key at a time per process (per loop): a process's own racing writers would only
        # make each other's EXEC fail and retry (60 at once could use up the retries under load); WATCH is
        # left to settle the races between processes.
        self._update_locks: PerLoop[dict[str, asyncio.Lock]] = PerLoop(dict)

    def _connect(self) -> tuple[object, LoopBound]:
        import redis.asyncio as redis

        client = redis.Redis.from_url(self.url, socket_timeout=1.0, socket_connect_timeout=1.0, decode_responses=True)
        return client, LoopBound(functools.partial(_close_quietly, client))

    def _client(self):
        return self._clients.get()[0]

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
        return _redis_entry(engine, raw)

    async def put(self, engine: str, entry: CooldownEntry, keep_s: float = 30 * 3600) -> None:
        await self._call("set", self._key("cooldown", engine), json.dumps(entry.to_dict()), ex=max(1, int(keep_s)))

    async def update(self, engine: str, change: Change, keep_s: float) -> CooldownEntry:
        """WATCH the key, compute, MULTI/EXEC: a concurrent writer makes EXEC fail, and we start over."""
        import redis

        key = self._key("cooldown", engine)
        lock = self._update_locks.get().setdefault(key, asyncio.Lock())
        try:
            async with lock, self._client().pipeline(transaction=True) as pipe:
                for attempt in range(100):
                    try:
                        await pipe.watch(key)
                        raw = await pipe.get(key)
                        entry = change(_redis_entry(engine, raw))
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
            entry = _redis_entry(key[len(prefix):], raw)
            if entry is not None:
                entries[key[len(prefix):]] = entry
        return entries

    async def cache_get(self, key: str) -> str | None:
        return await self._call("get", self._key("cache", key))

    def _cache_keys(self, key: str) -> list[str]:
        meta = self.prefix + "cache-meta:"
        return [self._key("cache", key), meta + "order", meta + "expiry", meta + "sizes", meta + "bytes",
                meta + "written"]

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        keys = self._cache_keys(key)
        size = 4 * len(keys[0].encode()) + len(value.encode()) + self.ENTRY_BYTES  # the key: in 4 places
        ttl_ms = max(1, round(ttl_s * 1000)) if ttl_s > 0 else 0  # never 0 for a value kept (Redis refuses it)
        await self._call("eval", _REDIS_CACHE_PUT, len(keys), *keys, value, ttl_ms, size,
                         int(time.time() * 1000), self.max_bytes)

    async def usage(self) -> dict[str, object]:
        keys = self._cache_keys("")
        used = await self._call("get", keys[4])
        return usage_report(int(used or 0), int(await self._call("hlen", keys[3])), self.max_bytes)

    async def spend(self, engine: str, per_minute: int) -> bool:
        key = self._key("budget", f"{engine}:{_window(time.time())}")
        used = await self._call("incr", key)
        if used == 1:
            await self._call("expire", key, 120)
        return used <= per_minute

    async def close(self) -> None:
        current = self._clients.current()
        self._clients.forget()
        if current is not None:  # a client of another loop was closed by that loop's end
            await current[1].close()


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

    async def usage(self):
        return await self._run("usage")

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
        return SqliteState(path, wait_s=settings.state_wait_ms / 1000, max_bytes=settings.state_max_bytes)
    except (sqlite3.Error, OSError) as exc:
        message = f"state store {path} unusable ({type(exc).__name__}: {exc}); using in-memory state"
        log.warning("%s", message)
        return MemoryState(warnings=[message], max_bytes=settings.state_max_bytes)


async def state_usage(state: State, timeout_s: float = 2.0) -> dict[str, object]:
    """Which store this is and how full its cache is (`usage_report`), as `/health` and `metasearch config`
    say it; the figures are null when the store did not answer within `timeout_s`."""
    report: dict[str, object] = {"backend": state.backend}
    path = getattr(state, "path", None) or getattr(getattr(state, "fallback", None), "path", None)
    if path is not None:
        report["path"] = str(path)
    try:
        usage = await asyncio.wait_for(state.usage(), timeout_s)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a store that cannot say is said to be unknown, never an error
        usage = None
    report.update(usage or {"bytes": None, "max_bytes": getattr(state, "max_bytes", None), "entries": None,
                            "used_percent": None})
    return report


def describe_state(settings: Settings) -> dict[str, object]:
    """`state_usage` of the store these settings open, from outside any event loop (`metasearch config`).
    An embedded store not created yet is reported empty, and is not created for it."""
    path = state_path(settings)
    embedded = settings.state_backend == "sqlite" or (settings.state_backend == "auto" and not settings.redis_url)
    if embedded and not path.exists():
        return {"backend": "sqlite", "path": str(path), **usage_report(0, 0, settings.state_max_bytes)}

    async def read() -> dict[str, object]:
        state = open_state(settings)
        try:
            return await state_usage(state)
        finally:
            await state.close()
    return asyncio.run(read())


def open_state(settings: Settings) -> State:
    backend = settings.state_backend
    if backend == "memory":
        return MemoryState(max_bytes=settings.state_max_bytes)
    if backend == "redis" or (backend == "auto" and settings.redis_url):
        if not settings.redis_url:
            return MemoryState(warnings=["state_backend is redis but METASEARCH_REDIS_URL is not set"],
                               max_bytes=settings.state_max_bytes)
        try:
            primary = RedisState(settings.redis_url, max_bytes=settings.state_max_bytes)
        except ImportError:
            state = embedded_state(settings)
            state.warnings.append("METASEARCH_REDIS_URL is set but the redis package is not installed "
                                  "(pip install 'metasearch[redis]'); using the embedded store")
            return state
        return FailoverState(primary, embedded_state(settings))
    return embedded_state(settings)
