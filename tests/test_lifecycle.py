"""Python API lifecycle (issue 10): cookies per exchange, sessions closed with their loop, search_sync
inside a running loop, the state store off the event loop, and warnings that describe the present."""

from __future__ import annotations

from aiohttp import web

from engines import ENGINES
from engines.base import SearchOptions
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page

ROWS = [("Python release notes", "https://docs.python.org/3/whatsnew/", "python release notes"),
        ("Python downloads", "https://www.python.org/downloads/", "python release notes downloads")]


async def test_engines_get_exactly_the_cookies_they_ask_for(standins):
    """A cookie a server set in one answer (`_EDGE_S=mkt=ja-jp`) must not ride on a later search for
    another market, nor override the engine's own `Cookie` header."""

    async def sets_market_cookie(request, standin):
        market = request.query.get("setmkt", "").lower()
        response = web.Response(text=bing_page(ROWS), content_type="text/html")
        response.set_cookie("_EDGE_S", f"mkt={market}", path="/")
        response.set_cookie("MUID", "tracker-from-an-earlier-answer", path="/")
        return response

    bing = await standins(sets_market_cookie)
    async with Searcher(Settings(endpoints={"bing": bing.url}, engines=["bing"])) as searcher:
        await searcher.search("python release notes", region="ja-JP")
        await searcher.search("python release notes", region="de-DE")
    asked = ENGINES["bing"].build("python release notes", SearchOptions(region="de-DE", count=10)).headers["Cookie"]
    assert "mkt=de-de" in asked
    assert bing.requests[1].headers.get("Cookie") == asked


STARTPAGE_HOME = ('<html><body><form id="search" action="/sp/search"><input type="hidden" name="sc" '
                  'value="TOKEN123"><input name="query"></form></body></html>')
STARTPAGE_RESULTS = ('<html><body><form id="search"><input name="query" value="python asyncio"></form>'
                     '<div class="w-gl"><div class="result"><a class="result-title result-link" '
                     'href="https://docs.python.org/3/library/asyncio.html"><h2>asyncio — Asynchronous I/O</h2></a>'
                     '<p class="description">python asyncio documentation</p></div></div></body></html>')


async def test_a_follow_up_carries_the_cookies_of_its_own_exchange_only(standins):
    """Startpage's token step: the session cookie its home page sets goes with that search's POST, and
    never with another search's requests."""
    issued = iter(range(1, 100))

    async def startpage(request, standin):
        if request.path == "/sp/search":
            return web.Response(text=STARTPAGE_RESULTS, content_type="text/html")
        response = web.Response(text=STARTPAGE_HOME, content_type="text/html")
        response.set_cookie("sp_session", f"s{next(issued)}", path="/")
        return response

    engine = await standins(startpage)
    async with Searcher(Settings(endpoints={"startpage": engine.url}, engines=["startpage"])) as searcher:
        first = await searcher.search("python asyncio")
        second = await searcher.search("python asyncio docs")
    assert first.engines[0].status == "ok" and second.engines[0].status == "ok"
    paths = [(seen.path, seen.headers.get("Cookie")) for seen in engine.requests]
    assert paths == [("/", None), ("/sp/search", "sp_session=s1"), ("/", None), ("/sp/search", "sp_session=s2")]


# ----- no submodule shadows a public name -----
SHADOW_CHECK = """
import importlib, pkgutil, types
import plugin
for module in pkgutil.walk_packages(plugin.__path__, "plugin."):
    importlib.import_module(module.name)
from plugin import search, search_sync
print([name for name in plugin.__all__ if isinstance(getattr(plugin, name), types.ModuleType)], callable(search),
      callable(search_sync))
"""


def test_no_submodule_shadows_a_public_name():
    """`from plugin.search import Searcher; from plugin import search` gave the module (importing a submodule
    sets it on the package, over the public name). With every submodule imported first, in a fresh
    interpreter, each public name is still the API's object."""
    import subprocess
    import sys
    from pathlib import Path

    import pkgutil

    import plugin

    assert not {module.name for module in pkgutil.iter_modules(plugin.__path__)} & set(plugin.__all__)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", SHADOW_CHECK], cwd=root, capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[] True True", out.stdout


# ----- search_sync inside a running loop -----
async def test_search_sync_works_inside_a_running_event_loop(standins_sync):
    """Jupyter and async agent frameworks call it with a loop running: no RuntimeError from
    asyncio.run, no never-awaited coroutine."""
    import warnings

    from plugin import search_sync

    url, requests = standins_sync
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = search_sync("python release notes", settings=Settings(endpoints={"bing": url}, engines=["bing"]))
    assert response.engines[0].status == "error" and "HTTP 500" in response.engines[0].detail
    assert len(requests) == 1  # it really ran
    assert not [w for w in caught if "never awaited" in str(w.message)]


# ----- no leaked sessions: the README's Python examples under -X dev -----
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from standins import ddg_page, page  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


# The README's OpenAI and Anthropic loops answer each tool call with `asyncio.run(search(**arguments))`:
# one event loop per call. This is that pattern, without the model SDK around it.
TOOL_LOOP = """
import asyncio
from plugin import render_for_model, search

for arguments in [{"query": "rust async runtime"}, {"query": "tokio runtime", "limit": 3},
                  {"query": "rust async runtime"}]:
    found = asyncio.run(search(**arguments))
    assert render_for_model(found)
    print("found", len(found.results))
"""


async def run_dev_mode(code: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run `code` under `python -X dev -W error::ResourceWarning` (leaks become errors on stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", code, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def loopback_engines(standins):
    rows = [("Rust async runtime comparison", "https://example.org/rust-async-runtimes",
             "a comparison of rust async runtimes: tokio, async-std, smol"),
            ("Tokio runtime", "https://tokio.rs/", "tokio, the rust async runtime")]
    bing = await standins(page(bing_page(rows)))
    ddg = await standins(page(ddg_page(rows)))
    return {"METASEARCH_ENDPOINTS": json.dumps({"bing": bing.url, "duckduckgo-html": ddg.url}),
            "METASEARCH_ENGINES": json.dumps(["bing", "duckduckgo-html"])}


def _assert_no_leak(code: int, out: str, err: str) -> None:
    assert code == 0, err
    assert "ResourceWarning" not in err and "Unclosed" not in err and "unclosed" not in err, err
    assert "never awaited" not in err, err


async def test_readme_python_api_example_leaks_nothing(loopback_engines):
    [example] = [block for block in readme_python_blocks() if "asyncio.run(search(" in block and "openai" not in
                 block and "anthropic" not in block]
    code, out, err = await run_dev_mode(example, loopback_engines)
    _assert_no_leak(code, out, err)
    assert "bing ok" in out


async def test_one_event_loop_per_tool_call_leaks_nothing(loopback_engines):
    code, out, err = await run_dev_mode(TOOL_LOOP, loopback_engines)
    _assert_no_leak(code, out, err)
    assert out.count("found") == 3 and "found 0" not in out


@pytest.mark.parametrize("block", [b for b in readme_python_blocks() if "import openai" in b or "from openai" in b
                                   or "import anthropic" in b],
                         ids=lambda b: "openai" if "openai" in b else "anthropic")
def test_readme_model_sdk_loops_use_the_tool_loop_pattern(block):
    """The SDK loops are not run here (no model SDK or network in tests); they must use the pattern
    TOOL_LOOP runs leak-free above (fetch_sync, like search_sync, makes and closes its own reader per call)."""
    assert "asyncio.run(search(" in block or "search_sync(" in block or "fetch_sync(" in block


async def test_redis_clients_close_with_their_loops(loopback_engines, redis_url):
    code, out, err = await run_dev_mode(TOOL_LOOP, {**loopback_engines, "METASEARCH_REDIS_URL": redis_url})
    _assert_no_leak(code, out, err)


FDS = """
import asyncio, json, os, sys
from plugin import Settings, search
endpoints = json.loads(os.environ["METASEARCH_ENDPOINTS"])
def fds():
    return len(os.listdir("/proc/self/fd"))
async def main():
    await search("rust async", settings=Settings(endpoints=endpoints, engines=["bing"]))
    counts = [fds()]
    for i in range(60):  # a new, different Settings object per call
        await search(f"rust async {i}", settings=Settings(endpoints=endpoints, engines=["bing"], timeout_ms=5000 + i))
        if i in (29, 59):
            await asyncio.sleep(0.2)  # evicted searchers close in the background
            counts.append(fds())
    print(json.dumps(counts))
asyncio.run(main())
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
async def test_searchers_evicted_from_the_module_cache_are_closed(loopback_engines):
    code, out, err = await run_dev_mode(FDS, loopback_engines)
    _assert_no_leak(code, out, err)
    before, after_30, after_60 = json.loads(out)
    # At most eight searchers stay open, each with its store, its connection and (browser transport) libcurl's
    # wakeup eventfd: once eight are kept, 30 more calls open nothing that stays (a leak was ~3 fds per call).
    assert after_30 - before < 48, (before, after_30)
    assert after_60 - after_30 < 6, (after_30, after_60)


from test_state import redis_server, redis_url  # noqa: E402,F401  (a real Redis for the test above)


# ----- the state store off the event loop; warnings about the present -----
async def test_a_locked_store_neither_stalls_the_loop_nor_haunts_later_responses(standins, private_state):
    """Another process holds the store's write lock: `spend()` waits at most `state_wait_ms` while the
    event loop keeps ticking (the write itself waits on the store's own thread), that search goes on and
    says the store did not answer in time, and the next search, with the lock gone, says nothing about it."""
    import sqlite3
    import time

    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"],
                        budget_per_minute={f"bing@{engine.url}": 100}, state_wait_ms=250)
    async with Searcher(settings) as searcher:
        await searcher.search("python release notes")  # the store exists, its tables too
        other = sqlite3.connect(str(private_state / "state.sqlite3"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # a concurrent writer holding the lock
        gaps: list[float] = []

        async def ticker():
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.02)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        ticking = asyncio.create_task(ticker())
        try:
            locked = await searcher.search("python release notes 2")
        finally:
            ticking.cancel()
            other.execute("ROLLBACK")
            other.close()
        later = await searcher.search("python release notes 3")
    assert locked.engines[0].status == "ok"  # the search went on without its budget
    store = private_state / "state.sqlite3"
    assert f"state store {store} did not answer within 250 ms (a write, which goes on in the background); " \
           "continuing without it" in locked.warnings, locked.warnings
    assert max(gaps) < 1.0, max(gaps)  # the loop was free while the store's writer waited for the lock
    assert later.warnings == []


# ----- a parser crash is ours: logged with its traceback, reported with its place, never benched -----
async def test_a_parser_crash_is_logged_reported_and_benches_nothing(standins, monkeypatch, caplog):
    from engines import ENGINES

    def crashing(response, query, options):
        raise ZeroDivisionError("parser bug")

    monkeypatch.setattr(ENGINES["bing"], "parse_body", crashing)  # under the real class-level guard
    engine = await standins(page(bing_page(ROWS)))
    async with Searcher(Settings(endpoints={"bing": engine.url}, engines=["bing"])) as searcher:
        with caplog.at_level("ERROR", logger="metasearch.runner"):
            first = await searcher.search("python release notes")
        again = await searcher.search("python release notes 2")
        benched = await searcher.cooldowns.store.all()
    report = first.engines[0]
    assert report.status == "error" and re.match(r"parser failure at .+\.py:\d+ \(ZeroDivisionError\)", report.detail)
    assert "cooling down" not in report.detail
    assert again.engines[0].status == "error" and len(engine.requests) == 2  # asked again, not benched
    assert benched == {}
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Traceback" in logged and "ZeroDivisionError: parser bug" in logged and "bing" in logged


def test_runs_in_flight_belong_to_their_event_loop():
    """A search in a new event loop must not join a run of an earlier loop (its task can never be awaited
    here), even while that loop's run is still pending (a host that stopped its loop without cancelling what
    runs in it): each loop starts with no runs in flight."""
    import asyncio

    from plugin.infra.admission import EngineClock
    from plugin.pipeline.tiers import Flights

    flights = Flights()

    async def hang(clock: EngineClock) -> None:
        await asyncio.sleep(3600)

    async def first_loop():
        flight = flights.join("bing|python", "bing", hang, lambda: EngineClock(1.0, 0.0))
        await asyncio.sleep(0)
        assert flights.running == 1 and flights.join("bing|python", "bing", hang,
                                                     lambda: EngineClock(1.0, 0.0)) is flight
        return flight

    loop = asyncio.new_event_loop()
    old = loop.run_until_complete(first_loop())
    assert not old.task.done()  # the loop stopped with its run pending: nothing told the flights it ended

    async def second_loop():
        assert flights.running == 0 and flights.unanswered() == []
        flight = flights.join("bing|python", "bing", hang, lambda: EngineClock(1.0, 0.0))
        assert flight is not old and flight.waiters == 1
        await flights.close()
        assert flights.running == 0

    try:
        asyncio.run(second_loop())
    finally:
        old.task.cancel()
        loop.run_until_complete(asyncio.gather(old.task, return_exceptions=True))
        loop.close()


# ----- loops on several threads at once, one shared searcher -----
def test_searches_on_the_loops_of_several_threads_at_once_each_keep_their_own_sessions(both_transports):
    """The README's tool loop (`asyncio.run(search(...))` per call) run by an agent framework's thread pool:
    several event loops at once share one searcher (equal settings). Each loop keeps its own HTTP pool; with
    one slot for "the last loop's", a loop took another's session, closed under its request when that loop
    ended ('Connector is closed', curl's 'HTTP 0'), and the engine was benched for our own failure."""
    import threading
    import time as clock
    from concurrent.futures import ThreadPoolExecutor

    from plugin import search
    from plugin.bench.loopback import LoopbackSite

    body = bing_page(ROWS).encode()

    def answer(path: str) -> tuple[int, str, bytes]:
        clock.sleep(0.01)  # requests of the threads overlap
        return 200, "text/html; charset=utf-8", body

    start = threading.Barrier(4)
    with LoopbackSite(answer) as site:
        settings = Settings(endpoints={"bing": site.base}, engines=["bing"], state_backend="memory")

        def calls(worker: int) -> list:
            start.wait()
            return [asyncio.run(search(f"python release notes {worker} {n}", settings=settings, cache=False)).engines[0]
                    for n in range(10)]

        with ThreadPoolExecutor(4) as pool:
            runs = [run for batch in pool.map(calls, range(4)) for run in batch]
    assert [(run.status, run.detail) for run in runs if run.status != "ok"] == []
    assert len(runs) == 40


def test_threads_asking_at_once_for_one_settings_share_one_kept_object():
    """Equal settings asked for on four threads at once: one object made and shared (each thread made its own
    before, and all but the last kept were dropped without being closed)."""
    import threading
    import time as clock
    from concurrent.futures import ThreadPoolExecutor

    from plugin.infra.lifecycle import KeptPerSettings

    made: list[object] = []

    class Slow:
        def __init__(self, settings):
            clock.sleep(0.05)  # opening a store takes a moment: the other threads ask meanwhile
            made.append(self)

        async def close(self) -> None:
            pass

    kept = KeptPerSettings(Slow)
    start = threading.Barrier(4)

    def ask(_: int):
        start.wait()
        return kept.get(Settings(engines=["bing"]))

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(ask, range(4)))
    kept.release()
    assert len(made) == 1 and all(one is made[0] for one in got)
