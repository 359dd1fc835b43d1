#!/usr/bin/env python3
"""Latency harness (a benchmark, not a test): how long searches take, and what waiting is blamed on.

    python scripts/latency.py hung      [--searches 60] [--keep-cooldowns]
                                                               6 healthy lognormal engines + 1 hung one
    python scripts/latency.py limit     [--searches 10] [--limit 20]
                                                               3 engines answering in 300 ms + 1 hung one
    python scripts/latency.py oneshot   [--searches 30]        the same as one `metasearch search` process each
    python scripts/latency.py deadline  [--searches 5]         hung primary + hung fallback
    python scripts/latency.py burst     [--concurrency 200] [--identical] [--rounds 2] [--hung] [--burst-limit 8]
    python scripts/latency.py cpu       [--searches 100] [--profile]
    python scripts/latency.py serve     [--workers 1,2] [--seconds 20]
    python scripts/latency.py coldstart [--runs 10]
    python scripts/latency.py all                              every scenario above, default sizes

Engines are loopback stand-ins in a child process (so their CPU is not ours), serving real pages
from ../shared/serp-corpus for the query "javascript tutorial": bing, bing-cn (Bing's page), brave,
mojeek, yahoo and startpage (home page, then results), all as primaries. Each search waits a
lognormal delay per engine like a real engine's (median 600 ms, p95 2 s; seeded; Startpage's home
page answers at once, so its two steps together take one draw); the hung engine
(duckduckgo-html) never answers. Every search is a distinct query ("javascript tutorial N") with the
result cache off, against one long-lived searcher with in-memory state; the hung engine's cooldown is
cleared before each search so it is live on every one.

Printed: wall time p50/p95/p99, false timeouts (a `timeout` from an engine that is not hung), benched
engines, empty answers, queue time, upstream requests per engine (counted by the stand-ins), and top-8
agreement with a wait-for-every-healthy-engine run of the same query (same pages, no delays, hung
engine left out): how many of the 8 URLs are the same. With --keep-cooldowns the hung engine's
cooldown is left as the searches make it (a long-lived process: its late runs time out in the
background and bench it for most searches), to compare the agreement with the engine live and benched.

`limit`: three engines answering their real pages in a fixed 300 ms and the hung one, each search asking
for `--limit` rows (20), more than the three pages give: when does it answer, with how many rows, and
what does it say about them. `oneshot`: the same four engines, one `metasearch search` process per
search sharing one state directory (as a harness spawning the CLI per tool call): what the hung engine's
status is in each process, i.e. whether processes that each give up on it learn that it hangs.

Settings can be varied: --deadline-ms, --grace-ms, --quorum, --soft-deadline-ms, --timeout-ms,
--upstream-concurrency (fields a checkout does not have are ignored, so an older checkout can be
measured with PYTHONPATH=that/checkout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path and not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("METASEARCH_CORPUS", ROOT.parent / "shared" / "serp-corpus"))

QUERY = "javascript tutorial"
PAGES = {
    "bing": "bing/websearchmcp__javascript-tutorial.html",
    "bing-cn": "bing/websearchmcp__javascript-tutorial.html",
    "brave": "brave/websearchmcp__javascript-tutorial.html",
    "mojeek": "mojeek/websearchmcp__javascript-tutorial.html",
    "yahoo": "yahoo/websearchmcp__javascript-tutorial.html",
    "startpage": "startpage/websearchmcp__javascript-tutorial_http.html",
}
HEALTHY = list(PAGES)
HUNG = "duckduckgo-html"
STARTPAGE_HOME = ('<html><body><form id="search" action="/sp/search" method="post">'
                  '<input type="hidden" name="sc" value="Zx81TOKEN"><input type="hidden" name="t" value="device">'
                  '<input name="query"></form></body></html>')
MEDIAN_S, P95_S = 0.6, 2.0
SIGMA = math.log(P95_S / MEDIAN_S) / 1.6449


# ----- the stand-in process -----
def standins_main() -> None:
    """Child process: serve the engines described on stdin, print their ports, run until killed."""
    from aiohttp import web

    spec = json.loads(sys.stdin.readline())

    async def serve() -> None:
        ports: dict[str, int] = {}
        counts: dict[str, int] = {}
        for key, item in spec.items():
            rng = random.Random(item.get("seed", 0))
            body = (CORPUS / item["page"]).read_bytes() if item.get("page") else b""
            counts[key] = 0

            def handler_for(key=key, item=item, rng=rng, body=body):
                async def handler(request: web.Request) -> web.StreamResponse:
                    if request.path == "/__stats":
                        return web.json_response({"requests": counts[key]})
                    counts[key] += 1
                    await request.read()
                    if item["mode"] == "hang":
                        await asyncio.sleep(3600)
                    home = key.startswith("startpage") and request.path == "/"
                    if item["mode"] == "lognormal" and not home:  # one draw per search, two-step engines too
                        await asyncio.sleep(min(30.0, rng.lognormvariate(math.log(MEDIAN_S), SIGMA)))
                    if item["mode"] == "fixed" and not home:
                        await asyncio.sleep(item["delay"])
                    data = STARTPAGE_HOME.encode() if home else body
                    return web.Response(body=data, content_type="text/html", charset="utf-8")
                return handler

            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", handler_for())
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            ports[key] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(json.dumps(ports), flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


class Standins:
    """The stand-in process: `live` engines (lognormal or hung) and `ref` copies answering at once."""

    def __init__(self, hung: list[str] = (), seed: int = 11, healthy: bool = True,
                 fixed: dict[str, float] | None = None):
        spec: dict[str, dict] = {}
        for i, name in enumerate(HEALTHY if healthy else ()):
            spec[name] = {"mode": "lognormal", "page": PAGES[name], "seed": seed * 100 + i}
            spec[f"{name}@ref"] = {"mode": "instant", "page": PAGES[name]}
        for name, delay in (fixed or {}).items():  # a fixed delay instead of a lognormal draw
            spec[name] = {"mode": "fixed", "page": PAGES[name], "delay": delay}
        for name in hung:
            spec[name] = {"mode": "hang"}
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        self.ports: dict[str, int] = {}

    def __enter__(self) -> "Standins":
        self.proc = subprocess.Popen([sys.executable, __file__, "_standins"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ""})
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(self.spec) + "\n")
        self.proc.stdin.flush()
        self.ports = json.loads(self.proc.stdout.readline())
        return self

    def __exit__(self, *exc) -> None:
        if self.proc:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)

    def url(self, key: str) -> str:
        return f"http://127.0.0.1:{self.ports[key]}"

    def endpoints(self, names: list[str], ref: bool = False) -> dict[str, str]:
        return {name: self.url(f"{name}@ref" if ref else name) for name in names}

    async def requests(self) -> dict[str, int]:
        import aiohttp

        counts = {}
        async with aiohttp.ClientSession() as session:
            for key in self.ports:
                if not key.endswith("@ref"):
                    async with session.get(self.url(key) + "/__stats") as resp:
                        counts[key] = (await resp.json())["requests"]
        return counts


# ----- settings and searchers -----
def tuning(args: argparse.Namespace) -> dict:
    found = {"deadline_ms": args.deadline_ms, "grace_ms": args.grace_ms, "quorum": args.quorum,
             "soft_deadline_ms": args.soft_deadline_ms, "timeout_ms": args.timeout_ms,
             "upstream_concurrency": args.upstream_concurrency}
    return {k: v for k, v in found.items() if v is not None}


def make_settings(endpoints: dict[str, str], fallback: list[str] = (), **overrides):
    from plugin.settings import Settings

    names = list(endpoints)
    values = dict(endpoints=endpoints, engines=names, cache_ttl_s=0, budget_per_minute={},
                  tiers={n: ("fallback" if n in fallback else "primary") for n in names}, state_backend="memory")
    values.update(overrides)
    known = Settings.model_fields
    return Settings(**{k: v for k, v in values.items() if k in known})


def make_searcher(settings):
    from plugin.infra.state import MemoryState
    from plugin.pipeline.searcher import Searcher

    return Searcher(settings, state=MemoryState())


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    return {"p50": round(at(0.5), 3), "p95": round(at(0.95), 3), "p99": round(at(0.99), 3),
            "max": round(ordered[-1], 3), "mean": round(statistics.fmean(ordered), 3)}


async def reference_top(standins: Standins, query: str, cache: dict) -> list[str]:
    """Top-8 URLs when every healthy engine answered (no delays, no hung engine, wait for all)."""
    if query not in cache:
        searcher = make_searcher(make_settings(standins.endpoints(HEALTHY, ref=True), quorum=1.0,
                                               soft_deadline_ms=600000, deadline_ms=600000))
        try:
            response = await searcher.search(query)
        finally:
            await searcher.close()
        assert all(e.status == "ok" for e in response.engines), [(e.name, e.status) for e in response.engines]
        cache[query] = [row.url for row in response.results[:8]]
    return cache[query]


def engine_summary(responses) -> dict:
    statuses: dict[str, dict[str, int]] = {}
    queue = []
    for response in responses:
        for e in response.engines:
            statuses.setdefault(e.name, {}).setdefault(e.status, 0)
            statuses[e.name][e.status] += 1
            if getattr(e, "queue_ms", None) is not None:
                queue.append(e.queue_ms / 1000)
    return {"statuses": statuses, "queue_s": percentiles(queue) if queue else "not reported"}


# ----- scenarios -----
async def scenario_hung(args: argparse.Namespace) -> dict:
    with Standins(hung=[HUNG], seed=args.seed) as standins:
        names = [*HEALTHY, HUNG]
        endpoints = standins.endpoints(HEALTHY) | {HUNG: standins.url(HUNG)}
        settings = make_settings(endpoints, **tuning(args))
        searcher = make_searcher(settings)
        walls, agreement, responses, refs = [], [], [], {}
        try:
            await searcher.search(f"{QUERY} warm")  # connections opened, modules loaded
            for i in range(args.searches):
                query = f"{QUERY} {i}"
                if not args.keep_cooldowns:  # the hung engine is live on every search
                    await searcher.state.clear(settings.upstream(HUNG))
                started = time.perf_counter()
                response = await searcher.search(query)
                walls.append(time.perf_counter() - started)
                responses.append(response)
                top = [row.url for row in response.results[:8]]
                agreement.append(len(set(top) & set(await reference_top(standins, query, refs))))
        finally:
            await searcher.close()
        summary = engine_summary(responses)
        false_timeouts = sum(n for name, st in summary["statuses"].items() if name != HUNG
                             for status, n in st.items() if status == "timeout")
        benched = summary["statuses"].get(HUNG, {}).get("cooldown", 0)
        return {"scenario": f"{len(HEALTHY)} healthy lognormal engines + 1 hung ({HUNG}), every engine primary"
                            + (", its cooldown kept" if args.keep_cooldowns else ""),
                "hung_engine_benched_in": f"{benched} of {len(walls)} searches", "engines": names, "searches": len(walls), "settings": tuning(args) or "defaults",
                "wall_s": percentiles(walls), "top8_agreement_mean": round(statistics.fmean(agreement), 2),
                "top8_agreement_min": min(agreement), "false_timeouts": false_timeouts,
                "empty_answers": sum(1 for r in responses if not r.results), **summary}


async def scenario_deadline(args: argparse.Namespace) -> dict:
    primary, fallback = "bing", "mojeek"
    with Standins(hung=[primary, fallback], healthy=False) as standins:
        results = {}
        for timeout_ms in (None, 3000):
            overrides = tuning(args)
            if timeout_ms:
                overrides["timeout_ms"] = timeout_ms
            settings = make_settings({primary: standins.url(primary), fallback: standins.url(fallback)},
                                     fallback=[fallback], **overrides)
            walls, statuses = [], []
            for i in range(args.searches):
                searcher = make_searcher(settings)
                started = time.perf_counter()
                response = await searcher.search(f"{QUERY} {i}")
                walls.append(time.perf_counter() - started)
                statuses.append({e.name: e.status for e in response.engines})
                await searcher.close()
            results[f"timeout_ms={settings.timeout_ms}"] = {
                "deadline_ms": getattr(settings, "deadline_ms", None), "wall_s": percentiles(walls),
                "statuses": statuses[-1], "fallback_requests": (await standins.requests())[fallback]}
        return {"scenario": f"hung primary ({primary}) + hung fallback ({fallback})", **results}


async def scenario_burst(args: argparse.Namespace) -> dict:
    hung = [HUNG] if args.hung else []  # --hung: the burst also asks an engine that never answers
    with Standins(hung=hung, seed=args.seed) as standins:
        settings = make_settings(standins.endpoints(HEALTHY) | {name: standins.url(name) for name in hung},
                                 **tuning(args))
        searcher = make_searcher(settings)
        rounds = []
        try:
            before = await standins.requests()
            for round_number in range(args.rounds):
                async def one(i: int):
                    query = QUERY if args.identical else f"{QUERY} {round_number * 1000 + i}"
                    started = time.perf_counter()
                    response = await searcher.search(query, limit=args.burst_limit)
                    return time.perf_counter() - started, response

                started = time.perf_counter()
                done = await asyncio.gather(*(one(i) for i in range(args.concurrency)))
                elapsed = time.perf_counter() - started
                responses = [r for _, r in done]
                after = await standins.requests()
                benched = await searcher.cooldowns.store.all()
                summary = engine_summary(responses)
                rounds.append({
                    "round": round_number + 1, "searches": len(done), "round_s": round(elapsed, 2),
                    "wall_s": percentiles([w for w, _ in done]),
                    "false_timeouts": sum(st.get("timeout", 0) for name, st in summary["statuses"].items()
                                          if name not in hung),
                    "benched_engines": sorted(k.split("@")[0] for k in benched),
                    "empty_answers": sum(1 for r in responses if not r.results),
                    "upstream_requests": {k: after[k] - before.get(k, 0) for k in after}, **summary})
                before = after
        finally:
            await searcher.close()
        kind = "identical" if args.identical else "distinct"
        return {"scenario": f"{args.concurrency} concurrent {kind} searches (limit {args.burst_limit}), "
                            f"{len(HEALTHY)} healthy lognormal engines" + (f" + 1 hung ({HUNG})" if hung else ""),
                "settings": tuning(args) or "defaults", "rounds": rounds}


async def scenario_cpu(args: argparse.Namespace) -> dict:
    with Standins() as standins:
        settings = make_settings(standins.endpoints(HEALTHY, ref=True), **tuning(args))
        searcher = make_searcher(settings)
        try:
            for i in range(5):
                await searcher.search(f"{QUERY} warm {i}")
            profiler = None
            if args.profile:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            samples = []
            for i in range(args.searches):
                cpu = time.process_time()
                response = await searcher.search(f"{QUERY} {i}")
                samples.append(time.process_time() - cpu)
                assert len(response.results) == 8, [(e.name, e.status, e.detail) for e in response.engines]
            if profiler:
                profiler.disable()
                import pstats

                pstats.Stats(profiler, stream=sys.stderr).sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(40)
        finally:
            await searcher.close()
        return {"scenario": f"CPU of one search, {len(HEALTHY)} engines answering real pages at once "
                            f"(stand-ins in another process)", "searches": len(samples),
                "cpu_ms_per_search": {"median": round(statistics.median(samples) * 1000, 1),
                                      "mean": round(statistics.fmean(samples) * 1000, 1)}}


def metasearch_command() -> list[str]:
    script = Path(sys.executable).with_name("metasearch")
    return [str(script)] if script.exists() else [sys.executable, "-m", "plugin.surfaces.cli"]


async def scenario_serve(args: argparse.Namespace) -> dict:
    import aiohttp

    results = {}
    with Standins() as standins:
        endpoints = standins.endpoints(HEALTHY, ref=True)
        state_dir = tempfile.mkdtemp(prefix="metasearch-latency-")
        env = {**os.environ, "METASEARCH_ENDPOINTS": json.dumps(endpoints),
               "METASEARCH_ENGINES": json.dumps(HEALTHY), "METASEARCH_TIERS": json.dumps({n: "primary" for n in HEALTHY}),
               "METASEARCH_CACHE_TTL_S": "0", "METASEARCH_BUDGET_PER_MINUTE": "{}", "METASEARCH_STATE_DIR": state_dir}
        try:
            for workers in [int(w) for w in args.workers.split(",")]:
                port = free_port()
                command = [*metasearch_command(), "serve", "--port", str(port)]
                if workers != 1:
                    command += ["--workers", str(workers)]
                server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                base = f"http://127.0.0.1:{port}"
                try:
                    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                        await wait_healthy(session, base, server)
                        for i in range(8 * workers):  # every worker warm
                            async with session.get(f"{base}/search", params={"q": f"{QUERY} warm {i}"}) as resp:
                                await resp.read()
                        count = 0
                        failures = 0
                        stop = time.perf_counter() + args.seconds
                        counter = iter(range(10**9))

                        async def client() -> None:
                            nonlocal count, failures
                            while time.perf_counter() < stop:
                                async with session.get(f"{base}/search",
                                                       params={"q": f"{QUERY} {next(counter)}"}) as resp:
                                    body = await resp.read()  # not parsed: the load generator stays light
                                    if resp.status == 200 and body.count(b'"score"') == 8:
                                        count += 1
                                    else:
                                        failures += 1

                        started = time.perf_counter()
                        cpu = (tree_cpu(server.pid), process_cpu(standins.proc.pid), time.process_time())
                        await asyncio.gather(*(client() for _ in range(args.clients)))
                        elapsed = time.perf_counter() - started
                        used = (tree_cpu(server.pid) - cpu[0], process_cpu(standins.proc.pid) - cpu[1],
                                time.process_time() - cpu[2])
                    results[f"workers={workers}"] = {
                        "searches_per_s": round(count / elapsed, 1), "failures": failures,
                        # Cores each side kept busy: on a shared machine, what the workers could get.
                        "cores_used": {"server": round(used[0] / elapsed, 2), "stand_ins": round(used[1] / elapsed, 2),
                                       "load_generator": round(used[2] / elapsed, 2)},
                        "server_cpu_ms_per_search": round(used[0] / max(count, 1) * 1000, 1)}
                finally:
                    server.send_signal(signal.SIGINT)
                    try:
                        server.wait(15)
                    except subprocess.TimeoutExpired:
                        server.kill()
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)
    runs = list(results.values())
    if len(runs) >= 2 and runs[0]["searches_per_s"]:
        results["speedup"] = round(runs[-1]["searches_per_s"] / runs[0]["searches_per_s"], 2)
        # Throughput per core the workers got: equal figures mean the workers scale with the cores they get.
        results["searches_per_server_core_s"] = [round(v["searches_per_s"] / max(v["cores_used"]["server"], 0.01), 1)
                                                 for v in runs]
    return {"scenario": f"metasearch serve, {args.clients} clients for {args.seconds} s, {len(HEALTHY)} engines "
                        f"answering at once, {os.cpu_count()} cores", "load_average": os.getloadavg(), **results}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (the workers of `serve --workers N`)."""
    total = process_cpu(pid)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                total += process_cpu(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return total


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def wait_healthy(session, base: str, server: subprocess.Popen) -> None:
    import aiohttp

    for _ in range(200):
        if server.poll() is not None:
            raise RuntimeError(f"server exited: {server.stderr.read().decode() if server.stderr else ''}")
        try:
            async with session.get(f"{base}/health") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("server did not come up")


def child_cpu(command: list[str], env: dict, stdin: bytes | None = None) -> tuple[float, float, bytes]:
    """(CPU seconds, wall seconds, stdout) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, done.stdout


def mcp_tools_list(command: list[str], env: dict) -> float:
    """Seconds from spawning the MCP server (stdio) to its answer to tools/list."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "latency", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    proc.stdin.write((json.dumps(messages[0]) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    for message in messages[1:]:
        proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("MCP server closed its output")
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return elapsed


async def scenario_coldstart(args: argparse.Namespace) -> dict:
    state_dir = tempfile.mkdtemp(prefix="metasearch-latency-")
    env = {**os.environ, "METASEARCH_STATE_DIR": state_dir}
    command = metasearch_command()
    result: dict = {"scenario": "new processes, as a harness spawns them", "command": " ".join(command)}
    try:
        with Standins() as standins:
            search = [*command, "search", f"{QUERY}", "--engines", "bing", "--endpoint",
                      f"bing={standins.url('bing@ref')}", "--json", "--no-cache"]
            child_cpu(search, env)  # bytecode caches written
            cpu = [child_cpu(search, env) for _ in range(args.runs)]
            data = json.loads(cpu[-1][2])
            assert data["engines"][0]["status"] == "ok", data["engines"]
            result["search_one_loopback_engine"] = {
                "cpu_s_median": round(statistics.median(c for c, _, _ in cpu), 3),
                "wall_s_median": round(statistics.median(w for _, w, _ in cpu), 3)}
        version = [child_cpu([*command, "--version"], env) for _ in range(args.runs)]
        result["version"] = {"wall_s_median": round(statistics.median(w for _, w, _ in version), 3),
                             "cpu_s_median": round(statistics.median(c for c, _, _ in version), 3)}
        try:
            import mcp  # noqa: F401
        except ImportError:
            result["mcp"] = "skipped: the mcp extra is not installed"
        else:
            spawn = [mcp_tools_list([*command, "mcp"], env) for _ in range(args.runs)]
            sdk = [child_cpu([sys.executable, "-c", "import mcp.server.mcpserver"], env)[1] for _ in range(args.runs)]
            result["mcp_spawn_to_tools_list_s_median"] = round(statistics.median(spawn), 3)
            result["mcp_sdk_import_alone_s_median"] = round(statistics.median(sdk), 3)
        bare = [child_cpu([sys.executable, "-c", "pass"], env)[1] for _ in range(args.runs)]
        result["python_start_alone_s_median"] = round(statistics.median(bare), 3)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    return result


LIMIT_ENGINES = ["mojeek", "yahoo", "startpage"]  # 17 distinct rows between them: fewer than 20


def limit_standins() -> Standins:
    return Standins(hung=[HUNG], healthy=False, fixed={name: 0.3 for name in LIMIT_ENGINES})


async def scenario_limit(args: argparse.Namespace) -> dict:
    with limit_standins() as standins:
        endpoints = standins.endpoints(LIMIT_ENGINES) | {HUNG: standins.url(HUNG)}
        settings = make_settings(endpoints, **tuning(args))
        searcher = make_searcher(settings)
        walls, rows, responses = [], [], []
        try:
            await searcher.search(f"{QUERY} warm", limit=args.limit)
            for i in range(args.searches):
                await searcher.state.clear(settings.upstream(HUNG))  # the hung engine is live on every search
                started = time.perf_counter()
                response = await searcher.search(f"{QUERY} {i}", limit=args.limit)
                walls.append(time.perf_counter() - started)
                rows.append(len(response.results))
                responses.append(response)
        finally:
            await searcher.close()
        return {"scenario": f"{len(LIMIT_ENGINES)} engines answering in a fixed 300 ms + 1 hung ({HUNG}), "
                            f"limit {args.limit}", "searches": len(walls), "settings": tuning(args) or "defaults",
                "wall_s": percentiles(walls), "rows": {"min": min(rows), "max": max(rows)},
                "warnings_of_the_last": responses[-1].warnings, **engine_summary(responses)}


async def scenario_oneshot(args: argparse.Namespace) -> dict:
    state_dir = tempfile.mkdtemp(prefix="metasearch-latency-")
    names = [*LIMIT_ENGINES, HUNG]
    env = {"PYTHONPATH": str(ROOT), **os.environ, "METASEARCH_STATE_DIR": state_dir,
           "METASEARCH_TIERS": json.dumps({name: "primary" for name in names}),
           **{f"METASEARCH_{key.upper()}": str(value) for key, value in tuning(args).items()}}
    command = metasearch_command()
    hung_status: list[str] = []
    walls = []
    try:
        with limit_standins() as standins:
            endpoints = standins.endpoints(LIMIT_ENGINES) | {HUNG: standins.url(HUNG)}
            search = [*command, "search", "--engines", ",".join(names), "--json", "--no-cache",
                      *(part for name, url in endpoints.items() for part in ("--endpoint", f"{name}={url}"))]
            for i in range(args.searches):
                _, wall, out = child_cpu([*search, f"{QUERY} {i}"], env)
                walls.append(wall)
                hung_status.append(next(e["status"] for e in json.loads(out)["engines"] if e["name"] == HUNG))
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    counts = {status: hung_status.count(status) for status in sorted(set(hung_status))}
    return {"scenario": f"one `metasearch search` process per search, one state directory: "
                        f"{len(LIMIT_ENGINES)} engines answering in a fixed 300 ms + 1 hung ({HUNG})",
            "searches": len(walls), "settings": tuning(args) or "defaults", "wall_s": percentiles(walls),
            "hung_engine": counts, "hung_engine_in_order": "".join(status[0] for status in hung_status)}


SCENARIOS = {"hung": scenario_hung, "limit": scenario_limit, "oneshot": scenario_oneshot,
             "deadline": scenario_deadline, "burst": scenario_burst, "cpu": scenario_cpu,
             "serve": scenario_serve, "coldstart": scenario_coldstart}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_standins":
        standins_main()
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=[*SCENARIOS, "all"])
    parser.add_argument("--searches", type=int)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--identical", action="store_true")
    parser.add_argument("--hung", action="store_true", help="burst: one engine more, which never answers")
    parser.add_argument("--burst-limit", type=int, default=8,
                        help="burst: rows each search asks for (more than the engines give: it answers at the soft "
                             "deadline, not once limit rows are in)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep-cooldowns", action="store_true")
    parser.add_argument("--limit", type=int, default=20)
    for name in ("deadline-ms", "grace-ms", "soft-deadline-ms", "timeout-ms", "upstream-concurrency"):
        parser.add_argument(f"--{name}", type=int)
    parser.add_argument("--quorum", type=float)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"the real-page corpus is not at {CORPUS} (set METASEARCH_CORPUS)", file=sys.stderr)
        return 2
    defaults = {"hung": 60, "deadline": 5, "cpu": 100, "limit": 10, "oneshot": 30}
    chosen = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in chosen:
        if name == "burst" and args.scenario == "all":
            for identical in (False, True):
                args.identical = identical
                print(json.dumps(asyncio.run(scenario_burst(args)), indent=2), flush=True)
            continue
        searches = args.searches
        args.searches = searches or defaults.get(name, 0)
        print(json.dumps(asyncio.run(SCENARIOS[name](args)), indent=2), flush=True)
        args.searches = searches
    return 0


if __name__ == "__main__":
    sys.exit(main())
