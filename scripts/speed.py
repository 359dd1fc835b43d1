#!/usr/bin/env python3
"""Speed benchmarks (not tests): parser CPU time on real pages, and the pipeline's own overhead.

    python scripts/speed.py [--corpus ../shared/serp-corpus] [--runs 200] [--json]
    python scripts/speed.py --transports [--searches 200]     # browser transport beside the plain one
    python scripts/speed.py --drift 1000                        # RSS drift per 1,000 searches, each transport

1. CPU time (time.process_time) to parse one real Bing page and one DuckDuckGo
   HTML page with our selectolax parsers, median over --runs; the same
   extraction written with lxml (XPath) timed side by side in the same run.
2. Pipeline overhead: three loopback stand-in engines each answer after a fixed
   delay; overhead = search wall time - the slowest engine's delay, median over
   --searches searches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from engines import ENGINES  # noqa: E402
from engines.base import Headers, Response, SearchOptions  # noqa: E402
from engines.redirects import unwrap  # noqa: E402

PAGES = {
    "bing": "bing/websearchmcp__javascript-tutorial.html",
    "duckduckgo-html": "duckduckgo-html/scrapecraft__artificial-intelligence-trends.html",
}


def lxml_bing(text: str) -> list[tuple[str, str, str]]:
    import lxml.html

    tree = lxml.html.fromstring(text)
    rows = []
    for block in tree.xpath('//li[contains(concat(" ", normalize-space(@class), " "), " b_algo ")]'):
        links = block.xpath(".//h2//a[@href] | .//h2/ancestor::a[@href]")
        if not links:
            continue
        title = " ".join(block.xpath("string(.//h2)").split())
        snippet = " ".join(block.xpath('string(.//div[contains(@class,"b_caption")]//p)').split())
        rows.append((title, unwrap(links[0].get("href")), snippet))
    return rows


def lxml_ddg(text: str) -> list[tuple[str, str, str]]:
    import lxml.html

    tree = lxml.html.fromstring(text)
    rows = []
    for block in tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " result ")]'):
        if "result--ad" in (block.get("class") or ""):
            continue
        links = block.xpath('.//a[contains(@class,"result__a")]')
        if not links:
            continue
        snippet = " ".join(block.xpath('string(.//*[contains(@class,"result__snippet")])').split())
        rows.append((" ".join(links[0].text_content().split()), unwrap(links[0].get("href")), snippet))
    return rows


def cpu_median(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return statistics.median(samples) * 1000


def parse_benchmark(corpus: Path, runs: int) -> dict:
    results = {}
    for engine, rel in PAGES.items():
        body = (corpus / rel).read_bytes()
        text = body.decode("utf-8")
        response = Response(200, "https://www.bing.com/search", Headers({}), body, text)
        ours = ENGINES[engine].parse(response, "", SearchOptions())
        other = (lxml_bing if engine == "bing" else lxml_ddg)(text)
        results[engine] = {
            "page": rel, "bytes": len(body), "rows_ours": len(ours.rows), "rows_lxml": len(other),
            "selectolax_ms_median": round(cpu_median(lambda: ENGINES[engine].parse(response, "", SearchOptions()),
                                                     runs), 3),
            "lxml_ms_median": round(cpu_median(lambda: (lxml_bing if engine == "bing" else lxml_ddg)(text), runs), 3),
        }
        results[engine]["lxml_over_selectolax"] = round(
            results[engine]["lxml_ms_median"] / results[engine]["selectolax_ms_median"], 2)
    return results


async def overhead_benchmark(searches: int, delay: float, state_factory=None, budgets: bool = False) -> dict:
    from standins import StandIn, bing_page, ddg_page, page

    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings
    from plugin.infra.state import MemoryState

    rows = [(f"Python asyncio result {i}", f"https://site{i}.example.org/asyncio", "python asyncio gather")
            for i in range(10)]
    servers = {
        "bing": await StandIn(page(bing_page(rows), delay=delay)).start(),
        "bing-cn": await StandIn(page(bing_page(rows[::-1]), delay=delay / 2)).start(),
        "duckduckgo-html": await StandIn(page(ddg_page(rows), delay=delay / 4)).start(),
    }
    # No cache (every search must reach the engines); budgets only when measuring a state store.
    settings = Settings(endpoints={n: s.url for n, s in servers.items()}, engines=list(servers),
                        budget_per_minute={n: 10**6 for n in servers} if budgets else {}, cache_ttl_s=0)
    searcher = Searcher(settings, state=state_factory() if state_factory else MemoryState())
    overheads = []
    try:
        await searcher.search("python asyncio gather")  # warm the connection pool
        for _ in range(searches):
            start = time.perf_counter()
            response = await searcher.search("python asyncio gather")
            overheads.append((time.perf_counter() - start - delay) * 1000)
            assert len(response.results) == 8
    finally:
        await searcher.close()
        for server in servers.values():
            await server.stop()
    return {"searches": searches, "slowest_engine_delay_ms": delay * 1000,
            "overhead_ms_median": round(statistics.median(overheads), 2),
            "overhead_ms_p90": round(sorted(overheads)[int(0.9 * len(overheads)) - 1], 2)}


async def state_benchmark(searches: int, delay: float, redis_url: str | None) -> dict:
    """Median search overhead per state store, side by side in one run (cooldowns and budgets on)."""
    import shutil
    import subprocess
    import tempfile

    from plugin.infra.state import MemoryState, RedisState, SqliteState

    tmp = Path(tempfile.mkdtemp(prefix="metasearch-speed-"))
    stores = {"memory": MemoryState, "sqlite": lambda: SqliteState(tmp / "state.sqlite3")}
    server = None
    if redis_url is None and shutil.which("redis-server"):
        server = subprocess.Popen(["redis-server", "--port", "6398", "--save", "", "--appendonly", "no"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        redis_url = "redis://127.0.0.1:6398/0"
    if redis_url:
        stores["redis"] = lambda: RedisState(redis_url)
    results = {}
    try:
        for name, factory in stores.items():
            measured = await overhead_benchmark(searches, delay, factory, budgets=True)
            results[name] = {"overhead_ms_median": measured["overhead_ms_median"],
                             "overhead_ms_p90": measured["overhead_ms_p90"]}
        for name in results:
            results[name]["added_over_memory_ms"] = round(
                results[name]["overhead_ms_median"] - results["memory"]["overhead_ms_median"], 2)
    finally:
        if server:
            server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


# ----- the two transports, side by side (issue 26) -----
# Six engines, each answering its real recorded page over TLS (HTTP/2 where the client offers it), served by
# another process so that its work is not counted as ours.
TRANSPORT_PAGES = {
    "bing": "bing/websearchmcp__javascript-tutorial.html",
    "brave": "brave/websearchmcp__javascript-tutorial.html",
    "mojeek": "mojeek/websearchmcp__javascript-tutorial.html",
    "yahoo": "yahoo/websearchmcp__javascript-tutorial.html",
    "duckduckgo-html": "duckduckgo-html/scrapecraft__artificial-intelligence-trends.html",
    "bing-cn": "bing/kaiz__onimai-wiki.html",
}
SERVER = """
import asyncio, json, os, ssl, sys
from aiohttp import web
folder, cert, key = sys.argv[1:4]
def app_for(path):
    async def page(request):
        return web.FileResponse(path, headers={"Content-Type": "text/html; charset=utf-8"})
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    return app
async def main():
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    ports = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".html"):
            runner = web.AppRunner(app_for(os.path.join(folder, name)))
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
            await site.start()
            ports[name[:-5]] = site._server.sockets[0].getsockname()[1]
    print(json.dumps(ports), flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


def start_pages(corpus: Path) -> tuple[object, str, dict[str, str]]:
    """(the server process, the CA bundle, engine -> endpoint): each engine's recorded page on a TLS port of its
    own (an endpoint replaces scheme, host and port only), in a process of its own."""
    import subprocess
    import tempfile

    import trustme

    folder = tempfile.mkdtemp(prefix="metasearch-speed-")
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    issued.cert_chain_pems[0].write_to_path(f"{folder}/cert.pem")
    issued.private_key_pem.write_to_path(f"{folder}/key.pem")
    ca.cert_pem.write_to_path(f"{folder}/ca.pem")
    for engine, rel in TRANSPORT_PAGES.items():
        Path(folder, f"{engine}.html").write_bytes((corpus / rel).read_bytes())
    server = subprocess.Popen([sys.executable, "-c", SERVER, folder, f"{folder}/cert.pem", f"{folder}/key.pem"],
                              stdout=subprocess.PIPE, text=True)
    ports = json.loads(server.stdout.readline())
    return server, f"{folder}/ca.pem", {engine: f"https://127.0.0.1:{port}" for engine, port in ports.items()}


async def transport_benchmark(corpus: Path, searches: int) -> dict:
    """CPU (time.process_time) per warm six-engine search, and per search RSS growth, for each transport,
    alternating searches between them in one run."""
    import resource

    from plugin.infra.state import MemoryState
    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings

    server, bundle, endpoints = start_pages(corpus)
    searchers = {}
    try:
        for kind in ("browser", "plain"):
            settings = Settings(endpoints=endpoints, engines=list(TRANSPORT_PAGES), cache_ttl_s=0,
                                ca_bundle=bundle, transport=kind, state_backend="memory",
                                tiers={engine: "primary" for engine in TRANSPORT_PAGES},
                                budget_per_minute={engine: 0 for engine in TRANSPORT_PAGES})
            searchers[kind] = Searcher(settings, state=MemoryState())
            for _ in range(3):  # warm: connections open, caches full
                answer = await searchers[kind].search("javascript tutorial")
            statuses = {report.name: report.status for report in answer.engines}
        cpu = {kind: [] for kind in searchers}
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for i in range(searches):
            for kind in (("browser", "plain") if i % 2 == 0 else ("plain", "browser")):
                started = time.process_time()
                await searchers[kind].search("javascript tutorial")
                cpu[kind].append((time.process_time() - started) * 1000)
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    finally:
        for searcher in searchers.values():
            await searcher.close()
        server.terminate()
        server.wait()
    result = {kind: {"cpu_ms_median": round(statistics.median(values), 2),
                     "cpu_ms_p90": round(sorted(values)[int(0.9 * len(values)) - 1], 2)} for kind, values in cpu.items()}
    result["browser_over_plain"] = round(result["browser"]["cpu_ms_median"] / result["plain"]["cpu_ms_median"], 3)
    result["searches_each"] = searches
    result["engine_statuses"] = statuses
    result["max_rss_growth_mb_during_both"] = round((rss_after - rss_before) / 1024, 1)
    return result


async def drift_benchmark(corpus: Path, searches: int, transport: str) -> dict:
    """RSS (current, /proc) after 100 warm searches and after `searches` more, on one transport."""
    from plugin.infra.state import MemoryState
    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings

    def rss_mb() -> float:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6

    server, bundle, endpoints = start_pages(corpus)
    settings = Settings(endpoints=endpoints, engines=list(TRANSPORT_PAGES), cache_ttl_s=0, ca_bundle=bundle,
                        transport=transport, state_backend="memory",
                        tiers={engine: "primary" for engine in TRANSPORT_PAGES}, budget_per_minute={engine: 0 for engine in TRANSPORT_PAGES})
    searcher = Searcher(settings, state=MemoryState())
    try:
        # One query over and over (the result cache off): what a search leaves behind in the transport and the
        # pipeline, not the state store's memory of distinct queries (their page memory, bounded apart).
        for _ in range(100):
            await searcher.search("javascript tutorial")
        before = rss_mb()
        for _ in range(searches):
            await searcher.search("javascript tutorial")
        after = rss_mb()
    finally:
        await searcher.close()
        server.terminate()
        server.wait()
    return {"transport": transport, "searches": searches, "rss_mb_after_100": round(before, 1),
            "rss_mb_after_more": round(after, 1), "drift_mb": round(after - before, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "serp-corpus"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--searches", type=int, default=50)
    parser.add_argument("--delay-ms", type=float, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--state", action="store_true",
                        help="also measure the added latency of the embedded store and of Redis per search")
    parser.add_argument("--redis-url", help="a Redis to measure (default: start redis-server if installed)")
    parser.add_argument("--transports", action="store_true",
                        help="CPU per warm six-engine search on the browser transport beside the plain one (TLS, "
                             "real recorded pages), --searches each, alternated")
    parser.add_argument("--drift", type=int, metavar="N",
                        help="RSS after N more searches than 100 warm ones, on each transport (one after the other)")
    args = parser.parse_args()
    if args.transports or args.drift:
        result = {}
        if args.transports:
            result["transports"] = asyncio.run(transport_benchmark(Path(args.corpus), args.searches))
        if args.drift:  # each transport in a process of its own, so that one's heap is not the other's baseline
            import subprocess

            result["drift"] = []
            for kind in ("browser", "plain"):
                code = (f"import asyncio, json, sys; sys.path.insert(0, {str(ROOT / 'scripts')!r}); import speed; "
                        f"from pathlib import Path; print(json.dumps(asyncio.run(speed.drift_benchmark("
                        f"Path({args.corpus!r}), {args.drift}, {kind!r}))))")
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
                result["drift"].append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(result, indent=2))
        return 0
    result = {}
    if Path(args.corpus).is_dir():
        result["parse"] = parse_benchmark(Path(args.corpus), args.runs)
    else:
        result["parse"] = f"skipped: corpus not found at {args.corpus}"
    result["pipeline"] = asyncio.run(overhead_benchmark(args.searches, args.delay_ms / 1000))
    if args.state:
        result["state_stores"] = asyncio.run(state_benchmark(args.searches, args.delay_ms / 1000, args.redis_url))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
