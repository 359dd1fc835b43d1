#!/usr/bin/env python3
"""Load benchmark (not a test): many concurrent searches against loopback engines.

    python scripts/load.py [--concurrency 200] [--total 1000] [--json]
    python scripts/load.py --serve [--workers 2] [--rounds 2] [--concurrency 200] [--store sqlite,memory]

In-process (the first form): three stand-in engines on 127.0.0.1 answer after realistic latencies
(50-400 ms, random). Searches run in waves of --concurrency at once until --total have run through one
Searcher on the memory store. Reported: that every search completed with rows, the most connections the
pool held open at once (as the kernel counts them, sampled every 5 ms) against the pool limit, latency
percentiles, and RSS after 100 searches and after --total searches (no leak:
the difference should stay within 10 MB).

Served (--serve): `metasearch serve --workers 2` with its default settings (the embedded SQLite store,
the answer cache on), then again on the memory store, each in a fresh state directory. Three healthy
stand-in engines (their own process) answer after --engine-ms (100 ms). Each round sends --concurrency
`GET /search` at once, the same queries every round (round 2 is answered from the cache). Reported per
round: answers with no rows, engines `late` or `timeout` (false timeouts: every engine is healthy),
engines never asked because they were still `queued` for admission when the answer went (never_asked),
engines benched (`cooldown`), HTTP errors, answers whose warnings mention the state store (a read that
did not answer within `state_wait_ms`, taken as a miss), latency percentiles, and the workers' log lines
saying `database is locked`. --real-pages: the stand-ins replay real pages of one query from
../shared/serp-corpus (METASEARCH_CORPUS) instead of small synthetic ones. Exit status 0 when every round of every store had no empty answer, no false
timeout, no engine left unasked and nothing benched.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from yarl import URL

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from standins import StandIn, bing_page, ddg_page  # noqa: E402

from plugin.pipeline.searcher import Searcher  # noqa: E402
from plugin.settings import Settings  # noqa: E402
from plugin.infra.state import MemoryState  # noqa: E402
from plugin.bench.process import rss_mb  # noqa: E402


def latency_page(body: str, rng: random.Random):
    data = body.encode()

    async def handler(request, standin):
        from aiohttp import web

        await asyncio.sleep(rng.uniform(0.05, 0.4))
        return web.Response(body=data, content_type="text/html", charset="utf-8")

    return handler


async def main_async(concurrency: int, total: int) -> dict:
    rng = random.Random(7)
    rows = [(f"Rust async result {i}", f"https://site{i}.example.org/rust-async", "rust async runtime")
            for i in range(10)]
    servers = {
        "bing": await StandIn(latency_page(bing_page(rows), rng)).start(),
        "bing-cn": await StandIn(latency_page(bing_page(rows[::-1]), rng)).start(),
        "duckduckgo-html": await StandIn(latency_page(ddg_page(rows[3:]), rng)).start(),
    }
    # No budgets or cache: the point is to push many searches through one process.
    settings = Settings(endpoints={n: s.url for n, s in servers.items()}, engines=list(servers),
                        budget_per_minute={}, cache_ttl_s=0)
    searcher = Searcher(settings, state=MemoryState())
    peak_connections = 0
    sampling = True
    ports = {URL(server.url).port for server in servers.values()}

    async def sample() -> None:
        nonlocal peak_connections
        while sampling:
            peak_connections = max(peak_connections, client_connections(ports))
            await asyncio.sleep(0.005)

    sampler = asyncio.create_task(sample())
    latencies: list[float] = []
    failures = 0
    rss_after_100 = None
    done = 0
    started = time.perf_counter()

    async def one(i: int) -> None:
        nonlocal failures
        t0 = time.perf_counter()
        response = await searcher.search(f"rust async runtime {i % 50}")
        latencies.append(time.perf_counter() - t0)
        if not response.results or response.partial:
            failures += 1

    try:
        while done < total:
            wave = min(concurrency, total - done)
            await asyncio.gather(*(one(done + i) for i in range(wave)))
            done += wave
            if rss_after_100 is None and done >= 100:
                gc.collect()
                rss_after_100 = rss_mb()
        gc.collect()
        rss_end = rss_mb()
    finally:
        sampling = False
        await sampler
        await searcher.close()
        for server in servers.values():
            await server.stop()
    latencies.sort()
    return {
        "searches": total,
        "concurrency": concurrency,
        "completed_with_rows": total - failures,
        "wall_seconds": round(time.perf_counter() - started, 2),
        "latency_ms": {"p50": round(statistics.median(latencies) * 1000, 1),
                       "p95": round(latencies[int(0.95 * len(latencies)) - 1] * 1000, 1),
                       "max": round(latencies[-1] * 1000, 1)},
        "peak_open_connections": peak_connections,
        "pool_limit": settings.pool_limit,
        "upstream_concurrency": settings.upstream_concurrency,
        "rss_mb_after_100": round(rss_after_100 or float("nan"), 1),
        f"rss_mb_after_{total}": round(rss_end, 1),
        "rss_growth_mb": round(rss_end - (rss_after_100 or rss_end), 1),
    }


# /proc/net/tcp states a pool holds a socket in: ESTABLISHED, and CLOSE_WAIT (the engine hung up, not yet us).
_HELD_STATES = {"01", "08"}


def client_connections(ports: set[int]) -> int:
    """Our open TCP connections to the stand-ins, as the kernel counts them (no aiohttp internals): the
    sockets whose remote port is a stand-in's. The stand-ins' own accepted sockets have it as local port."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] in _HELD_STATES and int(fields[2].rsplit(":", 1)[1], 16) in ports:
                count += 1
    return count


# ----- --serve: bursts against `metasearch serve --workers N` -----


# --real-pages: real pages of one query kept in ../shared/serp-corpus (engine -> file).
REAL_PAGES = {engine: f"{engine}/websearchmcp__javascript-tutorial.html" for engine in ("bing", "brave", "mojeek", "yahoo")}
REAL_QUERY = "javascript tutorial"
CORPUS = Path(os.environ.get("METASEARCH_CORPUS", ROOT.parent / "shared" / "serp-corpus"))
SYNTHETIC_QUERY = "rust async runtime"


def _standins_process(conn, engine_ms: int, real: bool) -> None:
    """The stand-in engines, in a process of their own (the load generator must not slow them down)."""
    from standins import page

    async def run() -> None:
        if real:
            bodies = {engine: (CORPUS / path).read_bytes() for engine, path in REAL_PAGES.items()}
        else:
            rows = [(f"Rust async result {i}", f"https://site{i}.example.org/rust-async", "rust async runtime")
                    for i in range(10)]
            bodies = {"bing": bing_page(rows), "bing-cn": bing_page(rows[::-1]), "duckduckgo-html": ddg_page(rows[3:])}
        servers = {name: await StandIn(page(body, delay=engine_ms / 1000)).start() for name, body in bodies.items()}
        conn.send({name: server.url for name, server in servers.items()})
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # until told to stop
        for server in servers.values():
            await server.stop()

    asyncio.run(run())


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _burst(port: int, queries: list[str]) -> dict:
    import aiohttp

    latencies: list[float] = []
    counts = {"answers": 0, "empty_answers": 0, "http_errors": 0, "false_timeouts": 0, "never_asked": 0, "benched": 0,
              "answers_with_a_state_store_warning": 0, "statuses": {}}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:
        async def one(query: str) -> None:
            t0 = time.perf_counter()
            try:
                async with session.get(f"http://127.0.0.1:{port}/search", params={"q": query}) as resp:
                    body = await resp.json(content_type=None) if resp.status == 200 else None
            except (aiohttp.ClientError, asyncio.TimeoutError):
                body = None
            latencies.append(time.perf_counter() - t0)
            if body is None:
                counts["http_errors"] += 1
                return
            counts["answers"] += 1
            if not body["results"]:
                counts["empty_answers"] += 1
            if any("state store" in warning for warning in body["warnings"]):
                counts["answers_with_a_state_store_warning"] += 1
            for engine in body["engines"]:
                status = engine["status"]
                counts["statuses"][status] = counts["statuses"].get(status, 0) + 1
                counts["false_timeouts"] += status in ("late", "timeout")
                counts["never_asked"] += status == "queued"  # still queued for admission when the answer went
                counts["benched"] += status == "cooldown"

        await asyncio.gather(*(one(query) for query in queries))
    latencies.sort()
    counts["latency_ms"] = {"p50": round(statistics.median(latencies) * 1000),
                            "p95": round(latencies[max(0, int(0.95 * len(latencies)) - 1)] * 1000),
                            "max": round(latencies[-1] * 1000)}
    return counts


def served(store: str, workers: int, rounds: int, concurrency: int, urls: dict[str, str], repeat: bool,
           query: str) -> dict:
    """One `serve --workers N` on `store` (sqlite: the default settings), `rounds` bursts of `concurrency`."""
    import os
    import subprocess
    import tempfile
    import urllib.request

    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="metasearch-load-") as state_dir:
        env = {**os.environ, "METASEARCH_ENDPOINTS": json.dumps(urls), "METASEARCH_ENGINES": json.dumps(list(urls)),
               "METASEARCH_STATE_DIR": state_dir, "METASEARCH_STATE_BACKEND": store,
               "PYTHONPATH": str(ROOT)}
        log_path = Path(state_dir) / "serve.log"
        with open(log_path, "wb") as log:
            server = subprocess.Popen([sys.executable, "-c", "import sys; from plugin.surfaces.cli import main; "
                                       "sys.exit(main(sys.argv[1:]))", "serve", "--port", str(port),
                                       "--workers", str(workers)], cwd=ROOT, env=env, stdout=log, stderr=log)
            try:
                for _ in range(300):
                    try:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                        break
                    except OSError:
                        time.sleep(0.1)
                results = []
                for round_ in range(rounds):
                    first = 0 if repeat else round_ * concurrency
                    queries = [f"{query} {i}" for i in range(first, first + concurrency)]
                    results.append(asyncio.run(_burst(port, queries)))
            finally:
                server.terminate()
                server.wait(30)
        text = log_path.read_text(errors="replace")
    return {"store": store, "workers": workers, "rounds": results,
            "database_is_locked_log_lines": text.count("database is locked")}


def main_served(args) -> int:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    standins = context.Process(target=_standins_process, args=(theirs, args.engine_ms, args.real_pages), daemon=True)
    standins.start()
    try:
        urls = ours.recv()
        report = [served(store, args.workers, args.rounds, args.concurrency, urls, not args.fresh,
                         REAL_QUERY if args.real_pages else SYNTHETIC_QUERY)
                  for store in args.store.split(",")]
    finally:
        ours.send("stop")
        standins.join(10)
    print(json.dumps({"command": " ".join(["python scripts/load.py", *sys.argv[1:]]), "engine_ms": args.engine_ms,
                      "engines": list(urls), "runs": report}, indent=2))
    clean = all(r["empty_answers"] == 0 and r["false_timeouts"] == 0 and r["never_asked"] == 0 and r["benched"] == 0
                and r["http_errors"] == 0 for run in report for r in run["rounds"])
    return 0 if clean else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help="burst `metasearch serve --workers N` over HTTP")
    parser.add_argument("--workers", type=int, default=2, help="--serve: worker processes")
    parser.add_argument("--rounds", type=int, default=2, help="--serve: bursts per store")
    parser.add_argument("--store", default="sqlite,memory", help="--serve: state stores to run, in order")
    parser.add_argument("--engine-ms", type=int, default=100, help="--serve: the stand-in engines' latency")
    parser.add_argument("--fresh", action="store_true", help="--serve: new queries every round (no cache hits)")
    parser.add_argument("--real-pages", action="store_true",
                        help="--serve: the stand-ins replay real pages from ../shared/serp-corpus")
    args = parser.parse_args()
    if args.real_pages and not CORPUS.is_dir():
        parser.error(f"--real-pages needs the real-page corpus at {CORPUS} (METASEARCH_CORPUS, or ../shared)")
    if args.serve:
        return main_served(args)
    result = asyncio.run(main_async(args.concurrency, args.total))
    print(json.dumps(result, indent=2))
    ok = (result["completed_with_rows"] == result["searches"]
          and result["peak_open_connections"] <= result["pool_limit"]
          and result["rss_growth_mb"] <= 10)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
