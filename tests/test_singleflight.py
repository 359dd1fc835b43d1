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


async def test_a_caller_arriving_just_after_the_last_one_left_starts_new_work():
    """The work of a key nobody waits for is being cancelled; a caller that comes at once (before the
    cancellation has run) gets new work, not the cancelled one."""
    flight: SingleFlight[str] = SingleFlight()
    started = asyncio.Event()

    async def slow() -> str:
        started.set()
        await asyncio.sleep(3600)
        return "never"

    async def quick() -> str:
        return "fresh"

    leaving = asyncio.create_task(flight.run("key", slow))
    await started.wait()
    leaving.cancel()  # the only caller gives up...
    arriving = asyncio.create_task(flight.run("key", quick))  # ...and another asks in the same turn of the loop
    assert await arriving == "fresh"
    await asyncio.gather(leaving, return_exceptions=True)
    assert leaving.cancelled()


async def test_callers_of_different_keys_do_not_share_work():
    flight: SingleFlight[str] = SingleFlight()
    calls = []

    async def work(name: str) -> str:
        calls.append(name)
        await asyncio.sleep(0)
        return name

    assert await asyncio.gather(flight.run("a", lambda: work("a")), flight.run("b", lambda: work("b")),
                                flight.run("a", lambda: work("a2"))) == ["a", "b", "a"]
    assert sorted(calls) == ["a", "b"]
    assert await flight.run("a", lambda: work("a3")) == "a3"  # done: the next call runs again
