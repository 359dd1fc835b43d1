#!/usr/bin/env python3
"""What a page read costs over the server's own time, end to end, on a loopback page of about 200 KB.

    python scripts/fetch_overhead.py [--corpus ../shared/article-corpus] [--runs 30] [--json]

A loopback server on 127.0.0.1 serves real article pages of 180-230 KB from the article corpus
(or a synthetic 200 KB article without it). For each page, alternately:
- the server's time: a bare aiohttp GET of the page on a warm connection, until the whole body is in;
- a read: `Reader.fetch(url)` (robots.txt verdict cached as in steady use, the page cache off so the
  page is fetched and extracted every time), until the FetchResponse is built.
The overhead is read minus bare GET, paired per run; the report gives its median and 90th percentile,
the CPU time of a read (what our work costs, steady when other processes share the cores, which
inflates wall-clock figures), and the first read of a fresh process (imports, robots.txt) separately.
The server runs in its own process (Python's http.server), so its work is not counted as ours. Also `metasearch fetch` as a
process, start-up included, for harnesses that spawn one per call. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def pages_about_200kb(corpus: Path) -> list[bytes]:
    found = []
    folder = corpus / "html"
    if folder.is_dir():
        for path in sorted(folder.glob("*.html.gz")):
            body = gzip.decompress(path.read_bytes())
            if 180_000 <= len(body) <= 230_000:
                found.append(body)
    if found:
        return found[:5]
    paragraphs = "".join(f"<p>Paragraph {i}: asynchronous programs interleave task {i} with {i * 7 % 13} others; "
                         f"the scheduler picks the next of {i % 17 + 2} ready tasks at await point {i}.</p>\n"
                         for i in range(1000))
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(200))
    body = (f"<html><head><title>Synthetic article</title></head><body><nav><ul>{nav}</ul></nav><article>"
            f"<h1>Synthetic article</h1>{paragraphs}</article><footer>Footer text</footer></body></html>")
    return [body.encode()]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class LoopbackServer:
    """A static file server in its own process on 127.0.0.1, so that its work is not counted as ours."""

    def __init__(self, pages: list[bytes]):
        self.folder = tempfile.TemporaryDirectory()
        for number, body in enumerate(pages):
            (Path(self.folder.name) / f"p{number}.html").write_bytes(body)
        (Path(self.folder.name) / "robots.txt").write_text("User-agent: *\nDisallow:\n")
        self.process = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1",
                                         "--directory", self.folder.name], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        self.base = f"http://127.0.0.1:{int(line.split('port ')[1].split(' ')[0])}"

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.folder.cleanup()


async def measure(server: LoopbackServer, pages: int, runs: int) -> dict:
    import aiohttp

    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_cache_ttl_s=0,
                        fetch_host_interval_ms=0)
    reader = Reader(settings)
    started = time.perf_counter()
    await reader.fetch(server.base + "/p0.html")
    first_ms = (time.perf_counter() - started) * 1000
    overheads, bare, reads, cpu = [], [], [], []
    async with aiohttp.ClientSession() as session:
        for run in range(runs):
            url = f"{server.base}/p{run % pages}.html"
            started = time.perf_counter()
            async with session.get(url) as response:
                await response.read()
            server_ms = (time.perf_counter() - started) * 1000
            started, started_cpu = time.perf_counter(), time.process_time()
            answer = await reader.fetch(url)
            cpu.append((time.process_time() - started_cpu) * 1000)
            read_ms = (time.perf_counter() - started) * 1000
            assert answer.total_chars > 0
            bare.append(server_ms)
            reads.append(read_ms)
            overheads.append(read_ms - server_ms)
    await reader.close()
    return {"runs": runs, "server_ms_median": round(statistics.median(bare), 1),
            "read_ms_median": round(statistics.median(reads), 1),
            "overhead_ms_median": round(statistics.median(overheads), 1),
            "overhead_ms_p90": round(percentile(overheads, 0.9), 1),
            "read_cpu_ms_median": round(statistics.median(cpu), 1),
            "read_cpu_ms_p90": round(percentile(cpu, 0.9), 1),
            "first_read_ms": round(first_ms, 1)}


async def transports(server: LoopbackServer, pages: int, runs: int) -> dict:
    """CPU time of a read (extraction included) on the browser transport beside the plain one, reads
    alternated between them in one run (issue 26: at most 1.2 times the plain path's)."""
    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    readers = {kind: Reader(Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_cache_ttl_s=0,
                                     fetch_host_interval_ms=0, transport=kind)) for kind in ("browser", "plain")}
    cpu: dict[str, list[float]] = {kind: [] for kind in readers}
    try:
        for reader in readers.values():
            await reader.fetch(server.base + "/p0.html")  # warm: imports, robots.txt, the connection
        for run in range(runs):
            for kind in (("browser", "plain") if run % 2 == 0 else ("plain", "browser")):
                started = time.process_time()
                answer = await readers[kind].fetch(f"{server.base}/p{run % pages}.html")
                cpu[kind].append((time.process_time() - started) * 1000)
                assert answer.total_chars > 0
    finally:
        for reader in readers.values():
            await reader.close()
    medians = {kind: statistics.median(values) for kind, values in cpu.items()}
    return {"transport_runs": runs, **{f"{kind}_read_cpu_ms_median": round(m, 1) for kind, m in medians.items()},
            "browser_over_plain": round(medians["browser"] / medians["plain"], 3)}


def cli_overhead(server: LoopbackServer, runs: int) -> dict:
    """`metasearch fetch` as a process (start-up included) against the same server."""
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", "METASEARCH_STATE_DIR": state,
               "METASEARCH_FETCH_CACHE_TTL_S": "0", "PYTHONPATH": str(ROOT)}
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "plugin.surfaces.cli", "fetch", server.base + "/p0.html",
                            "--json"], env=env, check=True, capture_output=True)
            times.append((time.perf_counter() - started) * 1000)
    return {"cli_runs": runs, "cli_ms_median": round(statistics.median(times), 1),
            "cli_ms_p90": round(percentile(times, 0.9), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "article-corpus"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--transports", action="store_true",
                        help="also the CPU of a read on the browser transport beside the plain one, alternated")
    args = parser.parse_args()
    pages = pages_about_200kb(Path(args.corpus))
    server = LoopbackServer(pages)
    try:
        report = {"pages": len(pages), "page_bytes": [len(p) for p in pages],
                  "load_average": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count()}
        report.update(asyncio.run(measure(server, len(pages), args.runs)))
        if args.cli_runs:
            report.update(cli_overhead(server, args.cli_runs))
        if args.transports:
            report.update(asyncio.run(transports(server, len(pages), args.runs)))
    finally:
        server.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['pages']} page(s) of {', '.join(str(b // 1000) for b in report['page_bytes'])} KB, "
              f"{report['runs']} paired runs on 127.0.0.1")
        print(f"server's time (bare GET) median {report['server_ms_median']} ms; read median "
              f"{report['read_ms_median']} ms")
        print(f"overhead of a read over the server's time: median {report['overhead_ms_median']} ms, "
              f"p90 {report['overhead_ms_p90']} ms (load average {report['load_average'][0]} on "
              f"{report['cores']} cores)")
        print(f"CPU time of a read (our work, all threads): median {report['read_cpu_ms_median']} ms, "
              f"p90 {report['read_cpu_ms_p90']} ms")
        print(f"first read in a fresh process (imports, robots.txt): {report['first_read_ms']} ms")
        if "browser_over_plain" in report:
            print(f"CPU of a read, browser transport {report['browser_read_cpu_ms_median']} ms, plain "
                  f"{report['plain_read_cpu_ms_median']} ms (median of {report['transport_runs']} each, alternated): "
                  f"{report['browser_over_plain']}x")
        if "cli_ms_median" in report:
            print(f"metasearch fetch as a process, start-up included: median {report['cli_ms_median']} ms, "
                  f"p90 {report['cli_ms_p90']} ms ({report['cli_runs']} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
