"""Admission and the engine clock (issue 23 survivors), with real event-loop time and no network:
`upstream_rps` spaces the starts of one upstream (set by the engine's name, it holds behind an endpoint
override too), `pool_limit` bounds the whole process, and the stall credit that spares an engine our
busy loop is bounded (a hung engine still times out) and never charged to the engine.

Spacing is observed as "the next request is still queued", never as a measured duration."""

from __future__ import annotations

import asyncio
import time

import pytest

from plugin.infra.admission import MAX_STALL_CREDIT, Admission, EngineClock, Lane, turn
from plugin.settings import Settings


async def hold(admission: Admission, upstream: str, engine: str, clock: EngineClock,
               admitted: asyncio.Event, release: asyncio.Event) -> None:
    async with admission.admit(upstream, engine, clock):
        admitted.set()
        await release.wait()


async def second_state(settings: Settings, first: tuple[str, str], second: tuple[str, str]) -> str:
    """Admit `first` (upstream, engine) and keep it out; ask for `second`: a while later is it admitted,
    still waiting, or refused (its start would come after its 10 s wait)?"""
    admission = Admission(settings)
    release = asyncio.Event()
    events = [asyncio.Event(), asyncio.Event()]
    clocks = [EngineClock(10, 10), EngineClock(10, 10)]
    tasks = [asyncio.create_task(hold(admission, *first, clocks[0], events[0], release))]
    await asyncio.wait_for(events[0].wait(), 5)
    tasks.append(asyncio.create_task(hold(admission, *second, clocks[1], events[1], release)))
    await asyncio.sleep(0.05)  # far longer than a start 10 ms away, far shorter than one 5 s away
    state = "admitted" if events[1].is_set() else "waiting" if clocks[1].queued else "refused"
    release.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return state


async def test_upstream_rps_spaces_the_starts_of_one_upstream():
    bing = ("bing", "bing")
    assert await second_state(Settings(upstream_rps={"bing": 0.2}), bing, bing) == "waiting"  # 5 s apart
    assert await second_state(Settings(upstream_rps={"bing": 100}), bing, bing) == "admitted"  # 10 ms apart
    assert await second_state(Settings(), bing, bing) == "admitted"
    assert await second_state(Settings(upstream_rps={"bing": 0.2}), bing, ("brave", "brave")) == "admitted"


async def test_an_engines_rps_holds_behind_its_endpoint_override_and_the_upstream_key_wins():
    settings = Settings(endpoints={"bing": "http://127.0.0.1:9"}, upstream_rps={"bing": 0.2})
    upstream = settings.upstream("bing")
    assert upstream != "bing"
    assert await second_state(settings, (upstream, "bing"), (upstream, "bing")) == "waiting"
    keyed = Settings(endpoints={"bing": "http://127.0.0.1:9"}, upstream_rps={upstream: 0.2, "bing": 1000})
    assert await second_state(keyed, (upstream, "bing"), (upstream, "bing")) == "waiting"
    fast = Settings(endpoints={"bing": "http://127.0.0.1:9"}, upstream_rps={upstream: 1000, "bing": 0.2})
    assert await second_state(fast, (upstream, "bing"), (upstream, "bing")) == "admitted"


async def test_pool_limit_bounds_requests_out_across_upstreams():
    assert await second_state(Settings(pool_limit=1), ("bing", "bing"), ("brave", "brave")) == "waiting"
    assert await second_state(Settings(pool_limit=2), ("bing", "bing"), ("brave", "brave")) == "admitted"


async def test_a_lane_admits_first_come_first_served_and_a_freed_slot_passes_straight_on():
    lane = Lane(1)
    order: list[int] = []
    release = asyncio.Event()

    async def one(i: int) -> None:
        async with turn([lane], EngineClock(10, 10)):
            order.append(i)
            await release.wait()

    tasks = [asyncio.create_task(one(i)) for i in range(4)]
    for _ in range(10):
        await asyncio.sleep(0)
    assert order == [0] and lane.queued == 3
    release.set()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3] and lane.active == 0 and lane.queued == 0


def stall(seconds: float) -> None:
    """Our event loop busy elsewhere (CPU-bound work in a callback) for `seconds`."""
    time.sleep(seconds)


async def test_a_hung_engine_still_times_out_while_our_loop_keeps_stalling():
    """Every time the engine's deadline comes, the loop has been busy: the engine is given the stall back,
    but at most MAX_STALL_CREDIT times its deadline in all, so it still times out."""
    clock = EngineClock(0.05, 1)
    stop = asyncio.Event()

    async def busy_loop() -> None:
        while not stop.is_set():
            stall(0.12)  # each stall makes the deadline's timer fire more than STALL_S late
            await asyncio.sleep(0)

    busy = asyncio.create_task(busy_loop())
    ended_by_its_clock = False

    async def hung_request() -> None:
        nonlocal ended_by_its_clock
        try:
            async with clock.out():
                await asyncio.sleep(3600)
        except TimeoutError:
            ended_by_its_clock = True

    try:
        await asyncio.wait_for(hung_request(), 20)  # without the bound the request never ends: cut here
    except TimeoutError:
        pass
    finally:
        stop.set()
        await busy
    assert ended_by_its_clock
    assert clock.engine_s <= clock.timeout_s + MAX_STALL_CREDIT * clock.timeout_s + 0.5


async def test_time_our_loop_was_stalled_is_not_charged_to_the_engine():
    """The answer came while our loop was busy past the engine's deadline: the engine did not time out,
    and the stall is not on its clock (only its own time is)."""
    clock = EngineClock(0.2, 1)
    async with clock.out():
        stall(0.6)  # the deadline's timer is due at 0.2 s and can only fire after this
        await asyncio.sleep(0.01)  # the answer is read after the late timer has run: the stall is credited back
    # Without the credit the engine would be charged >= 0.6 s; with it, about its 0.2 s deadline.
    assert clock.engine_s < 0.5, clock.engine_s
    assert clock.engine_ms() < 500


async def test_engine_and_queue_milliseconds_are_the_clocks_seconds_with_the_current_span():
    clock = EngineClock(10, 10)
    clock.engine_s, clock.queue_s = 2.5, 1.25
    assert (clock.engine_ms(), clock.queue_ms()) == (2500, 1250)
    async with clock.waiting():
        await asyncio.sleep(0.01)
        assert clock.queue_ms() >= 1260  # the wait under way counts too
    assert clock.queue_ms() >= 1260 and not clock.queued


async def test_a_run_that_goes_to_the_background_gives_its_slot_to_a_request_already_waiting():
    """The waiting request was queued while the run still had a search waiting for it; once nobody waits
    for the run, it makes way at once (not only when the next request arrives)."""
    lane = Lane(1)
    holder_clock, waiter_clock = EngineClock(10, 10), EngineClock(10, 10)
    release = asyncio.Event()

    async def hold(clock: EngineClock) -> None:
        async with turn([lane], clock):
            await release.wait()

    holder = asyncio.create_task(hold(holder_clock))
    await asyncio.sleep(0)
    waiter = asyncio.create_task(hold(waiter_clock))
    for _ in range(5):
        await asyncio.sleep(0)
    assert lane.queued == 1 and not holder_clock.preempted
    holder_clock.to_background()
    await asyncio.wait({holder}, timeout=1)  # a run that did not make way would hold on until released
    for _ in range(5):
        await asyncio.sleep(0)
    preempted, admitted = holder.cancelled() and holder_clock.preempted, waiter_clock.admitted
    release.set()
    await asyncio.gather(holder, waiter, return_exceptions=True)
    assert preempted and admitted


async def test_a_start_due_exactly_at_the_end_of_the_wait_is_still_in_time():
    lane = Lane(1, interval=1.0)
    loop = asyncio.get_running_loop()
    lane.next_start = loop.time() + 0.05  # the previous start's spacing ends here...
    await lane.acquire(until=lane.next_start)  # ... exactly when this request stops waiting: admitted
    assert lane.active == 1
    lane.release()
    late = Lane(1, interval=1.0)
    late.next_start = loop.time() + 0.05
    with pytest.raises(TimeoutError):
        await late.acquire(until=late.next_start - 0.01)
    assert late.active == 0


async def test_past_keep_lanes_only_the_idle_ones_are_forgotten():
    from plugin.infra.admission import Lanes

    lanes = Lanes(lambda key: Lane(1), keep=2)
    busy = lanes.get("busy.example")
    await busy.acquire(until=asyncio.get_running_loop().time() + 1)
    spaced = lanes.get("spaced.example")
    spaced.next_start = asyncio.get_running_loop().time() + 60  # idle, but its next start is still to keep
    lanes.get("third.example")  # past keep: nothing idle to forget, so all three stay
    assert lanes.find("busy.example") is busy and lanes.find("spaced.example") is spaced
    spaced.next_start = 0.0
    lanes.get("fourth.example")  # past keep again: the idle ones go, the busy one stays
    assert lanes.find("busy.example") is busy
    assert lanes.find("spaced.example") is None and lanes.find("third.example") is None
    assert lanes.find("fourth.example") is not None


def test_a_lane_is_idle_from_the_moment_its_spacing_ends():
    lane = Lane(1, interval=1.0)
    lane.next_start = 100.0
    assert not lane.idle(99.999) and lane.idle(100.0)
    lane.active = 1
    assert not lane.idle(200.0)


async def test_a_run_someone_waits_for_again_keeps_its_slot():
    lane = Lane(1)
    clock = EngineClock(10, 10)
    release = asyncio.Event()

    async def hold() -> None:
        async with turn([lane], clock):
            await release.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    clock.to_background()  # nobody waited for it for a while...
    clock.to_foreground()  # ... then an identical search joined it again
    waiter = asyncio.create_task(turn([lane], EngineClock(10, 10)).__aenter__())
    for _ in range(5):
        await asyncio.sleep(0)
    kept = not holder.done() and not clock.preempted
    release.set()
    await holder
    await waiter
    assert kept


async def test_an_engines_time_left_is_its_deadline_less_the_time_it_spent():
    clock = EngineClock(1.0, 10)
    clock.engine_s = 0.4
    assert clock.remaining() == pytest.approx(0.6)
    clock.engine_s = 1.0  # spent: a follow-up request is refused before it is sent
    with pytest.raises(TimeoutError, match="engine time spent"):
        async with clock.out():
            pass


async def test_a_request_that_gives_up_waiting_leaves_the_queue():
    lane = Lane(1)
    await lane.acquire(until=asyncio.get_running_loop().time() + 1)
    with pytest.raises(TimeoutError):
        await lane.acquire(until=asyncio.get_running_loop().time() + 0.05)
    assert lane.queued == 0 and not lane.waiters  # no ghost in the line: nobody to make way for
    lane.release()
    assert lane.idle(asyncio.get_running_loop().time())


async def test_an_engines_time_counts_the_request_still_out():
    clock = EngineClock(10, 10)
    async with clock.out():
        await asyncio.sleep(0.05)
        assert clock.engine_ms() >= 50  # what a `late` report says of a run still waiting for its answer
    assert clock.engine_ms() >= 50


async def test_by_default_a_thousand_and_twenty_four_lanes_are_remembered_before_idle_ones_go():
    from plugin.infra.admission import Lanes

    lanes = Lanes(lambda key: Lane(1))
    first = lanes.get("host0.example")
    for i in range(1, 1024):
        lanes.get(f"host{i}.example")
    assert lanes.find("host0.example") is first
    lanes.get("host1024.example")  # the 1025th: the idle ones are forgotten
    assert lanes.find("host0.example") is None and lanes.find("host1024.example") is not None
