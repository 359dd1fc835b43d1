"""Single-flight: concurrent calls with the same key share one execution.

The execution is a task of its own, so a caller that gives up (cancelled) does not cancel it for the
others; when the last caller has gone, it is cancelled.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, TypeVar

T = TypeVar("T")


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[T]] = {}
        self._waiters: dict[asyncio.Task[T], int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # tasks of another (finished) event loop cannot be shared here
            self._tasks, self._waiters, self._loop = {}, {}, loop
        task = self._tasks.get(key)
        if task is None:
            task = loop.create_task(work())  # type: ignore[arg-type]
            self._tasks[key] = task
            task.add_done_callback(lambda done: self._tasks.pop(key, None) if self._tasks.get(key) is done else None)
        self._waiters[task] = self._waiters.get(task, 0) + 1
        try:
            return await asyncio.shield(task)
        finally:
            self._waiters[task] -= 1
            if self._waiters[task] <= 0:
                del self._waiters[task]
                if not task.done():
                    task.cancel()
                    if self._tasks.get(key) is task:
                        del self._tasks[key]
