"""When a search answers, and what waiting is blamed on (loopback stand-ins; issue 11).

Timing bounds here are loose on purpose (a factor of the deadline at stake): the figures themselves
come from scripts/latency.py, not from tests.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time

import pytest

from plugin.infra.cooldown import CooldownEntry
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, ddg_page, hang, page

ROWS = [(f"Rust async runtime guide part {i}", f"https://site{i}.example.org/rust-async", "rust async runtime")
        for i in range(12)]
BING_CAPTCHA = ('<html><body><div id="b_content"><div class="captcha"><div class="captcha_header">One last step'
                '</div><div class="captcha_text">Please solve the challenge below to continue</div></div></div>'
                '</body></html>')
FALLBACK_DDG = {"duckduckgo-html": "fallback"}  # an engine whose page the stand-ins can serve, as fallback


def make(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


def statuses(response) -> dict[str, str]:
    return {e.name: e.status for e in response.engines}


async def test_a_hung_engine_does_not_hold_the_answer_and_is_reported_late(standins):
    healthy = {"bing": await standins(page(bing_page(ROWS), delay=0.05)),
               "bing-cn": await standins(page(bing_page(ROWS[::-1]), delay=0.05)),
               "duckduckgo-html": await standins(page(ddg_page(ROWS[2:]), delay=0.05))}
    stuck = await standins(hang(60))
    endpoints = {name: st.url for name, st in healthy.items()} | {"brave": stuck.url}
    # The engine's own deadline and the overall one are far away: only the soft deadline can answer early.
    s = make(endpoints, timeout_ms=30000, deadline_ms=30000, soft_deadline_ms=30000, grace_ms=300)
    started = time.monotonic()
    response = await s.search("rust async runtime")
    elapsed = time.monotonic() - started
    await s.close()
    assert statuses(response) == {"bing": "ok", "bing-cn": "ok", "duckduckgo-html": "ok", "brave": "late"}
    late = next(e for e in response.engines if e.name == "brave")
    assert late.kept == 0 and late.latency_ms is not None and "no answer" in late.detail
    assert len(response.results) == 8 and response.partial is True
    assert response.warnings == []  # `limit` rows: none short, however late an engine
    assert elapsed < 5  # quorum + 0.3 s grace; the hung engine alone would hold it for 30 s


async def test_every_engine_answers_when_all_are_quick(standins):
    healthy = {"bing": await standins(page(bing_page(ROWS[:3]), delay=0.05)),
               "duckduckgo-html": await standins(page(ddg_page(ROWS[3:5]), delay=0.3))}
    s = make({name: st.url for name, st in healthy.items()}, grace_ms=0)
    response = await s.search("rust async runtime")
    await s.close()
    # Fewer than `limit` rows: no early answer, the slower engine is waited for.
    assert statuses(response) == {"bing": "ok", "duckduckgo-html": "ok"} and len(response.results) == 5


async def test_a_late_engines_outcome_reaches_the_cooldown_store(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    s = make({"bing": good.url, "brave": stuck.url}, timeout_ms=1000, deadline_ms=30000, grace_ms=100)
    response = await s.search("rust async runtime")
    assert statuses(response) == {"bing": "ok", "brave": "late"}
    assert await s.cooldowns.store.get(s.settings.upstream("brave")) is None  # not known yet
    await asyncio.wait_for(s.flights.drain(), 10)  # the late run finishes in the background...
    entry = await s.cooldowns.store.get(s.settings.upstream("brave"))
    assert entry is not None and entry.status == "timeout"  # ...and its timeout benches the engine
    again = await s.search("rust async runtime again")
    await s.close()
    assert statuses(again) == {"bing": "ok", "brave": "cooldown"}
    assert len(stuck.requests) == 1


async def test_close_cancels_late_engines_without_recording_them(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    s = make({"bing": good.url, "brave": stuck.url}, timeout_ms=1000, deadline_ms=30000, grace_ms=100)
    response = await s.search("rust async runtime")
    assert statuses(response)["brave"] == "late" and s.flights.running == 1
    await s.close()  # what the CLI does at exit
    assert s.flights.running == 0
    await asyncio.sleep(1.2)  # past the engine's deadline: nothing was left running to record a timeout
    assert await s.state.get(s.settings.upstream("brave")) is None


async def test_fallback_starts_at_once_when_every_primary_is_blocked_or_benched(standins):
    blocked = await standins(page(BING_CAPTCHA))
    benched = await standins(page(bing_page(ROWS)))
    fallback = await standins(page(ddg_page(ROWS)))
    s = make({"bing": blocked.url, "bing-cn": benched.url, "duckduckgo-html": fallback.url},
             tiers=FALLBACK_DDG, timeout_ms=30000, deadline_ms=30000)
    await s.state.put(s.settings.upstream("bing-cn"), CooldownEntry(until=time.time() + 600, failures=1,
                                                                       status="blocked"))
    response = await s.search("rust async runtime")
    await s.close()
    assert statuses(response) == {"bing": "blocked", "bing-cn": "cooldown", "duckduckgo-html": "ok"}
    assert benched.requests == [] and len(fallback.requests) == 1


async def test_fallback_starts_at_the_soft_deadline_while_a_primary_hangs(standins):
    blocked = await standins(page(BING_CAPTCHA))
    stuck = await standins(hang(60))
    fallback = await standins(page(ddg_page(ROWS)))
    s = make({"bing": blocked.url, "brave": stuck.url, "duckduckgo-html": fallback.url},
             tiers=FALLBACK_DDG, timeout_ms=30000, deadline_ms=30000, soft_deadline_ms=500)
    started = time.monotonic()
    response = await s.search("rust async runtime")
    elapsed = time.monotonic() - started
    arrived = fallback.requests[0].arrived
    await s.close()
    assert statuses(response) == {"bing": "blocked", "brave": "late", "duckduckgo-html": "ok"}
    assert arrived - stuck.requests[0].arrived < 10  # started at the soft deadline, not the 30 s timeout
    assert elapsed < 10 and len(response.results) == 8


async def test_deadline_caps_both_tiers(standins):
    primary = await standins(hang(60))
    fallback = await standins(hang(60))
    s = make({"bing": primary.url, "duckduckgo-lite": fallback.url}, timeout_ms=60000, deadline_ms=1500,
             soft_deadline_ms=300)
    started = time.monotonic()
    response = await s.search("rust async runtime")
    elapsed = time.monotonic() - started
    await s.close()
    assert statuses(response) == {"bing": "late", "duckduckgo-lite": "late"}
    assert len(fallback.requests) == 1  # the fallback did start, within the same deadline
    assert elapsed < 1.5 * 3 and response.partial is True


async def test_queue_time_is_never_a_timeout_or_a_cooldown(standins):
    engine = await standins(page(bing_page(ROWS), delay=0.15))
    # One request at a time to this upstream, a deadline of two answers: 12 searches queue far longer.
    s = make({"bing": engine.url}, upstream_concurrency=1, timeout_ms=300, deadline_ms=60000)  # the engine's is the point
    responses = await asyncio.gather(*(s.search(f"rust async runtime {i}") for i in range(12)))
    store = await s.cooldowns.store.all()
    await s.close()
    assert [statuses(r)["bing"] for r in responses] == ["ok"] * 12
    assert store == {}
    assert max(r.engines[0].queue_ms for r in responses) > 300  # queued longer than the deadline...
    assert max(r.engines[0].latency_ms for r in responses) < 300  # ...which counts only time out


async def test_a_burst_past_one_hung_engine_answers_without_waiting_for_its_admission(standins):
    """One engine hangs and holds its only slot for a search that waits for it (a foreground run, never
    given up); a burst of searches asking it and a healthy engine answers with the healthy engine's rows,
    the hung one reported `queued` (never asked, our load), without waiting for a turn at it: each search's
    clock runs while its engine is queued. Before, the burst waited until the holder's deadline."""
    from aiohttp import web

    from plugin.render import render_for_model

    released = asyncio.Event()

    async def held(request, standin):
        await released.wait()
        return web.Response(text="too late")

    hung = await standins(held)
    good = await standins(page(bing_page(ROWS)))
    s = make({"bing": good.url, "duckduckgo-html": hung.url}, upstream_concurrency=1, timeout_ms=60000,
             deadline_ms=20000, soft_deadline_ms=20000, grace_ms=100, tiers={"bing": "primary",
                                                                          "duckduckgo-html": "primary"})
    holder = asyncio.create_task(s.search("tokio runtime", engines=["duckduckgo-html"]))
    await hung.asked(5.0)  # the holder's request is out: the only slot is taken
    burst = asyncio.ensure_future(asyncio.gather(*(s.search(f"rust async runtime {i}") for i in range(5))))
    await asyncio.wait([burst, holder], return_when=asyncio.FIRST_COMPLETED)
    try:
        assert burst.done() and not holder.done()  # the burst answered while the slot was still held
        for response in burst.result():
            reports = {e.name: e for e in response.engines}
            assert reports["bing"].status == "ok" and len(response.results) == 8
            queued = reports["duckduckgo-html"]
            assert queued.status == "queued" and queued.queue_ms is not None and queued.queue_ms > 0
            assert queued.detail.startswith("not asked: still queued for admission"), queued.detail
            assert response.partial
            assert "duckduckgo-html (queued: not asked: still queued for admission" in render_for_model(response)
        assert len(hung.requests) == 1  # only the holder's request went out
    finally:
        released.set()
        await holder
        await s.close()
    assert await s.cooldowns.store.all() == {}  # queued says nothing about the engine


async def test_not_admitted_in_time_is_queued_without_cooldown(standins):
    # The admitted request holds the only slot 12x longer than the others may wait: a loaded machine
    # still cannot admit a second one in time.
    engine = await standins(page(bing_page(ROWS), delay=1.2))
    s = make({"bing": engine.url}, upstream_concurrency=1, admission_wait_ms=100)
    responses = await asyncio.gather(*(s.search(f"rust async runtime {i}") for i in range(3)))
    store = await s.cooldowns.store.all()
    outcomes = sorted((r.engines[0].status, r.engines[0].detail) for r in responses)
    waited = "not asked: not admitted within admission_wait_ms (100 ms; overloaded: our load, not the engine's)"
    assert outcomes == [("ok", ""), ("queued", waited), ("queued", waited)]
    assert store == {} and len(engine.requests) == 1
    skipped = [r for r in responses if r.engines[0].status == "queued"]
    # Its queue time is said (how long is the machine's business: the wait runs from the search's start,
    # so a loaded event loop leaves less of the 100 ms to spend in the queue itself).
    assert all(r.engines[0].queue_ms is not None and r.engines[0].queue_ms > 0 and r.partial for r in skipped)

    # Being skipped says nothing about the engine: its failure record stays as it was.
    upstream = s.settings.upstream("bing")
    await s.state.put(upstream, CooldownEntry(until=time.time() - 1, failures=3, status="error"))
    engine.behaviour = page("unavailable", status=503, delay=1.2)
    responses = await asyncio.gather(*(s.search(f"tokio runtime {i}") for i in range(2)))
    entry = await s.cooldowns.store.get(upstream)
    await s.close()
    assert sorted(r.engines[0].status for r in responses) == ["error", "queued"]
    assert entry is not None and entry.failures == 4


async def test_a_fallback_engine_still_queued_when_the_search_answers_is_reported_queued(standins):
    """A slow primary starts the fallback; the fallback engine queues behind another search's request for
    its only slot; the primary then delivers enough rows and the search answers. The fallback engine is in
    the answer, named, `queued` (never asked: our load, not its failure), and benched for nothing."""
    bing = await standins(page(bing_page(ROWS), delay=0.8))
    ddg = await standins(page(ddg_page(ROWS), delay=2.5))
    s = make({"bing": bing.url, "duckduckgo-html": ddg.url}, upstream_concurrency=1, soft_deadline_ms=200,
             tiers={"bing": "primary", "duckduckgo-html": "fallback"})
    holder = asyncio.create_task(s.search("tokio runtime", engines=["duckduckgo-html"]))
    await asyncio.sleep(0.1)  # that search holds DuckDuckGo's only slot for 2.5 s
    response = await s.search("rust async runtime", limit=2)
    await holder
    store = await s.cooldowns.store.all()
    await s.close()
    reports = {e.name: e for e in response.engines}
    assert reports["bing"].status == "ok" and len(response.results) == 2
    fallback = reports["duckduckgo-html"]
    assert (fallback.tier, fallback.status) == ("fallback", "queued") and "queued" in fallback.detail
    assert fallback.queue_ms is not None and fallback.queue_ms > 0 and store == {} and len(ddg.requests) == 1


TWO_ROWS = ROWS[:2]


@pytest.mark.parametrize("answers_by", ["grace after enough rows", "soft deadline with enough rows"])
async def test_exactly_limit_rows_is_enough_to_answer_without_the_hung_engine(standins, answers_by):
    """`limit` rows kept is enough (not `limit` + 1): the search answers at the grace after them, or at the
    soft deadline, and does not sit out the hard deadline for an engine that hangs."""
    bing = await standins(page(bing_page(TWO_ROWS)))
    stuck = await standins(hang(60))
    timing = ({"grace_ms": 100, "soft_deadline_ms": 7000} if answers_by == "grace after enough rows"
              else {"grace_ms": 20000, "soft_deadline_ms": 300})
    s = make({"bing": bing.url, "brave": stuck.url}, deadline_ms=9000, **timing)
    response = await s.search("rust async runtime", limit=2)
    await s.close()
    assert statuses(response) == {"bing": "ok", "brave": "late"} and len(response.results) == 2
    assert response.elapsed_ms < 4000  # the hard deadline is 9 s; the answer came long before it


async def test_exactly_limit_rows_from_the_primaries_do_not_start_the_fallback(standins):
    bing = await standins(page(bing_page(TWO_ROWS)))
    stuck = await standins(hang(60))
    ddg = await standins(page(ddg_page(ROWS)))
    s = make({"bing": bing.url, "brave": stuck.url, "duckduckgo-html": ddg.url}, soft_deadline_ms=300,
             grace_ms=20000, deadline_ms=3000, tiers={"bing": "primary", "brave": "primary",
                                                      "duckduckgo-html": "fallback"})
    response = await s.search("rust async runtime", limit=2)
    await s.close()
    assert statuses(response)["duckduckgo-html"] == "skipped" and ddg.requests == []


async def test_identical_searches_in_flight_share_one_execution(standins):
    engines = {"bing": await standins(page(bing_page(ROWS), delay=0.3)),
               "duckduckgo-html": await standins(page(ddg_page(ROWS), delay=0.3))}
    s = make({name: st.url for name, st in engines.items()})
    responses = await asyncio.gather(*(s.search("Rust  async runtime" if i % 2 else "rust async runtime")
                                       for i in range(20)))
    assert [len(st.requests) for st in engines.values()] == [1, 1]
    assert all(r.results == responses[0].results for r in responses)
    assert {r.query for r in responses} == {"Rust async runtime", "rust async runtime"}  # each as asked
    # Different limits are different searches, but each engine is still asked once for the query.
    more = await asyncio.gather(s.search("tokio runtime", limit=3), s.search("tokio runtime", limit=5))
    await s.close()
    assert [len(st.requests) for st in engines.values()] == [2, 2]
    assert [len(r.results) for r in more] == [3, 5]


async def test_engine_runs_are_shared_within_the_minute_of_their_reference_time_only(standins):
    """An engine's run reads relative dates ("3 days ago") against the plan's clock: runs planned in the
    same minute share one request, runs planned a minute apart (a day boundary may lie between) do not."""
    from datetime import datetime

    bing = await standins(page(bing_page(ROWS), delay=0.3))
    s = make({"bing": bing.url})
    at = [datetime(2026, 11, 30, 23, 59, 1), datetime(2026, 11, 30, 23, 59, 58), datetime(2026, 12, 1, 0, 0, 1)]
    plans = [s.plan("rust async runtime", now=now) for now in at]
    await asyncio.gather(*(s.run_tiers(plan) for plan in plans))
    await s.close()
    assert len(bing.requests) == 2


async def test_searches_asking_different_engine_sets_share_the_engines_they_have_in_common(standins):
    bing = await standins(page(bing_page(ROWS), delay=0.3))
    ddg = await standins(page(ddg_page(ROWS), delay=0.3))
    s = make({"bing": bing.url, "duckduckgo-html": ddg.url},
             tiers={"bing": "primary", "duckduckgo-html": "primary"})
    await asyncio.gather(s.search("rust async runtime", engines=["bing"]),
                         s.search("rust async runtime", engines=["bing", "duckduckgo-html"]))
    await s.close()
    assert (len(bing.requests), len(ddg.requests)) == (1, 1)


async def test_a_caller_giving_up_does_not_cancel_the_shared_search(standins):
    engine = await standins(page(bing_page(ROWS), delay=0.4))
    s = make({"bing": engine.url})
    first = asyncio.create_task(s.search("rust async runtime"))
    await asyncio.sleep(0.1)
    second = asyncio.create_task(s.search("rust async runtime"))
    await asyncio.sleep(0.1)
    first.cancel()
    response = await second
    await s.close()
    assert statuses(response) == {"bing": "ok"} and len(engine.requests) == 1


async def test_a_busy_event_loop_is_not_blamed_on_the_engine(standins):
    engine = await standins(page(bing_page(ROWS), delay=0.1))
    s = make({"bing": engine.url}, timeout_ms=400)
    await s.search("warm the connection")
    task = asyncio.create_task(s.search("rust async runtime"))
    await asyncio.sleep(0.05)  # the request is out
    time.sleep(0.8)  # our own CPU work holds the loop past the engine's deadline; the answer waits unread
    response = await task
    store = await s.cooldowns.store.all()
    await s.close()
    assert statuses(response) == {"bing": "ok"} and store == {}


async def test_cli_cancels_late_engines_cleanly_at_exit(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "METASEARCH_GRACE_MS": "100", "METASEARCH_TIMEOUT_MS": "30000"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-X", "dev", "-m", "plugin.surfaces.cli", "search", "rust async runtime", "--json",
        "--engines", "bing,brave", "--endpoint", f"bing={good.url}", "--endpoint", f"brave={stuck.url}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=root, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    import json

    data = json.loads(out)
    assert {e["name"]: e["status"] for e in data["engines"]} == {"bing": "ok", "brave": "late"}
    for trouble in ("Task was destroyed", "ResourceWarning", "Unclosed", "never awaited", "Traceback"):
        assert trouble not in err.decode(), err.decode()
    # Before it went, the process recorded how long brave had been out without an answer (issue 21, 7).
    from plugin.infra.state import open_state

    settings = Settings(endpoints={"brave": stuck.url})
    state = open_state(settings)
    entry = await state.get(settings.upstream("brave"))
    await state.close()
    assert entry is not None and entry.status == "slow" and not entry.active(time.time())
    assert re.fullmatch(r"\d+ ms without an answer \(processes that ended first: 1\)", entry.detail)


async def test_a_background_run_yields_its_slot_to_a_search_that_waits(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    s = make({"bing": good.url, "brave": stuck.url}, upstream_concurrency=1, timeout_ms=30000, grace_ms=100,
             deadline_ms=30000)
    first = await s.search("rust async runtime")
    assert statuses(first)["brave"] == "late"  # still hanging in the background, holding brave's one slot
    started = time.monotonic()
    second = await s.search("tokio runtime")
    elapsed = time.monotonic() - started
    await s.close()
    # The new search's request took the slot over instead of queueing behind the run nobody waits for.
    assert statuses(second)["brave"] == "late" and len(stuck.requests) == 2
    assert second.engines[1].queue_ms < 1000 and elapsed < 10


async def test_metrics_show_queue_time_apart_from_engine_time(standins):
    from plugin.infra.metrics import Metrics

    engine = await standins(page(bing_page(ROWS), delay=0.2))
    s = make({"bing": engine.url}, upstream_concurrency=1)
    metrics = Metrics()
    for response in await asyncio.gather(*(s.search(f"rust async runtime {i}") for i in range(3))):
        metrics.observe(response)
    await s.close()
    text = metrics.render()
    queued = [line for line in text.splitlines() if line.startswith('metasearch_engine_queue_seconds_bucket{engine="bing"')]
    engine_time = [line for line in text.splitlines()
                   if line.startswith('metasearch_engine_latency_seconds_bucket{engine="bing"')]
    # The first search did not wait for the upstream (its queue time is the state store's reads: a few ms,
    # more on a loaded machine, far below one 0.2 s answer); the second waited one answer...
    assert any('le="0.1"} 1' in line for line in queued), queued
    queue_sum = float(next(line for line in text.splitlines()
                           if line.startswith('metasearch_engine_queue_seconds_sum{engine="bing"')).split()[-1])
    assert queue_sum >= 0.3  # ...and the third two: about 0.6 s of queueing in all
    assert any('le="0.5"} 3' in line for line in engine_time)  # none of which is engine time (~0.2 s each)


async def test_serve_workers_share_one_port_and_add_up_their_metrics(standins, tmp_path):
    import json

    import aiohttp

    from conftest import ROOT

    engine = await standins(page(bing_page(ROWS), delay=0.05))
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENDPOINTS": json.dumps({"bing": engine.url}),
           "METASEARCH_ENGINES": '["bing"]'}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", "serve", "--port", str(port), "--workers", "2", cwd=ROOT,
        env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    pids = set()
    try:
        # A new connection per request, so that the kernel hands them to whichever worker accepts.
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as client:
            # Both workers up before the burst (on a loaded machine the second starts seconds after the
            # first): until then the kernel can only hand connections to the one that listens.
            up: set[int] = set()
            for _ in range(600):
                try:
                    async with client.get(f"{base}/health") as resp:
                        if resp.status == 200:
                            up.add((await resp.json())["pid"])
                except aiohttp.ClientConnectionError:
                    pass
                if len(up) == 2:
                    break
                await asyncio.sleep(0.05)
            assert len(up) == 2, up

            async def one(i: int) -> None:
                async with client.get(f"{base}/search", params={"q": f"rust async runtime {i}"}) as resp:
                    assert resp.status == 200 and (await resp.json())["results"]
                async with client.get(f"{base}/health") as resp:
                    pids.add((await resp.json())["pid"])

            # Bursts of 20 until both workers have answered: they share one listening socket, and on a
            # loaded machine the worker that has the CPU can take a whole burst.
            searches = 0
            while len(pids) < 2 and searches < 400:
                await asyncio.gather(*(one(searches + i) for i in range(20)))
                searches += 20
            await asyncio.sleep(2.5)  # every worker has published its counts
            async with client.get(f"{base}/metrics") as resp:
                text = await resp.text()
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 20) == 0
    assert len(pids) == 2  # both workers answered on the one port
    # every search, whichever worker answered it
    assert f'metasearch_engine_status_total{{engine="bing",status="ok"}} {searches}' in text, (searches, text)


def test_mcp_lists_its_tools_without_building_the_search_pipeline():
    import subprocess

    code = ("import asyncio, sys; from plugin.surfaces.mcp_server import build_server; "
            "tools = asyncio.run(build_server().list_tools()); "
            "print(sorted(t.name for t in tools), [m for m in ('aiohttp', 'plugin.pipeline.searcher', "
            "'plugin.infra.state', 'curl_cffi') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['search_engines', 'web_fetch', 'web_search', 'web_verify'] []"


def test_version_comes_from_the_installed_metadata_without_importlib_metadata():
    import subprocess
    from importlib.metadata import version

    code = "import sys; from plugin.version import VERSION; print(VERSION, 'importlib.metadata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == [version("metasearch"), "False"]


async def test_a_burst_on_our_side_never_benches_a_healthy_engine(standins):
    # Issue 10: 50 concurrent searches with a 1 s deadline against a Brave stand-in answering a real page in
    # ~30 ms gave 17 timeouts and a 6-hour cooldown: pool waits and our own parsing counted as Brave's time.
    from conftest import corpus_path

    # Here 100 searches and an answer in 100 ms: eight at a time per upstream, the last ones wait over a second
    # for a slot, more than the engine's whole deadline, while every search parses a 550 kB page.
    body = corpus_path("brave", "websearchmcp__javascript-tutorial.html").read_bytes()
    engine = await standins(page(body, delay=0.1))
    # The searches' own deadline is far (queue time counts against it: on a loaded machine the last ones
    # would answer at 5 s with the engine `queued` or `late`, never `timeout`): the engine's is the point.
    s = make({"brave": engine.url}, timeout_ms=1000, deadline_ms=60000)
    responses = await asyncio.gather(*(s.search(f"javascript tutorial {i}") for i in range(100)))
    store = await s.cooldowns.store.all()
    await s.close()
    assert [r.engines[0].status for r in responses] == ["ok"] * 100
    assert store == {}
    assert len(engine.requests) == 100 and max(r.engines[0].queue_ms for r in responses) > 1000


async def test_a_hung_engine_is_still_benched_while_searches_keep_taking_its_slots(standins):
    # One slot for the hung engine: every new search takes it from the previous, late, run. A run given up
    # like this after more than deadline_ms without an answer counts as the engine's timeout.
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    s = make({"bing": good.url, "brave": stuck.url}, upstream_concurrency=1, timeout_ms=30000, grace_ms=50,
             deadline_ms=600)
    first = await s.search("rust async runtime")
    assert statuses(first)["brave"] == "late"
    assert await s.cooldowns.store.get(s.settings.upstream("brave")) is None
    await asyncio.sleep(0.8)  # the late run has now been out longer than deadline_ms
    second = await s.search("tokio runtime")  # takes the slot: the first run is given up
    await asyncio.sleep(0.1)
    entry = await s.cooldowns.store.get(s.settings.upstream("brave"))
    third = await s.search("async-std runtime")
    await s.close()
    assert statuses(second)["brave"] == "late"
    assert entry is not None and entry.status == "timeout"
    assert re.fullmatch(r"no answer within \d+ ms \(its slot went to a search that waited\)", entry.detail)
    assert statuses(third)["brave"] == "cooldown" and len(stuck.requests) == 2


async def test_the_youngest_background_run_makes_way_first(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(60))
    s = make({"bing": good.url, "brave": stuck.url}, upstream_concurrency=2, timeout_ms=30000, grace_ms=50,
             deadline_ms=30000)
    await s.search("rust async runtime")  # brave late: background run 1
    lane = s.transport.admission.find(s.settings.upstream("brave"))
    first = lane.holders[0]
    await s.search("tokio runtime")  # background run 2: both slots taken
    second = lane.holders[1]
    await s.search("async-std runtime")  # needs a slot: run 2 gives way, run 1 goes on towards its timeout
    holders = list(lane.holders)
    await s.close()
    assert len(stuck.requests) == 3
    assert second.preempted and not first.preempted
    assert holders[0] is first and second not in holders


# ----- issue 21 (items 6, 7, 7b) and the issue-23 survivors of the tier loop -----
JS_ROWS = [("JavaScript Tutorial: an introduction", "https://javascript.info/intro", "javascript tutorial intro"),
           ("JavaScript Tutorial: first steps", "https://javascript.info/first-steps", "javascript tutorial basics"),
           ("JavaScript tutorial at MDN", "https://developer.mozilla.org/en-US/docs/Learn/JavaScript",
            "javascript tutorial guide")]


@pytest.mark.parametrize("primary_delay", [0.0, 0.6], ids=["primary fast", "primary slower"])
async def test_primaries_done_with_fewer_than_limit_rows_start_the_fallback_whatever_their_speed(
        standins, primary_delay):
    """Issue 21, item 6: the primary keeps 1 row of the allowed domain, the fallback has 2. A fast primary
    used to end the search with its 1 row (fallback `skipped: primary tier answered`); a slower one, past
    the soft deadline, started the fallback and got 2."""
    bing = await standins(page(bing_page([JS_ROWS[0], JS_ROWS[2]]), delay=primary_delay))
    ddg = await standins(page(ddg_page(JS_ROWS[:2])))
    # Slower: the fallback starts at the soft deadline (300 ms), while the primary is still out.
    s = make({"bing": bing.url, "duckduckgo-html": ddg.url}, tiers=FALLBACK_DDG, soft_deadline_ms=300,
             grace_ms=1000, deadline_ms=30000, timeout_ms=30000)
    response = await s.search("javascript tutorial", allowed_domains=["javascript.info"])
    await s.close()
    assert statuses(response) == {"bing": "ok", "duckduckgo-html": "ok"} and len(ddg.requests) == 1
    assert [row.url for row in response.results] == ["https://javascript.info/intro",
                                                     "https://javascript.info/first-steps"]


async def test_a_large_limit_answers_after_the_soft_deadline_with_what_a_quorum_brought(standins):
    """Issue 21, item 7b: three healthy engines and one that hangs, `limit` 20, 11 rows between them. The
    answer waited for the overall deadline (here a minute); past the soft deadline, with a quorum answered,
    it goes out with the 11 rows and says that fewer rows than asked came in time."""
    healthy = {"bing": await standins(page(bing_page(ROWS[:4]), delay=0.05)),
               "bing-cn": await standins(page(bing_page(ROWS[4:8]), delay=0.05)),
               "duckduckgo-html": await standins(page(ddg_page(ROWS[8:11]), delay=0.05))}
    stuck = await standins(hang(120))
    s = make({name: st.url for name, st in healthy.items()} | {"brave": stuck.url}, soft_deadline_ms=300,
             grace_ms=100, deadline_ms=60000, timeout_ms=60000)
    response = await asyncio.wait_for(s.search("rust async runtime", limit=20), 30)  # a minute before
    await s.close()
    assert statuses(response) == {"bing": "ok", "bing-cn": "ok", "duckduckgo-html": "ok", "brave": "late"}
    assert len(response.results) == 11
    assert response.warnings == ["fewer rows than asked were available in time: 11 of 20; still running when "
                                 "the search answered: brave"]


async def test_all_rows_in_hand_say_nothing_of_rows_short(standins):
    engine = await standins(page(bing_page(ROWS[:3])))
    s = make({"bing": engine.url})
    response = await s.search("rust async runtime", limit=20)
    await s.close()
    assert len(response.results) == 3 and response.warnings == []  # every engine answered: no more to have


async def test_benched_engines_do_not_make_the_search_answer_with_fewer_engines(standins):
    """Issue 21, item 7 (and the survivor counting benched engines as contenders): two of five engines are
    benched. The quorum is counted over all five, as if they hung, so the search waits for three answers
    of the three engines asked; it used to answer after two (and, counting the benched as answered,
    after the first), leaving the slowest healthy engine `late`."""
    engines = {"bing": await standins(page(bing_page(ROWS))),
               "bing-cn": await standins(page(bing_page(ROWS[::-1]), delay=0.3)),
               "duckduckgo-html": await standins(page(ddg_page(ROWS[2:]), delay=0.9))}
    unused = await standins(page(bing_page(ROWS)))
    s = make({name: st.url for name, st in engines.items()} | {"brave": unused.url, "mojeek": unused.url},
             grace_ms=100, soft_deadline_ms=30000, deadline_ms=30000, timeout_ms=30000,
             tiers={name: "primary" for name in ("bing", "bing-cn", "duckduckgo-html", "brave", "mojeek")})
    for name in ("brave", "mojeek"):
        await s.state.put(s.settings.upstream(name), CooldownEntry(until=time.time() + 600, failures=1,
                                                                    status="timeout"))
    response = await s.search("rust async runtime")
    await s.close()
    assert statuses(response) == {"bing": "ok", "bing-cn": "ok", "duckduckgo-html": "ok", "brave": "cooldown",
                                  "mojeek": "cooldown"}
    assert unused.requests == []


async def test_limit_rows_from_one_fast_engine_wait_for_a_quorum(standins):
    """One engine answers at once with `limit` rows; the other two answer a little later. Rows alone are
    not enough in hand: the search waits for the quorum (then the grace), and nobody is `late`."""
    fast = await standins(page(bing_page(ROWS)))
    bing_cn = await standins(page(bing_page(ROWS[::-1]), delay=0.5))
    ddg = await standins(page(ddg_page(ROWS), delay=0.5))
    s = make({"bing": fast.url, "bing-cn": bing_cn.url, "duckduckgo-html": ddg.url}, grace_ms=100,
             soft_deadline_ms=30000, deadline_ms=30000)
    response = await s.search("rust async runtime")
    await s.close()
    assert statuses(response) == {"bing": "ok", "bing-cn": "ok", "duckduckgo-html": "ok"}


async def test_processes_ending_with_an_engine_unanswered_bench_it_as_a_timeout_would(standins):
    """Issue 21, item 7: a process that answers and ends (the CLI) never saw the hung engine time out, so it
    was `late` in every process. Each exit now records how long the request had been out; once that adds
    up to `deadline_ms`, the engine is benched as a timeout would have benched it."""
    from plugin.infra.cooldown import SLOW
    from plugin.infra.state import MemoryState

    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(120))
    state = MemoryState()  # the store every "process" shares (SQLite for the CLI)
    settings = Settings(endpoints={"bing": good.url, "brave": stuck.url}, engines=["bing", "brave"],
                        timeout_ms=30000, grace_ms=50, deadline_ms=2000)
    upstream = settings.upstream("brave")
    entries, seen = [], []
    for process in range(3):
        s = Searcher(settings, state=state)
        response = await s.search(f"rust async runtime {process}")
        seen.append(statuses(response)["brave"])
        if seen[-1] == "late":
            await asyncio.sleep(1.1)  # the process does other work; the request is still out when it ends
        await s.close()
        entries.append(await state.get(upstream))
    assert seen == ["late", "late", "cooldown"] and len(stuck.requests) == 2
    first, second = entries[0], entries[1]
    assert first.status == SLOW and not first.active(time.time()) and first.failures == 0
    assert re.fullmatch(r"1\d{3} ms without an answer \(processes that ended first: 1\)", first.detail)
    assert second.status == "timeout" and second.active(time.time()) and second.failures == 1
    assert re.fullmatch(r"2\d{3} ms without an answer \(processes that ended first: 2\)", second.detail)


async def test_an_engine_late_in_several_searches_of_one_process_is_one_exit_of_its_longest_time(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(120))
    from plugin.infra.state import MemoryState

    s = Searcher(Settings(endpoints={"bing": good.url, "brave": stuck.url}, engines=["bing", "brave"], grace_ms=50,
                          timeout_ms=30000, deadline_ms=30000), state=MemoryState())
    first = await s.search("rust async runtime")
    await asyncio.sleep(0.6)
    second = await s.search("tokio runtime")
    await s.close()
    assert statuses(first)["brave"] == statuses(second)["brave"] == "late" and len(stuck.requests) == 2
    entry = await s.state.get(s.settings.upstream("brave"))
    found = re.fullmatch(r"(\d+) ms without an answer \(processes that ended first: 1\)", entry.detail)
    assert found and int(found[1]) >= 600  # the first request's time (out since before the pause)


async def test_engine_runs_cancelled_under_a_waiting_search_leave_it_an_answer(standins):
    """The searcher's engine runs cancelled while a search still waits for one (its flights closed, as at
    exit): the search does not fail; that engine is reported skipped, the others as they answered."""
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(120))
    s = make({"bing": good.url, "brave": stuck.url}, grace_ms=20000, soft_deadline_ms=20000, deadline_ms=30000,
             timeout_ms=30000)
    search = asyncio.create_task(s.search("rust async runtime"))
    await stuck.asked(2.0)
    await s.flights.close()
    response = await asyncio.wait_for(search, 10)
    await s.close()
    reports = {e.name: (e.status, e.detail) for e in response.engines}
    assert reports["brave"] == ("skipped", "overloaded")  # bing: ok, or skipped too had it not answered yet


async def test_a_store_failing_at_exit_does_not_stop_the_exit(standins, caplog):
    from plugin.infra.state import MemoryState

    class Failing(MemoryState):
        async def update(self, engine, change, keep_s):
            raise RuntimeError("disk full")

    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(120))
    s = Searcher(Settings(endpoints={"bing": good.url, "brave": stuck.url}, engines=["bing", "brave"], grace_ms=50),
                 state=Failing())
    response = await s.search("rust async runtime")
    await s.close()
    assert statuses(response)["brave"] == "late" and s.flights.running == 0  # cancelled all the same
    assert any("could not record" in r.getMessage() and "disk full" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("out_ms, benched", [(1000, True), (999, False)])
async def test_a_run_given_up_after_exactly_deadline_ms_is_a_timeout(out_ms, benched):
    """The given-up rule at its boundary, on a run's clock set by hand: out for `deadline_ms` or more when
    its slot went to a search that waited, the engine is benched; a millisecond less, nothing is recorded."""
    from plugin.infra.admission import EngineClock
    from plugin.infra.state import MemoryState
    from plugin.pipeline.tiers import Flight

    s = Searcher(Settings(engines=["bing"], deadline_ms=1000), state=MemoryState())
    task = asyncio.create_task(asyncio.sleep(3600))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    clock = EngineClock(30.0, 60.0)
    clock.engine_s, clock.preempted = out_ms / 1000, True
    s.tiers._given_up(Flight("key", task, clock, "bing"))
    await s.flights.drain()
    entry = await s.state.get("bing")
    await s.close()
    assert (entry is not None and entry.status == "timeout") is benched


async def test_a_search_leaves_nothing_attached_to_the_runs_it_leaves_behind(standins):
    good = await standins(page(bing_page(ROWS)))
    stuck = await standins(hang(120))
    s = make({"bing": good.url, "brave": stuck.url}, grace_ms=50)
    response = await s.search("rust async runtime")
    background = s.flights.unanswered()
    watchers = [list(flight.clock._watchers) for flight in background]
    await s.close()
    assert statuses(response)["brave"] == "late" and len(background) == 1
    assert watchers == [[]]  # the search's wake-up hook went with it
