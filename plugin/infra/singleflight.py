"""Single-flight: concurrent calls with the same key share one execution.

The execution is a task of its own, so a caller that gives up (cancelled) does not cancel it for the
others; when the last caller has gone, it is cancelled.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, TypeVar

from plugin.infra.lifecycle import PerLoop

T = TypeVar("T")


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        # In flight by key, and how many callers wait for each; tasks of another (finished) event loop
        # cannot be shared here, so each loop has its own.
        self._flights: PerLoop[tuple[dict[str, asyncio.Task[T]], dict[asyncio.Task[T], int]]] = \
            PerLoop(lambda: ({}, {}))

    async def run(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        tasks, waiters = self._flights.get()
        task = tasks.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(work())  # type: ignore[arg-type]
            tasks[key] = task
            task.add_done_callback(lambda done: tasks.pop(key, None) if tasks.get(key) is done else None)
        waiters[task] = waiters.get(task, 0) + 1
        try:
            return await asyncio.shield(task)
        finally:
            waiters[task] -= 1
            if waiters[task] <= 0:
                del waiters[task]
                if not task.done():
                    task.cancel()
                    if tasks.get(key) is task:
                        del tasks[key]
