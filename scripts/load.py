#!/usr/bin/env python3
"""Load benchmark (not a test): many concurrent searches through one process against loopback engines.

    python scripts/load.py [--concurrency 200] [--total 1000] [--json]

Three stand-in engines on 127.0.0.1 answer after realistic latencies (50-400 ms,
random). Searches run in waves of --concurrency at once until --total have run.
Reported: that every search completed with rows, the most connections the
pool held open at once (as the kernel counts them, sampled every 5 ms) against the pool limit, latency
percentiles, and RSS after 100 searches and after --total searches (no leak:
the difference should stay within 10 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
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


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main_async(args.concurrency, args.total))
    print(json.dumps(result, indent=2))
    ok = (result["completed_with_rows"] == result["searches"]
          and result["peak_open_connections"] <= result["pool_limit"]
          and result["rss_growth_mb"] <= 10)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
