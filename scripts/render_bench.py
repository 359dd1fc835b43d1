#!/usr/bin/env python3
"""What rendering a page with Chromium costs, next to a plain read (issue 27, item 4).

    python scripts/render_bench.py [--runs 10] [--gap 0.5] [--json]

A loopback server on 127.0.0.1 (its own process, so its work is not counted as ours) serves an app shell
whose script fetches its article as JSON from the same server, and a plain article. Measured, each read
through `Reader.fetch` with the page cache off (every read fetches, renders and extracts again):
- plain: the article, `render=auto` (no shell found, no browser): wall time and our CPU time;
- cold: the shell's first read in a fresh reader, the browser started by it: wall time, and the
  renderer's own share (`Renderer.render`);
- warm: the shell's next reads, the browser up (a pause of `--gap` seconds between reads, as reads come
  in use, lets the next blank page be made ready): wall time and the render's share, median and 90th
  percentile; the CPU time per read of this process and of the browser's processes (every process of its
  group, from /proc), and the browser's memory once warm (the sum of its processes' proportional set size,
  PSS, so that pages shared between them count once; RSS too);
- shell detection's own cost on the plain read: `build_document` with and without it, on the article
  and on the 121 articles of ../shared/article-corpus when present (CPU time per page).
Targets (issue 27): a warm render within 1.5 s, a cold one within 3 s, the plain read's cost unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SENTENCE = "The harbour board printed its tide tables every winter and sold them for a penny."
SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Tides</title>
<script src="/static/app.js" defer></script></head><body><div id="root"></div>
<noscript>You need to enable JavaScript to run this app.</noscript></body></html>"""
APP = """
fetch('/api/article.json').then(r => r.json()).then(data => {
  const root = document.getElementById('root');
  const h = document.createElement('h1'); h.textContent = data.title; root.appendChild(h);
  for (const text of data.paragraphs) { const p = document.createElement('p'); p.textContent = text; root.appendChild(p); }
});
"""
ARTICLE_JSON = json.dumps({"title": "Tide tables", "paragraphs": [
    SENTENCE + " Fishermen kept them folded in their coats until the paper fell apart in the spring rain.",
    "The board's own copies, bound by year, are the only complete run that remains of the printed tables, and they "
    "show the harbour silting up decade after decade as the river carried the hills down to the sea.",
    "Historians read them beside the lighthouse ledgers to date storms the newspapers never mentioned."]})


def serve():
    """The shell, its script and JSON, and a plain article, from a child process (plugin.bench.loopback)."""
    from pages import article_html

    from plugin.bench.loopback import LoopbackSite

    pages = {"/spa": ("text/html; charset=utf-8", SHELL.encode()),
             "/static/app.js": ("text/javascript", APP.encode()),
             "/api/article.json": ("application/json", ARTICLE_JSON.encode()),
             "/post": ("text/html; charset=utf-8", article_html().encode()),
             "/robots.txt": ("text/plain", b"User-agent: *\nDisallow:\n")}

    def answer(path: str) -> tuple[int, str, bytes]:
        found = pages.get(path.split("?")[0])
        return (200, *found) if found else (404, "text/plain", b"not found")

    return LoopbackSite(answer, keep_alive=True, own_process=True)


def group_usage(pgid: int) -> tuple[float, int, int]:
    """(CPU seconds, PSS bytes, RSS bytes) of every live process of the group."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu, pss, rss = 0.0, 0, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            for line in Path(f"/proc/{entry}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
        except (OSError, IndexError, ValueError):
            continue
    return cpu, pss, rss


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def own_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


async def measure(base: str, runs: int, gap: float) -> dict:
    from plugin.reading import render as render_module
    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_cache_ttl_s=0,
                        fetch_host_interval_ms=0, fetch_timeout_ms=60000)
    render_times: list[float] = []
    original = render_module.Renderer.render

    async def timed(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return await original(self, *args, **kwargs)
        finally:
            render_times.append(time.perf_counter() - started)

    render_module.Renderer.render = timed
    reader = Reader(settings)
    try:
        await reader.fetch(base + "/post")  # imports, robots.txt: not what is measured
        plain_wall, plain_cpu = [], []
        for _ in range(runs):
            cpu, started = own_cpu(), time.perf_counter()
            response = await reader.fetch(base + "/post")
            plain_wall.append(time.perf_counter() - started)
            plain_cpu.append(own_cpu() - cpu)
            assert not response.rendered and not response.may_require_js
        assert reader._renderer is None, "a plain article started the renderer"
        await reader.fetch(base + "/spa", render="never")  # the short-page extractors' imports: not the browser's
        rss_before = own_rss()

        started = time.perf_counter()
        cold = await reader.fetch(base + "/spa")
        cold_wall = time.perf_counter() - started
        cold_render = render_times[-1]
        if not cold.rendered or SENTENCE not in cold.content:
            raise SystemExit(f"the shell was not rendered: {cold.warnings}")
        browser = reader.renderer().browser()
        warm_wall, warm_render, warm_cpu, browser_cpu = [], [], [], []
        for _ in range(runs):
            await asyncio.sleep(gap)
            cpu, browser_before = own_cpu(), group_usage(browser.pid)[0]
            started = time.perf_counter()
            response = await reader.fetch(base + "/spa")
            warm_wall.append(time.perf_counter() - started)
            warm_render.append(render_times[-1])
            warm_cpu.append(own_cpu() - cpu)
            browser_cpu.append(group_usage(browser.pid)[0] - browser_before)
            assert response.rendered and SENTENCE in response.content, response.warnings
        await asyncio.sleep(gap)
        _, pss, rss = group_usage(browser.pid)
        version = browser.version
        rss_after = own_rss()
    finally:
        await reader.close()
        render_module.Renderer.render = original
    ms = lambda seconds: round(seconds * 1000, 1)  # noqa: E731
    return {
        "browser": version,
        "plain_read": {"median_ms": ms(statistics.median(plain_wall)), "p90_ms": ms(p90(plain_wall)),
                       "cpu_ms": ms(statistics.median(plain_cpu))},
        "cold_render": {"read_ms": ms(cold_wall), "render_ms": ms(cold_render)},
        "warm_render": {"read_median_ms": ms(statistics.median(warm_wall)), "read_p90_ms": ms(p90(warm_wall)),
                        "render_median_ms": ms(statistics.median(warm_render)),
                        "render_p90_ms": ms(p90(warm_render)),
                        "our_cpu_ms": ms(statistics.median(warm_cpu)),
                        "browser_cpu_ms": ms(statistics.median(browser_cpu))},
        "memory": {"browser_pss_mb": round(pss / 2**20, 1), "browser_rss_mb": round(rss / 2**20, 1),
                   "our_rss_added_mb": round((rss_after - rss_before) / 2**20, 1)},
        "runs": runs, "gap_s": gap,
    }


def detection_cost(corpus: Path | None) -> dict:
    """What looking for a shell adds to a plain read: `shell_signs` (as build_document calls it, with the
    main text's length) next to the extraction itself, CPU time per page."""
    from engines.base import Response
    from pages import article_html
    from plugin.reading.documents import build_document
    from plugin.reading.shells import shell_signs
    from plugin.settings import Settings

    settings = Settings()
    pages = [article_html()]
    if corpus is not None and (corpus / "html").is_dir():
        pages += [gzip.decompress(p.read_bytes()).decode("utf-8", "replace")
                  for p in sorted((corpus / "html").glob("*.html.gz"))]
    extract, detect, looked_at = 0.0, 0.0, 0
    for html in pages:
        response = Response(status=200, url="https://example.org/a", headers={"content-type": "text/html"},
                            body=b"", text=html)
        started = time.process_time()
        document = build_document(response, markdown=True, settings=settings, detect_shell=False)
        extract += time.process_time() - started
        started = time.process_time()
        for _ in range(5):
            shell_signs(html, len(document.content))
        detect += (time.process_time() - started) / 5
        looked_at += len(document.content) < 1500
    count = len(pages)
    return {"pages": count, "parsed_for_signs": looked_at, "extract_ms_per_page": round(extract / count * 1000, 2),
            "added_ms_per_page": round(detect / count * 1000, 2),
            "added_share": round(detect / extract, 4) if extract else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between warm reads (default 0.5)")
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "article-corpus"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from plugin.reading.chromium import find_chromium

    path, why = find_chromium(os.environ.get("METASEARCH_CHROMIUM") or None)
    if path is None:
        print(f"render_bench: {why}", file=sys.stderr)
        return 2
    with serve() as site:
        report = asyncio.run(measure(site.base, args.runs, args.gap))
    corpus = Path(args.corpus)
    report["shell_detection"] = detection_cost(corpus if corpus.exists() else None)
    report["chromium"] = path
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    plain, cold, warm, memory, detection = (report["plain_read"], report["cold_render"], report["warm_render"],
                                            report["memory"], report["shell_detection"])
    print(f"{report['browser']} ({path}), {args.runs} runs, {args.gap} s apart")
    print(f"plain read (article, no shell): {plain['median_ms']} ms median, {plain['p90_ms']} ms p90; "
          f"our CPU {plain['cpu_ms']} ms")
    print(f"cold render (browser started by the read): read {cold['read_ms']} ms, of which render "
          f"{cold['render_ms']} ms   [target 3000 ms]")
    print(f"warm render: read {warm['read_median_ms']} ms median, {warm['read_p90_ms']} ms p90; render "
          f"{warm['render_median_ms']} ms median, {warm['render_p90_ms']} ms p90   [target 1500 ms]")
    print(f"CPU per warm rendered read: ours {warm['our_cpu_ms']} ms, the browser's {warm['browser_cpu_ms']} ms")
    print(f"memory once warm: the browser {memory['browser_pss_mb']} MB PSS ({memory['browser_rss_mb']} MB RSS "
          f"summed over its processes); ours +{memory['our_rss_added_mb']} MB RSS")
    print(f"shell detection on a plain read: {detection['added_ms_per_page']} ms CPU per page on top of "
          f"{detection['extract_ms_per_page']} ms of extraction ({100 * detection['added_share']:.1f} %; "
          f"{detection['pages']} pages, {detection['parsed_for_signs']} short enough to be parsed for signs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
