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


async def held_turn(lane: Lane, clock: EngineClock, release: asyncio.Event) -> None:
    """A run that takes a turn in `lane` and keeps it until `release` is set."""
    async with turn([lane], clock):
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

    holder = asyncio.create_task(held_turn(lane, holder_clock, release))
    await asyncio.sleep(0)
    waiter = asyncio.create_task(held_turn(lane, waiter_clock, release))
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

    holder = asyncio.create_task(held_turn(lane, clock, release))
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


# ----- issue 29, item 10: every path that takes a slot gives it back -----
async def test_an_upstream_slot_taken_before_the_process_lane_timed_out_is_released():
    from plugin.infra.admission import Overloaded

    upstream, process = Lane(2), Lane(1)
    await process.acquire(until=asyncio.get_running_loop().time() + 1)  # the whole process is busy
    clock = EngineClock(10, 0.05)
    with pytest.raises(Overloaded, match="^overloaded$"):
        async with turn([upstream, process], clock):
            pass
    assert upstream.active == 0 and upstream.queued == 0  # the upstream's slot was given back
    assert process.active == 1 and process.queued == 0
    assert not clock.admitted and not clock.queued and clock.queue_s > 0


async def test_a_request_the_pool_limit_keeps_waiting_gives_its_upstreams_slot_back():
    admission = Admission(Settings(pool_limit=1, upstream_concurrency=1))
    release, admitted = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(hold(admission, "bing", "bing", EngineClock(10, 10), admitted, release))
    await asyncio.wait_for(admitted.wait(), 5)
    from plugin.infra.admission import Overloaded

    with pytest.raises(Overloaded):
        async with admission.admit("brave", "brave", EngineClock(10, 0.05)):
            pass
    assert admission.find("brave").active == 0
    release.set()
    await holder
    assert admission.find("bing").active == 0 and admission._process.get().active == 0


async def test_the_slot_handed_to_a_waiter_as_it_gives_up_passes_on_to_the_next():
    """The holder releases (the slot is handed to the first waiter) and, before that waiter resumes, it is
    cancelled (its timeout or its search ending): the slot it was given goes to the next in line, and is
    not lost."""
    lane = Lane(1)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 10)
    first = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    second = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    for _ in range(5):
        await asyncio.sleep(0)
    assert lane.queued == 2
    lane.release()  # handed straight to `first`...
    first.cancel()  # ...which gives up before it could take it
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 5)  # the next in line has it
    assert lane.active == 1 and lane.queued == 0
    lane.release()
    assert lane.active == 0


async def test_the_slot_handed_to_the_last_waiter_as_it_gives_up_is_freed():
    lane = Lane(1)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 10)
    waiter = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    for _ in range(5):
        await asyncio.sleep(0)
    lane.release()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert lane.active == 0 and lane.queued == 0 and lane.idle(loop.time())


async def test_a_request_cancelled_while_it_waits_for_its_spacing_gives_its_slot_back():
    lane = Lane(2, interval=60.0)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 1)  # starts now; the next may start in a minute
    spaced = asyncio.create_task(lane.acquire(until=loop.time() + 120))
    for _ in range(5):
        await asyncio.sleep(0)
    assert lane.active == 2  # it has its slot, and sleeps until its start
    spaced.cancel()
    with pytest.raises(asyncio.CancelledError):
        await spaced
    assert lane.active == 1


async def test_a_start_past_the_wait_gives_the_slot_back_at_once():
    lane = Lane(2, interval=60.0)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 1)
    with pytest.raises(TimeoutError):
        await lane.acquire(until=loop.time() + 1)  # its start would be a minute away
    assert lane.active == 1 and lane.queued == 0
    assert lane.next_start == pytest.approx(loop.time() + 60, abs=1)  # the refused start took no spacing


async def test_a_lane_without_spacing_admits_up_to_its_limit_at_once_and_queues_the_next():
    lane = Lane(2)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 1)
    await lane.acquire(until=loop.time() + 1)
    third = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    await asyncio.sleep(0)
    assert lane.active == 2 and lane.queued == 1 and not third.done()
    lane.release()
    await asyncio.wait_for(third, 5)
    assert lane.active == 2 and lane.next_start == 0.0


async def test_a_request_arriving_while_others_wait_queues_behind_them_even_with_a_slot_free():
    """First come, first served: a slot freed while requests wait goes to the first of them, never to a
    newcomer."""
    lane = Lane(1)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 1)
    order = []

    async def take(name):
        await lane.acquire(until=loop.time() + 10)
        order.append(name)

    first = asyncio.create_task(take("first"))
    await asyncio.sleep(0)
    lane.release()  # handed to `first`, which has not resumed yet: active stays 1
    newcomer = asyncio.create_task(take("newcomer"))
    await asyncio.sleep(0)
    await asyncio.wait_for(first, 5)
    assert order == ["first"] and not newcomer.done()
    lane.release()
    await asyncio.wait_for(newcomer, 5)
    assert order == ["first", "newcomer"]


# ----- a run nobody waits for: withdrawn if never admitted, kept in the background if out -----
async def flight_of(flights, key: str, body):
    from plugin.pipeline.tiers import Flight

    clock = EngineClock(10, 10)
    flight = flights.join(key, "bing", lambda c: body(c), lambda: clock)
    assert isinstance(flight, Flight) and flight.clock is clock
    for _ in range(3):
        await asyncio.sleep(0)
    return flight


async def test_a_run_never_admitted_is_cancelled_when_the_search_answers():
    from plugin.pipeline.tiers import Flights

    flights = Flights()

    async def before_admission(clock):  # e.g. still reading its cooldown: not queued, not admitted
        await asyncio.sleep(3600)

    flight = await flight_of(flights, "k1", before_admission)
    assert not flight.clock.queued and not flight.clock.admitted
    flights.leave(flight)
    # A search asking the same at once starts a run of its own, not the one being cancelled.
    again = flights.join("k1", "bing", lambda c: before_admission(c), lambda: EngineClock(1, 1))
    assert again is not flight and again.waiters == 1
    await asyncio.gather(flight.task, return_exceptions=True)
    assert flight.task.cancelled() and flights.running == 1
    await flights.close()


async def test_a_run_queued_for_admission_is_cancelled_and_one_out_goes_to_the_background():
    from plugin.pipeline.tiers import Flights

    flights = Flights()
    lane = Lane(1)
    await lane.acquire(until=asyncio.get_running_loop().time() + 1)

    async def queued(clock):
        async with turn([lane], clock):
            await asyncio.sleep(3600)

    waiting = await flight_of(flights, "queued", queued)
    assert waiting.clock.queued
    flights.leave(waiting)
    await asyncio.gather(waiting.task, return_exceptions=True)
    assert waiting.task.cancelled() and lane.queued == 0

    lane.release()
    out = await flight_of(flights, "out", queued)
    assert out.clock.admitted and not out.clock.queued
    flights.leave(out)
    await asyncio.sleep(0)
    assert not out.task.done() and out.clock.background  # goes on: its outcome still counts
    await flights.close()


async def test_a_run_another_search_still_waits_for_is_left_alone():
    from plugin.pipeline.tiers import Flights

    flights = Flights()

    async def forever(clock):
        await asyncio.sleep(3600)

    flight = await flight_of(flights, "shared", forever)
    assert flights.join("shared", "bing", forever, lambda: EngineClock(1, 1)) is flight and flight.waiters == 2
    flights.leave(flight)
    await asyncio.sleep(0)
    assert not flight.task.done() and not flight.clock.background
    flights.leave(flight)
    await asyncio.gather(flight.task, return_exceptions=True)
    assert flight.task.cancelled()
    await flights.close()


async def test_a_saturated_page_queue_during_a_search_read_is_overloaded_not_timeout(standins):
    """search(read=2), both pages on one host that takes one read at a time, and the first page hangs:
    the second waits its turn until the reads' deadline. It was never asked: `overloaded` (our queue),
    not `timeout` (the page's slowness)."""
    from pages import article_html, routes
    from plugin.pipeline.searcher import Searcher
    from standins import bing_page, hang, page

    pages = await standins(routes({"/robots.txt": page("User-agent: *\nDisallow:\n", content_type="text/plain"),
                                   "/one": hang(120), "/two": hang(120)}))
    rows = [("Async Rust explained", pages.url + "/one", "async rust explained in depth"),
            ("Async Rust pitfalls", pages.url + "/two", "async rust pitfalls to avoid")]
    engine = await standins(page(bing_page(rows)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], allow_private_hosts="127.0.0.1/32",
                        state_backend="memory", fetch_host_interval_ms=0, fetch_host_concurrency=1,
                        deadline_ms=1500, read_min_ms=800, fetch_timeout_ms=100_000)
    async with Searcher(settings) as searcher:
        response = await searcher.search("async rust", read=2)
    errors = sorted(row.read_error.code for row in response.results[:2])
    assert errors == ["overloaded", "timeout"], [row.read_error for row in response.results[:2]]
    assert [seen.path for seen in pages.requests].count("/robots.txt") == 1


async def test_each_start_is_spaced_from_the_previous_start_not_from_when_it_was_asked():
    lane = Lane(3, interval=60.0)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 1)
    first_start = lane.next_start - 60.0
    spaced = asyncio.create_task(lane.acquire(until=loop.time() + 300))  # starts a minute after the first
    for _ in range(5):
        await asyncio.sleep(0)
    assert lane.next_start == pytest.approx(first_start + 120.0)  # the one after it: two minutes after the first
    spaced.cancel()
    await asyncio.gather(spaced, return_exceptions=True)
    assert lane.active == 1


async def test_a_turn_cancelled_while_it_waits_for_the_next_lane_gives_the_first_back_and_stays_cancelled():
    upstream, process = Lane(1), Lane(1)
    loop = asyncio.get_running_loop()
    await process.acquire(until=loop.time() + 1)
    clock = EngineClock(10, 10)

    async def take() -> None:
        async with turn([upstream, process], clock):
            pass

    task = asyncio.create_task(take())
    for _ in range(5):
        await asyncio.sleep(0)
    assert upstream.active == 1 and process.queued == 1 and clock.queued
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # a cancellation, not `overloaded`
        await task
    assert upstream.active == 0 and process.queued == 0 and not clock.queued and not clock.admitted


async def test_a_slot_freed_while_a_cancelled_request_is_still_in_line_goes_to_the_next():
    lane = Lane(1)
    loop = asyncio.get_running_loop()
    await lane.acquire(until=loop.time() + 10)
    gone = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    waiting = asyncio.create_task(lane.acquire(until=loop.time() + 10))
    for _ in range(5):
        await asyncio.sleep(0)
    gone.cancel()  # its place in line is cancelled at once; it leaves the line when it next runs
    lane.release()  # meanwhile the slot is freed: it skips the cancelled place
    await asyncio.wait_for(waiting, 5)
    await asyncio.gather(gone, return_exceptions=True)
    assert gone.cancelled() and lane.active == 1 and lane.queued == 0


async def test_nested_waits_are_one_wait_on_the_clock():
    clock = EngineClock(10, 10)
    seen = []
    clock.watch(lambda: seen.append(clock.on_store))
    async with clock.waiting():  # a lane: queue time, nobody told (the searches' clocks run on)
        pass
    assert seen == [] and not clock.queued
    async with clock.store_wait():
        async with clock.store_wait():
            await asyncio.sleep(0.01)
        assert clock.queued and clock.on_store  # still waiting on the outer one
        await asyncio.sleep(0.01)
    assert not clock.queued and seen == [True, False]  # told once when it started, once when it stopped
    assert 0 < clock.queue_s
    clock.unwatch(seen.append)  # not watching: nothing happens
    clock.unwatch(clock.unwatch)


async def test_only_the_first_lane_of_a_turn_is_the_one_a_run_may_be_asked_to_give_up():
    upstream, process = Lane(1), Lane(2)
    clock = EngineClock(10, 10)
    async with turn([upstream, process], clock):
        assert clock.lane is upstream and upstream.holders == [clock] and process.holders == []
    assert clock.lane is None and upstream.holders == [] and clock.admitted


async def test_a_run_that_goes_to_the_background_with_nobody_waiting_keeps_its_slot():
    lane = Lane(1)
    clock = EngineClock(10, 10)
    release = asyncio.Event()

    holder = asyncio.create_task(held_turn(lane, clock, release))
    await asyncio.sleep(0)
    clock.to_background()
    await asyncio.sleep(0)
    assert not holder.done() and not clock.preempted and clock.background
    release.set()
    await holder


async def test_lanes_without_a_maker_refuse_a_key_they_cannot_make():
    from plugin.infra.admission import Lanes

    lanes = Lanes()
    with pytest.raises(ValueError, match="no way to make the lane of 'host.example'"):
        lanes.get("host.example")
    made = lanes.get("host.example", lambda: Lane(3))
    assert lanes.get("host.example") is made and made.limit == 3
    assert Lanes().find("anything") is None


async def test_the_lane_a_run_may_give_up_is_the_first_it_took_in_nested_turns():
    """A page read waits for its host, then (inside) for the transport's admission, on one clock: the
    slot it may be asked to give up stays its host's, and is no one's once it is out of both."""
    host, upstream = Lane(1), Lane(1)
    clock = EngineClock(10, 10)
    async with turn([host], clock):
        async with turn([upstream], clock):
            assert clock.lane is host and upstream.holders == [clock]
        assert clock.lane is host and upstream.holders == []
    assert clock.lane is None and host.holders == []


async def test_two_requests_queued_at_once_each_take_the_slot_of_another_background_run():
    lane = Lane(2)
    clocks = [EngineClock(10, 10), EngineClock(10, 10)]
    release = asyncio.Event()

    holders = [asyncio.create_task(held_turn(lane, clock, release)) for clock in clocks]
    for _ in range(3):
        await asyncio.sleep(0)
    for clock in clocks:
        clock.background = True  # nobody waits for them (set directly: no waiter yet to make way for)
    waiters = [asyncio.create_task(lane.acquire(until=asyncio.get_running_loop().time() + 10)) for _ in range(2)]
    await asyncio.sleep(0)  # both queue in this turn of the loop, before either holder has stopped
    assert [clock.preempted for clock in clocks] == [True, True]  # the second did not pick the first's victim
    await asyncio.wait_for(asyncio.gather(*waiters), 5)
    await asyncio.gather(*holders, return_exceptions=True)
    assert all(holder.cancelled() for holder in holders) and lane.active == 2


async def test_admitted_at_is_the_first_admission_of_the_run():
    lane = Lane(1)
    clock = EngineClock(10, 10)
    async with turn([lane], clock):
        first = clock.admitted_at
    await asyncio.sleep(0.01)
    async with turn([lane], clock):  # a follow-up request of the same run
        pass
    assert clock.admitted and clock.admitted_at == first
