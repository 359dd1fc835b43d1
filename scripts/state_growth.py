#!/usr/bin/env python3
"""State growth benchmark (not a test): what 1,000 distinct searches leave in a long-lived process.

    python scripts/state_growth.py [--searches 1000] [--store memory,sqlite] [--json]

Stand-in engines on 127.0.0.1 (a process of their own) replay real result pages of one query from
../shared/serp-corpus (METASEARCH_CORPUS) for bing, brave, mojeek, startpage and yahoo, all five in the
primary tier (synthetic pages of the same size when the corpus is absent). Each store runs in a fresh
process with the default settings otherwise (the answer cache on for 300 s, page memory for an hour,
`state_max_bytes` at its default): warm-up searches, then --searches distinct queries one after another.

Reported per store: the process's RSS growth over the distinct searches (after a garbage collection),
for SQLite the size of the store file (state.sqlite3 with its -wal, after the writes are committed),
how full the store says it is (`usage()`: the bytes it counts against `state_max_bytes`, entries), and
the page memory and cached answers one search keeps. Target (issue 29, item 23): at most 10 MB of RSS
and at most 10 MB of store file per 1,000 distinct searches at the defaults. Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from plugin.bench.process import rss_mb  # noqa: E402

CORPUS = Path(os.environ.get("METASEARCH_CORPUS", ROOT.parent / "shared" / "serp-corpus"))
ENGINES = ("bing", "brave", "mojeek", "startpage", "yahoo")
REAL_PAGE = "websearchmcp__javascript-tutorial.html"
QUERY = "javascript tutorial"
TARGET_MB = 10.0
WARM_UP = 30


def _bodies() -> tuple[dict[str, bytes], str]:
    if all((CORPUS / engine / REAL_PAGE).exists() for engine in ENGINES):
        return {engine: (CORPUS / engine / REAL_PAGE).read_bytes() for engine in ENGINES}, "real corpus pages"
    from standins import bing_page

    rows = [(f"JavaScript tutorial part {i}: functions, closures and the event loop",
             f"https://site{i}.example.org/learn/javascript/tutorial/part-{i}",
             "A javascript tutorial for beginners and working developers. " * 4) for i in range(10)]
    # Bing's markup for every engine: each stand-in is asked as bing (see _settings).
    return {engine: bing_page(rows[i % 3:] + rows[:i % 3]).encode() for i, engine in enumerate(ENGINES)}, \
        "synthetic pages (corpus absent)"


def _standins_process(conn, bodies: dict[str, bytes]) -> None:
    from standins import StandIn, page

    async def run() -> None:
        servers = {name: await StandIn(page(body)).start() for name, body in bodies.items()}
        conn.send({name: server.url for name, server in servers.items()})
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # until told to stop
        for server in servers.values():
            await server.stop()

    asyncio.run(run())


def _dir_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.glob("state.sqlite3*"))


def _one_store(conn, store: str, urls: dict[str, str], searches: int) -> None:
    """One store, in a process of its own (a clean RSS)."""
    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings

    async def run() -> dict:
        with tempfile.TemporaryDirectory(prefix="metasearch-growth-") as state_dir:
            engines = list(urls)
            settings = Settings(endpoints=urls, engines=engines, tiers={name: "primary" for name in engines},
                                state_backend=store, state_dir=state_dir, budget_per_minute={})
            async with Searcher(settings) as searcher:
                rows = 0
                for i in range(WARM_UP):
                    await searcher.search(f"{QUERY} warm up {i}")
                await _settle(searcher)
                rss_before, bytes_before = rss_mb(), _dir_bytes(Path(state_dir))
                started = time.perf_counter()
                for i in range(searches):
                    response = await searcher.search(f"{QUERY} {i}")
                    rows += len(response.results)
                elapsed = time.perf_counter() - started
                await _settle(searcher)
                rss_after, bytes_after = rss_mb(), _dir_bytes(Path(state_dir))
                usage = await searcher.state.usage()
                one = await _one_search_footprint(searcher, f"{QUERY} {searches - 1}")
            return {
                "store": store,
                "searches": searches,
                "rows_per_search": round(rows / searches, 1),
                "seconds": round(elapsed, 1),
                "rss_mb_before": round(rss_before, 1),
                "rss_mb_after": round(rss_after, 1),
                "rss_growth_mb": round(rss_after - rss_before, 1),
                "store_file_mb": round(bytes_after / 1e6, 1) if store == "sqlite" else None,
                "store_file_growth_mb": round((bytes_after - bytes_before) / 1e6, 1) if store == "sqlite" else None,
                "usage": usage,
                "one_search": one,
            }

    conn.send(asyncio.run(run()))


async def _settle(searcher) -> None:
    flush = getattr(searcher.state, "flush", None)
    if flush is not None:
        await flush()
    gc.collect()


async def _one_search_footprint(searcher, query: str) -> dict:
    """The bytes one search keeps: its page memory and its engines' cached answers (their values)."""
    from plugin.pipeline import pages
    from plugin.pipeline.answers import answer_key

    plan = searcher.plan(query)
    memory = await searcher.state.cache_get(pages._slot(searcher.query_key(plan), 1))
    answers = 0
    for engine in searcher.selected_engines(None):
        from plugin.pipeline.plan import engine_options

        found = await searcher.state.cache_get(answer_key(searcher.settings, engine, query,
                                                          engine_options(searcher.settings, engine, plan)))
        answers += len(found.encode()) if found else 0
    return {"page_memory_bytes": len(memory.encode()) if memory else 0, "cached_answer_bytes": answers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--store", default="memory,sqlite", help="stores to run, in order")
    parser.add_argument("--json", action="store_true", help="only the JSON report")
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    bodies, pages_used = _bodies()
    ours, theirs = context.Pipe()
    standins = context.Process(target=_standins_process, args=(theirs, bodies), daemon=True)
    standins.start()
    runs = []
    try:
        urls = ours.recv()
        for store in args.store.split(","):
            mine, child_end = context.Pipe()
            child = context.Process(target=_one_store, args=(child_end, store, urls, args.searches))
            child.start()
            runs.append(mine.recv())
            child.join(60)
    finally:
        ours.send("stop")
        standins.join(10)
    scale = 1000 / args.searches
    for run in runs:
        run["rss_growth_mb_per_1000"] = round(run["rss_growth_mb"] * scale, 1)
        if run["store_file_growth_mb"] is not None:
            run["store_file_mb_per_1000"] = round(run["store_file_growth_mb"] * scale, 1)
    report = {"command": " ".join(["python scripts/state_growth.py", *sys.argv[1:]]), "pages": pages_used,
              "engines": list(ENGINES), "target_mb_per_1000": TARGET_MB, "runs": runs}
    print(json.dumps(report, indent=2))
    met = all(run["rss_growth_mb_per_1000"] <= TARGET_MB
              and (run.get("store_file_mb_per_1000") or 0) <= TARGET_MB for run in runs)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
