"""State that outlives a process: the embedded store, Redis (a real redis-server), the cache,
request budgets, degradation, and the HTTP service."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.infra.state import FailoverState, MemoryState, SqliteState, open_state
from standins import bing_page, hang, page

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("Rust async book", "https://rust-lang.github.io/async-book/", "rust async guide"),
        ("Tokio", "https://tokio.rs/", "rust async runtime")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker_database(url: str) -> str:
    """`url` on a database of this test worker's own (pytest-xdist runs workers side by side, and each test
    empties its database first): gw0 on 1, gw1 on 2, ...; a run without workers keeps the URL's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return url
    return url.rsplit("/", 1)[0] + f"/{int(worker[2:]) % 15 + 1}"


@pytest.fixture
def redis_url(request):
    """A real Redis: the one .ci/run started (METASEARCH_TEST_REDIS_URL), else one of our own."""
    shared = os.environ.get("METASEARCH_TEST_REDIS_URL")
    if shared:
        redis = pytest.importorskip("redis")
        shared = worker_database(shared)
        client = redis.Redis.from_url(shared)
        try:
            client.flushdb()
        except redis.RedisError as exc:
            pytest.skip(f"METASEARCH_TEST_REDIS_URL is set but unreachable: {exc}")
        finally:
            client.close()
        return shared
    return request.getfixturevalue("redis_server")["url"]


@pytest.fixture
def redis_server():
    """A real redis-server of our own on a free port (so a test may kill it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (.ci/run installs it: apt-get install redis-server)")
    pytest.importorskip("redis")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not start")
    yield {"url": f"redis://127.0.0.1:{port}/0", "process": proc}
    if proc.poll() is None:
        proc.kill()
    proc.wait()


async def cli(*args: str, env: dict[str, str] | None = None) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "plugin.surfaces.cli", *args, "--json", cwd=ROOT,
                                                env=environment, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode in (0, 1, 3), err.decode()  # rows, no results, or no engine could answer
    return json.loads(out)


async def test_two_processes_share_a_cooldown_through_the_embedded_store(standins):
    stuck = await standins(hang(30))
    args = ("search", "rust async", "--engines", "bing", "--endpoint", f"bing={stuck.url}", "--timeout-ms", "400")
    first = await cli(*args)
    assert first["engines"][0]["status"] == "timeout"
    second = await cli(*args)  # a new process, the same state directory
    assert second["engines"][0]["status"] == "cooldown"
    assert len(stuck.requests) == 1


async def test_two_processes_share_a_cooldown_through_redis(standins, redis_url, tmp_path):
    stuck = await standins(hang(30))
    args = ("search", "rust async", "--engines", "bing", "--endpoint", f"bing={stuck.url}", "--timeout-ms", "400")
    # Different embedded stores: only Redis can carry the cooldown from one process to the other.
    first = await cli(*args, env={"METASEARCH_REDIS_URL": redis_url, "METASEARCH_STATE_DIR": str(tmp_path / "a")})
    assert first["engines"][0]["status"] == "timeout" and first["warnings"] == []
    second = await cli(*args, env={"METASEARCH_REDIS_URL": redis_url, "METASEARCH_STATE_DIR": str(tmp_path / "b")})
    assert second["engines"][0]["status"] == "cooldown"
    assert len(stuck.requests) == 1


async def test_the_cache_answers_a_repeated_query_without_the_engines(standins):
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], cache_ttl_s=300)
    async with Searcher(settings) as searcher:
        first = await searcher.search("rust async")
        again = await searcher.search("  Rust   ASYNC ")  # normalised: the same question
        assert first.cached is False and again.cached is True
        assert [r.url for r in again.results] == [r.url for r in first.results]
        assert len(engine.requests) == 1
        fresh = await searcher.search("rust async", cache=False)
        assert fresh.cached is False and len(engine.requests) == 2
        same_ask = await searcher.search("rust async", limit=3)  # the engine is asked for 10 rows either way
        assert same_ask.cached is True and len(engine.requests) == 2
        other = await searcher.search("rust async", limit=15)  # asked for 15 rows: another answer
        assert other.cached is False and len(engine.requests) == 3
    # ...and across processes, through the embedded store; --no-cache bypasses it.
    env = {"METASEARCH_CACHE_TTL_S": "300"}
    base = ("search", "tokio runtime rust", "--engines", "bing", "--endpoint", f"bing={engine.url}")
    assert (await cli(*base, env=env))["cached"] is False
    assert (await cli(*base, env=env))["cached"] is True
    assert (await cli(*base, "--no-cache", env=env))["cached"] is False
    assert len(engine.requests) == 5


async def test_a_failing_engine_keeps_no_other_answer_out_of_the_cache_and_is_never_cached(standins):
    """Per engine answers (issue 10): while one engine fails, the others' answers are still cached; the
    failure itself is not, so that engine is asked again once its cooldown is over."""
    good = await standins(page(bing_page(ROWS)))
    broken = await standins(page("down", status=500))
    settings = Settings(endpoints={"bing": good.url, "duckduckgo-html": broken.url},
                        engines=["bing", "duckduckgo-html"], cache_ttl_s=300)
    async with Searcher(settings) as searcher:
        first = await searcher.search("rust async")
        assert first.partial is True and first.cached is False
        second = await searcher.search("rust async")
        reports = {e.name: e for e in second.engines}
        assert reports["bing"].status == "ok" and reports["bing"].cached is True
        assert reports["duckduckgo-html"].status == "cooldown" and reports["duckduckgo-html"].cached is False
        assert second.cached is True  # every engine answer came from the cache
        assert [r.url for r in second.results] == [r.url for r in first.results]
        assert len(good.requests) == 1
        third = await searcher.search("rust async", ignore_cooldowns=True)
        reports = {e.name: e for e in third.engines}
        assert reports["duckduckgo-html"].status == "error" and len(broken.requests) == 2  # asked again
        assert reports["bing"].cached is True and third.cached is True


async def test_redis_killed_mid_run_degrades_to_the_embedded_store(standins, redis_server, tmp_path):
    engine = await standins(page(bing_page(ROWS)))
    broken = await standins(page("down", status=503))
    settings = Settings(endpoints={"bing": engine.url, "duckduckgo-html": broken.url},
                        engines=["bing", "duckduckgo-html"], redis_url=redis_server["url"],
                        state_dir=tmp_path / "embedded")
    async with Searcher(settings) as searcher:
        assert isinstance(searcher.state, FailoverState)
        before = await searcher.search("rust async")
        assert before.warnings == [] and before.results
        redis_server["process"].kill()
        redis_server["process"].wait()
        await searcher.cooldowns.store.clear(searcher.settings.upstream("duckduckgo-html"))  # goes to the fallback once Redis is gone
        after = await searcher.search("rust async")
        assert after.results and any("redis unavailable" in w for w in after.warnings)
        assert "duckduckgo-html" in {e.name for e in after.engines if e.status == "error"}
    embedded = SqliteState(tmp_path / "embedded" / "state.sqlite3", wait_s=5)
    assert (await embedded.get(settings.upstream("duckduckgo-html"))) is not None  # recorded in the fallback
    await embedded.close()


BUDGET_SCRIPT = """
import asyncio, json, sys
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
async def main():
    async with Searcher(Settings()) as searcher:
        statuses = []
        for i in range(3):
            response = await searcher.search(f"rust async {sys.argv[1]} {i}")
            statuses.append(response.engines[0].status)
        print(json.dumps(statuses))
asyncio.run(main())
"""


async def _budget_run(engine_url: str, extra_env: dict[str, str]) -> tuple[int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENDPOINTS": json.dumps({"bing": engine_url}),
           "METASEARCH_ENGINES": '["bing"]', "METASEARCH_BUDGET_PER_MINUTE": json.dumps({f"bing@{engine_url}": 4}),
           **extra_env}
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", BUDGET_SCRIPT, tag, cwd=ROOT, env=env,
                                                  stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
             for tag in ("a", "b")]
    statuses: list[str] = []
    for proc in procs:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        statuses += json.loads(out)
    return statuses.count("ok"), statuses


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_the_budget_caps_requests_per_minute_across_two_processes(standins, backend, request):
    extra = {}
    if backend == "redis":
        extra["METASEARCH_REDIS_URL"] = request.getfixturevalue("redis_url")
    for _attempt in range(2):  # a minute boundary mid-run resets the window: then run once more
        engine = await standins(page(bing_page(ROWS)))
        window = int(time.time() // 60)
        ok, statuses = await _budget_run(engine.url, extra)
        if int(time.time() // 60) == window:
            break
    assert ok == 4 and len(engine.requests) == 4, statuses
    assert statuses.count("skipped") == 2


async def test_a_corrupt_store_degrades_to_memory_with_a_warning(standins, private_state):
    private_state.mkdir(parents=True, exist_ok=True)
    (private_state / "state.sqlite3").write_bytes(b"this is not a database" * 100)
    engine = await standins(page(bing_page(ROWS)))
    async with Searcher(Settings(endpoints={"bing": engine.url}, engines=["bing"])) as searcher:
        assert isinstance(searcher.state, MemoryState)
        response = await searcher.search("rust async")
    assert response.results and any("unusable" in w for w in response.warnings)


async def test_an_unwritable_store_degrades_to_memory(standins, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    state = open_state(Settings(state_dir=blocker / "state"))
    assert isinstance(state, MemoryState) and state.warnings
    engine = await standins(page(bing_page(ROWS)))
    async with Searcher(Settings(endpoints={"bing": engine.url}, engines=["bing"]), state=state) as searcher:
        assert (await searcher.search("rust async")).results


async def test_the_service_answers_and_its_metrics_count(standins):
    from plugin.surfaces.service import build_app

    good = await standins(page(bing_page(ROWS)))
    broken = await standins(page("down", status=500))
    settings = Settings(endpoints={"bing": good.url, "duckduckgo-html": broken.url},
                        engines=["bing", "duckduckgo-html"], cache_ttl_s=300)
    runner = aiohttp.web.AppRunner(build_app(settings))
    await runner.setup()
    port = free_port()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"{base}/health") as resp:
                health = await resp.json()
                assert resp.status == 200 and health["status"] == "ok" and health["state"] == "sqlite"
            async with client.get(f"{base}/search", params={"q": "rust async", "limit": "5"}) as resp:
                data = await resp.json()
                assert resp.status == 200 and data["results"][0]["url"].startswith("https://")
                assert {e["name"]: e["status"] for e in data["engines"]} == {"bing": "ok", "duckduckgo-html": "error"}
            async with client.get(f"{base}/search", params={"q": "rust async", "engines": "bing",
                                                             "no_cache": "1"}) as resp:
                assert (await resp.json())["engines"][0]["status"] == "ok"
            async with client.get(f"{base}/search", params={"q": "rust async", "engines": "bing"}) as resp:
                assert (await resp.json())["cached"] is True
            async with client.get(f"{base}/search", params={"q": "  "}) as resp:
                assert resp.status == 400 and (await resp.json())["error"]["code"] == "query_required"
            async with client.get(f"{base}/metrics") as resp:
                text = await resp.text()
    finally:
        await runner.cleanup()
    assert 'metasearch_searches_total{outcome="partial"} 1' in text
    assert 'metasearch_searches_total{outcome="ok"} 1' in text
    assert 'metasearch_searches_total{outcome="cached"} 1' in text
    assert 'metasearch_searches_total{outcome="bad_input"} 1' in text
    assert 'metasearch_engine_status_total{engine="bing",status="ok"} 2' in text
    assert 'metasearch_engine_status_total{engine="duckduckgo-html",status="error"} 1' in text
    assert 'metasearch_search_duration_seconds_count 3' in text  # bad input is counted, not timed
    assert 'metasearch_engine_latency_seconds_bucket{engine="bing",le="+Inf"} 2' in text


async def test_serve_command_answers_health_and_search(standins, tmp_path):
    engine = await standins(page(bing_page(ROWS)))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "METASEARCH_ENDPOINTS": json.dumps({"bing": engine.url}),
           "METASEARCH_ENGINES": '["bing"]'}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "plugin.surfaces.cli", "serve", "--port", str(port),
                                                cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        async with aiohttp.ClientSession() as client:
            for _ in range(100):
                try:
                    async with client.get(f"http://127.0.0.1:{port}/health") as resp:
                        assert (await resp.json())["status"] == "ok"
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.1)
            async with client.get(f"http://127.0.0.1:{port}/search", params={"q": "rust async"}) as resp:
                assert resp.status == 200 and (await resp.json())["results"]
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)


async def test_state_is_kept_per_upstream(standins):
    """A cooldown of an engine behind one endpoint does not bench it behind another."""
    stuck = await standins(hang(30))
    good = await standins(page(bing_page(ROWS)))
    base = ("search", "rust async", "--engines", "bing")
    short = ("--timeout-ms", "400")  # the hung stand-in times out soon
    assert (await cli(*base, *short, "--endpoint", f"bing={stuck.url}"))["engines"][0]["status"] == "timeout"
    assert (await cli(*base, *short, "--endpoint", f"bing={stuck.url}"))["engines"][0]["status"] == "cooldown"
    # the good stand-in gets the default deadline: 400 ms for a fresh process's first request is too short on a
    # loaded machine (it read "timeout" there), and the deadline is not what this test is about
    assert (await cli(*base, "--endpoint", f"bing={good.url}"))["engines"][0]["status"] == "ok"


async def test_default_budgets_spare_real_engines_not_stand_ins(standins):
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], budget_per_minute={"bing": 1})
    async with Searcher(settings) as searcher:
        statuses = [(await searcher.search(f"rust async {i}")).engines[0].status for i in range(3)]
    assert statuses == ["ok", "ok", "ok"]  # "bing" budgets bing.com, not the stand-in behind the override
    limited = settings.model_copy(update={"budget_per_minute": {f"bing@{engine.url}": 1}})
    async with Searcher(limited) as searcher:
        statuses = [(await searcher.search(f"rust async {i}")).engines[0].status for i in range(3, 6)]
    assert statuses[0] == "ok" and statuses[1:] == ["skipped", "skipped"]


OPEN_SCRIPT = """
import asyncio, os, sys, time
from plugin.settings import Settings
from plugin.infra.state import open_state
open(os.path.join(sys.argv[2], str(os.getpid())), "w").close()  # imported: ready
while not os.path.exists(os.path.join(sys.argv[2], "go")):  # all start opening at the same moment
    time.sleep(0.002)
async def main():
    state = open_state(Settings(state_dir=sys.argv[1]))
    print(type(state).__name__, state.warnings)
asyncio.run(main())
"""


async def test_processes_opening_a_new_store_together_all_get_it(tmp_path):
    """Racing to create the file and switch it to WAL must not push any process to in-memory state. The
    processes import first, then open the store together: started one after another, they also open it
    one after another more often than not (with the start line, one round of ten caught a retry cut to two
    attempts 9 times in 10; two rounds without it, 6 times)."""
    ready = tmp_path / "ready"
    ready.mkdir()
    procs = [await asyncio.create_subprocess_exec(
        sys.executable, "-c", OPEN_SCRIPT, str(tmp_path / "store"), str(ready), cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        for _ in range(10)]
    for _ in range(6000):
        if len(list(ready.iterdir())) == len(procs) or any(p.returncode is not None for p in procs):
            break
        await asyncio.sleep(0.01)
    (ready / "go").touch()
    outputs = [(await asyncio.wait_for(p.communicate(), 60))[0].decode().strip() for p in procs]
    assert outputs == ["SqliteState []"] * 10, outputs


def test_opening_retries_when_sqlite_refuses_at_once(tmp_path, monkeypatch):
    """SQLite can answer "database is locked" without waiting while another process switches the file to
    WAL; the store retries instead of falling back to in-memory state."""
    import sqlite3

    import plugin.infra.state as state_module

    real_connect = sqlite3.connect
    refusals = {"left": 2}

    class Refusing:
        def __init__(self, db):
            self._db = db

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA journal_mode") and refusals["left"]:
                refusals["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self._db.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._db, name)

    monkeypatch.setattr(state_module.sqlite3, "connect", lambda *a, **k: Refusing(real_connect(*a, **k)))
    state = open_state(Settings(state_dir=tmp_path / "racy"))
    assert isinstance(state, SqliteState) and refusals["left"] == 0


async def test_redis_cooldown_entries_this_version_cannot_read_are_no_entries_not_a_crash(standins, redis_url):
    """Processes of two versions sharing one Redis: an entry with a field this version does not know is read for
    the fields it does; a damaged one (not JSON, a field missing or of the wrong kind) is taken as no entry, so
    the search goes on (it raised JSONDecodeError / TypeError out of search() before)."""
    import redis.asyncio as redis_client

    from plugin.infra.cooldown import Cooldowns
    from plugin.infra.state import RedisState

    prefix = f"metasearch-test-{os.getpid()}-versions:"
    engine = await standins(page(bing_page([("Rust async book", "https://rust-lang.github.io/async-book/",
                                             "rust async book")])))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], redis_url=redis_url)
    upstream = settings.upstream("bing")
    client = redis_client.Redis.from_url(redis_url, decode_responses=True)
    key = f"{prefix}cooldown:{upstream}"
    later = time.time() + 600
    try:
        await client.set(key, json.dumps({"until": later, "failures": 2, "status": "blocked", "detail": "captcha",
                                          "source": "a newer version's field"}))
        store = RedisState(redis_url, prefix=prefix)
        entry = await store.get(upstream)
        assert entry is not None and entry.until == later and entry.status == "blocked" and entry.failures == 2
        assert upstream in await store.all()
        async with Searcher(settings, state=store) as searcher:
            assert (await searcher.search("rust async")).engines[0].status == "cooldown"
        for damaged in ("{not json", json.dumps({"until": "soon", "failures": 1, "status": "timeout"}),
                        json.dumps({"failures": 1}), json.dumps([1, 2, 3]), "null"):
            await client.set(key, damaged)
            store = RedisState(redis_url, prefix=prefix)
            assert await store.get(upstream) is None and await store.all() == {}
            async with Searcher(settings, state=store) as searcher:
                response = await searcher.search("rust async")
            assert response.engines[0].status == "ok", (damaged, response.engines[0])
        await client.set(key, "{not json")
        store = RedisState(redis_url, prefix=prefix)
        failed = await Cooldowns(settings, store).failure(upstream, "timeout")  # written over
        assert failed.failures == 1 and (await store.get(upstream)) == failed
        await store.close()
    finally:
        await client.delete(key)
        await client.aclose()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
async def test_the_store_and_its_journal_files_are_the_users_alone_whatever_the_umask(tmp_path):
    """The store holds cooldowns and cached pages (and may hold cookies): created 0600 under a permissive
    umask, its WAL and shared-memory files too (SQLite gives them the database's mode), its new directory
    0700; a store an older version left readable by others is narrowed when opened."""
    import stat

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    previous = os.umask(0o002)
    try:
        directory = tmp_path / "fresh" / "metasearch"
        state = SqliteState(directory / "state.sqlite3")
        await state.cache_put("page:1", "a cached page", 60)
        await state.flush()
        assert await state.cache_get("page:1") == "a cached page"
        files = [directory / name for name in ("state.sqlite3", "state.sqlite3-wal", "state.sqlite3-shm")]
        assert all(f.exists() for f in files)
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert mode(directory) == 0o700
        await state.close()
        for f in files:
            if f.exists():
                f.chmod(0o644)
        again = SqliteState(directory / "state.sqlite3")
        assert await again.cache_get("page:1") == "a cached page"
        assert mode(directory / "state.sqlite3") == 0o600
        assert all(mode(f) == 0o600 for f in files if f.exists())
        await again.close()
    finally:
        os.umask(previous)
