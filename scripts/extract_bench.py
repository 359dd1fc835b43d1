#!/usr/bin/env python3
"""Main-text extraction on the article corpus: our extractor beside trafilatura's defaults and beside the
whole page's visible text.

    python scripts/extract_bench.py --corpus ../shared/article-corpus [--json] [--bootstrap 1000] [--check-floors]

Protocol (the public article-extraction benchmark's, as its PROVENANCE.md describes it): each page's
predicted text and its human-written main text are split into tokens (`\\w+`), tokens into shingles of
4, shingles counted as multisets; per page, true positives, false positives and false negatives are
normalised to sum to 1; precision and recall are the means over pages (pages without predicted or
without true shingles skipped), F1 their harmonic mean. The interval is a 95% bootstrap over pages;
differences between two extractors come from a paired bootstrap (the same resampled pages for both).
Time per page is the extraction alone (the HTML is already decoded), median and 90th percentile, as
CPU time of the extracting thread (`cpu_ms`: what the work costs, steady on a shared machine) and as
wall-clock time (`wall_ms`: what a caller waits, inflated when other processes take the cores).

"ours" is `plugin.reading.extract.extract_html` (the Markdown that `metasearch fetch` returns);
"trafilatura" is `trafilatura.extract(html)` with every default; "whole-page" is the page's visible
text (`plugin.reading.extract.visible_text`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKEN = re.compile(r"\w+")
SHINGLE = 4
Counts = tuple[float, float, float]  # tp, fp, fn, normalised per page


def shingles(text: str) -> Counter:
    tokens = TOKEN.findall(text or "")
    return Counter(tuple(tokens[i:i + SHINGLE]) for i in range(max(1, len(tokens) - SHINGLE + 1))
                   if tokens[i:i + SHINGLE])


def page_counts(truth: str, predicted: str) -> Counts:
    true, pred = shingles(truth), shingles(predicted)
    tp = sum((true & pred).values())
    fp = sum((pred - true).values())
    fn = sum((true - pred).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fp == 0 else tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fn == 0 else tp / (tp + fn)


def scores(counts: Sequence[Counts]) -> dict[str, float]:
    precision = statistics.mean([_precision(*c) for c in counts if c[0] + c[1] > 0] or [0.0])
    recall = statistics.mean([_recall(*c) for c in counts if c[0] + c[2] > 0] or [0.0])
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}


def bootstrap(counts: Sequence[Counts], samples: int, rng: random.Random,
              other: Sequence[Counts] | None = None) -> dict[str, tuple[float, float]]:
    """95% interval of each metric (of the difference to `other`, paired, when given)."""
    n = len(counts)
    drawn: dict[str, list[float]] = {"f1": [], "precision": [], "recall": []}
    for _ in range(samples):
        picks = [rng.randrange(n) for _ in range(n)]
        mine = scores([counts[i] for i in picks])
        theirs = scores([other[i] for i in picks]) if other is not None else None
        for key in drawn:
            drawn[key].append(mine[key] - (theirs[key] if theirs else 0.0))
    interval = {}
    for key, values in drawn.items():
        values.sort()
        interval[key] = (values[int(0.025 * samples)], values[min(samples - 1, int(0.975 * samples))])
    return interval


def load_corpus(folder: Path) -> list[tuple[str, str, str, str]]:
    """(id, url, html, true main text) for every page of the corpus."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key in sorted(truth):
        html = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes()).decode("utf-8", "replace")
        pages.append((key, truth[key].get("url") or "", html, truth[key].get("articleBody") or ""))
    return pages


def extractors() -> dict[str, Callable[[str, str], str]]:
    import trafilatura

    from plugin.reading.extract import extract_html, parse_html, visible_text
    from plugin.settings import Settings

    fallback = Settings().fetch_fallback_min_chars
    return {
        "ours": lambda html, url: extract_html(html, url=url or None, fallback_min_chars=fallback).content,
        "trafilatura": lambda html, url: trafilatura.extract(html) or "",
        "whole-page": lambda html, url: visible_text(parse_html(html)),
    }


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1)


def run(folder: Path, samples: int = 1000, seed: int = 13, names: Sequence[str] | None = None) -> dict:
    pages = load_corpus(folder)
    rng = random.Random(seed)
    chosen = {name: fn for name, fn in extractors().items() if not names or name in names}
    results: dict[str, dict] = {}
    per_page: dict[str, list[Counts]] = {}
    for name, extract in chosen.items():
        extract(pages[0][2], pages[0][1])  # first call pays for imports and caches, not page one
        counts, times, cpu = [], [], []
        for _, url, html, truth in pages:
            started, started_cpu = time.perf_counter(), time.thread_time()
            predicted = extract(html, url)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            times.append((time.perf_counter() - started) * 1000)
            counts.append(page_counts(truth, predicted))
        per_page[name] = counts
        interval = bootstrap(counts, samples, rng)
        results[name] = {**{k: round(v, 4) for k, v in scores(counts).items()},
                         **{f"{k}_95": [round(low, 4), round(high, 4)] for k, (low, high) in interval.items()},
                         "cpu_ms_median": round(statistics.median(cpu), 1), "cpu_ms_p90": _p90(cpu),
                         "wall_ms_median": round(statistics.median(times), 1), "wall_ms_p90": _p90(times)}
    differences = {}
    if "ours" in per_page:
        for other in per_page:
            if other == "ours":
                continue
            mine, theirs = scores(per_page["ours"]), scores(per_page[other])
            interval = bootstrap(per_page["ours"], samples, rng, other=per_page[other])
            differences[f"ours - {other}"] = {
                k: {"difference": round(mine[k] - theirs[k], 4), "95": [round(a, 4), round(b, 4)]}
                for k, (a, b) in interval.items()}
    return {"corpus": str(folder), "pages": len(pages), "bootstrap": samples, "seed": seed,
            "load_average": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count(),
            "extractors": results, "differences": differences}


def render(report: dict) -> str:
    lines = [f"{report['pages']} pages from {report['corpus']}; shingle F1 with 95% bootstrap intervals "
             f"({report['bootstrap']} resamples over pages); time is CPU ms per page, wall clock in brackets "
             f"(load average {report['load_average'][0]} on {report['cores']} cores)", "",
             f"{'extractor':<12} {'F1':>22} {'precision':>22} {'recall':>22}  {'ms/page median/p90':>18}"
             f"  {'(wall clock)':>14}"]
    for name, r in report["extractors"].items():
        cells = [f"{r[k]:.3f} [{r[k + '_95'][0]:.3f}, {r[k + '_95'][1]:.3f}]" for k in ("f1", "precision", "recall")]
        lines.append(f"{name:<12} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}  "
                     f"{str(r['cpu_ms_median']) + ' / ' + str(r['cpu_ms_p90']):>18}  "
                     f"{'(' + str(r['wall_ms_median']) + ' / ' + str(r['wall_ms_p90']) + ')':>14}")
    if report["differences"]:
        lines.append("")
        lines.append("paired differences (95% bootstrap interval):")
        for pair, d in report["differences"].items():
            lines.append(f"  {pair:<26} " + "  ".join(
                f"{k} {v['difference']:+.3f} [{v['95'][0]:+.3f}, {v['95'][1]:+.3f}]" for k, v in d.items()))
    return "\n".join(lines)


def long_page_cost(counts: Sequence[int] = (2000, 8000)) -> dict:
    """CPU of extraction and of the split-body check (`plugin.reading.split_body`) on one-container articles
    of `counts` paragraphs (~100 characters each): the check must grow with the page, as extraction does,
    not with its paragraphs times its length."""
    from trafilatura import bare_extraction

    from plugin.reading.extract import parse_html
    from plugin.reading.split_body import merged_body_tree

    rows = {}
    for count in counts:
        paragraphs = "".join(f"<p>Paragraph {i} tells of the harbour town and its sea wall, rebuilt in stone after "
                             f"storm number {i}.</p>" for i in range(count))
        tree = parse_html(f"<html><body><article><div class='body'>{paragraphs}</div></article></body></html>")
        started = time.process_time()
        document = bare_extraction(tree, include_comments=False, include_tables=True, include_formatting=True)
        extracted = time.process_time()
        merged_body_tree(tree, document.body)
        checked = time.process_time()
        rows[count] = {"extraction_ms": round((extracted - started) * 1000, 1),
                       "split_check_ms": round((checked - extracted) * 1000, 1)}
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "article-corpus"))
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--extractors", help="comma-separated subset of ours,trafilatura,whole-page")
    parser.add_argument("--check-floors", action="store_true",
                        help="exit 1 when ours falls below bench/extract-floors.json")
    parser.add_argument("--long-page", action="store_true",
                        help="only the CPU of extraction and of the split-body check on articles of 2,000 and "
                             "8,000 paragraphs (no corpus needed)")
    args = parser.parse_args(argv)
    if args.long_page:
        rows = long_page_cost()
        print(json.dumps(rows, indent=2) if args.json else "\n".join(
            f"{count:,} paragraphs: extraction {row['extraction_ms']} ms, split-body check {row['split_check_ms']} ms"
            for count, row in rows.items()))
        return 0
    folder = Path(args.corpus)
    if not (folder / "ground-truth.json").is_file():
        print(f"no article corpus at {folder} (ground-truth.json missing)", file=sys.stderr)
        return 2
    names = args.extractors.split(",") if args.extractors else None
    report = run(folder, samples=args.bootstrap, seed=args.seed, names=names)
    print(json.dumps(report, indent=2) if args.json else render(report))
    if args.check_floors and "ours" in report["extractors"]:
        floors = json.loads((ROOT / "bench" / "extract-floors.json").read_text(encoding="utf-8"))["ours"]
        from plugin.bench.evaluation import below_floors, floors_verdict

        below = below_floors(report["extractors"]["ours"], floors, "ours")
        return floors_verdict(below, "bench/extract-floors.json", checked=len(floors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
