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

from typing import AsyncGenerator, Awaitable, Callable


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
