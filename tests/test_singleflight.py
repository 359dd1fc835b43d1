"""Single-flight: concurrent callers share one execution; it stops only when the last of them gives up."""

from __future__ import annotations

import asyncio

from plugin.infra.singleflight import SingleFlight


async def test_the_shared_work_is_cancelled_when_its_last_caller_gives_up_and_not_before():
    flight: SingleFlight[str] = SingleFlight()
    started, cancelled = asyncio.Event(), asyncio.Event()
    runs = 0

    async def work() -> str:
        nonlocal runs
        runs += 1
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    callers = [asyncio.create_task(flight.run("key", work)) for _ in range(2)]
    await started.wait()
    callers[0].cancel()
    await asyncio.gather(callers[0], return_exceptions=True)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not cancelled.is_set()  # the other caller still waits for it
    callers[1].cancel()
    await asyncio.gather(callers[1], return_exceptions=True)
    await asyncio.wait_for(cancelled.wait(), 10)  # nobody waits any more: the work stops
    assert runs == 1

    # The key is free again: a new caller starts new work instead of joining the cancelled one.
    started.clear()

    async def quick() -> str:
        return "fresh"

    assert await flight.run("key", quick) == "fresh"
