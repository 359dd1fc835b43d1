"""Resources made for one event loop, closed when that loop ends.

An aiohttp session or a redis.asyncio client belongs to the loop it was made in. Callers of the Python
API often run one loop per call (`asyncio.run(search(...))` in a tool loop, `search_sync`), so nothing
of ours gets a chance to close them and each call would leak one ("Unclosed client session").
`asyncio.run` and `asyncio.Runner` finalise every async generator still suspended in the loop before
closing it (`loop.shutdown_asyncgens()`); a generator suspended here runs the resource's `aclose` at that
moment, inside its own loop. A long-lived loop (a service, Jupyter) keeps the resource until it is
closed explicitly or the loop ends.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, AsyncGenerator, Awaitable, Callable, Generic, Protocol, TypeVar

from plugin.infra import memo

T = TypeVar("T")


async def _close_at_end(aclose: Callable[[], Awaitable[None]]) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await aclose()


class LoopBound:
    """Runs `aclose` when the running event loop shuts down, or at `close()`, whichever comes first.

    Must be made inside the running loop the resource belongs to."""

    def __init__(self, aclose: Callable[[], Awaitable[None]]):
        self._generator = _close_at_end(aclose)
        # Step the generator to its `yield` right now: it awaits nothing on the way, so this completes
        # synchronously, and the running loop's async-generator hooks register it for shutdown.
        try:
            self._generator.asend(None).send(None)
        except StopIteration:
            pass

    async def close(self) -> None:
        await self._generator.aclose()  # runs `aclose` once; a second call does nothing


class PerLoop(Generic[T]):
    """A value that belongs to one event loop (futures, tasks, sessions, semaphores are bound to the loop
    that made them): `get()` makes a fresh one with `make` the first time it is asked for in a running
    loop. Callers that run one loop per call (`asyncio.run(search(...))`) thus never touch what a finished
    loop left behind, and loops running at once on several threads (`asyncio.run(search(...))` from a
    thread pool, on one shared searcher) each keep their own: one slot for "the last loop's value" had them
    take each other's sessions (a session closed under a request: 'Connector is closed', curl's 'HTTP 0').
    Values of closed loops are dropped when a new one is made (their LoopBound closed them)."""

    def __init__(self, make: Callable[[], T]):
        self._make = make
        self._values: dict[asyncio.AbstractEventLoop, T] = {}

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        value = self._values.get(loop)
        if value is None:
            for other in list(self._values):  # list(): another thread's loop may add its own meanwhile
                if other.is_closed():
                    self._values.pop(other, None)
            value = self._values[loop] = self._make()
        return value

    def current(self) -> T | None:
        """The running loop's value if one was made in it, else None (made nowhere, or in another loop)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._values.get(loop)

    def forget(self) -> None:
        """Forget the running loop's value (outside a loop: every value, as their loops have ended)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._values.clear()
            return
        self._values.pop(loop, None)


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make()` to its end for a caller that does not await: on this thread when no
    event loop runs here, else (Jupyter, an async agent framework: a running loop cannot be re-entered)
    on a worker thread with a loop of its own while the caller waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="metasearch-sync") as worker:
        return worker.submit(lambda: asyncio.run(make())).result()  # type: ignore[arg-type]


def close_soon(close: Callable[[], Awaitable[None]], pending: set[asyncio.Task]) -> None:
    """Close something evicted from a module-level cache without making the caller wait: a task on the
    running loop (kept in `pending` until done). Outside a loop it never opened a session: nothing to do."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    task = loop.create_task(close())  # type: ignore[arg-type]
    pending.add(task)
    task.add_done_callback(pending.discard)


class _Closable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class KeptPerSettings(Generic[C]):
    """Long-lived objects (searchers, page readers), one per distinct settings: equal settings, however
    often rebuilt, share one (`Settings.sharing_key`); past `keep` the least recently used is closed
    without making the caller wait (`close_soon`). Made once per module; each registers itself with
    `plugin.infra.memo`, so `memo.forget_all()` forgets and closes what it keeps."""

    def __init__(self, make: Callable[[Any], C], keep: int = 8):
        self.make, self.keep = make, keep
        self.kept: dict[str, C] = {}
        self.retiring: set[asyncio.Task] = set()
        # Loops on several threads ask at once (`asyncio.run(search(...))` from a thread pool): one of them
        # makes the object, the others get it (each made one of its own, dropped unclosed: its store's threads
        # and connections left running).
        self._lock = threading.Lock()
        memo.register(self)

    def get(self, settings: Any) -> C:
        key = settings.sharing_key()
        with self._lock:
            found = self.kept.pop(key, None)
            if found is None:
                found = self.make(settings)
                while len(self.kept) >= self.keep:
                    close_soon(self.kept.pop(next(iter(self.kept))).close, self.retiring)
            self.kept[key] = found  # most recently used last
            return found

    def release(self) -> list[C]:
        """Forget every kept object and hand them over."""
        with self._lock:
            kept, self.kept = list(self.kept.values()), {}
        return kept

    def clear(self) -> None:
        """Forget every kept object and close it (`plugin.infra.memo.forget_all`, interpreter exit): on the
        running loop without making the caller wait; outside a loop, where their sessions closed with the
        loops they were made in, what outlives a loop (an embedded store) through `close_at_exit`."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            for kept in self.release():
                close_at_exit = getattr(kept, "close_at_exit", None)
                if close_at_exit is not None:
                    close_at_exit()
            return
        for kept in self.release():
            close_soon(kept.close, self.retiring)
