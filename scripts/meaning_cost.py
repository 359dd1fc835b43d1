#!/usr/bin/env python3
"""What the passage ranker's meaning signal costs: load time, resident memory, CPU per page.

    python scripts/meaning_cost.py --corpus ../shared/article-corpus [--repeats 5] [--json]

Protocol. In a fresh process, the article corpus's pages are extracted as `fetch` does (Markdown), then:
- load: `plugin.reading.meaning.model()` timed (wall and process CPU), and the process's resident memory
  (VmRSS) before and after it (numpy, tokenizers and the 32,000 x 256 token table);
- per page: passage selection (`best_passages`, every window ranked, the shipped options) for each of the
  240 dev questions, CPU time of the whole process (threads of numpy or tokenizers included), with the meaning signal and without it, each
  question `--repeats` times interleaved and its median kept; reported: median and p90 over questions of
  the total and of the added cost, first with the word-vector cache empty (cold: every word of the page
  tokenised) and then warm; and on the median-length page, the p90 of its own repeated runs.
The issue's budget: at most 10 ms CPU per page at p90 for passage selection.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from plugin.bench.process import rss_mb  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "article-corpus"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    folder = Path(args.corpus)
    if not (folder / "qa.json").is_file():
        print(f"no article corpus with questions at {folder} (qa.json missing)", file=sys.stderr)
        return 2
    import passage_bench
    from passage_bench import p90
    from plugin.reading import meaning
    from plugin.reading.passages import RankOptions, best_passages

    texts, questions = passage_bench.load(folder, markdown=True)
    before = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    model = meaning.model()
    load = {"wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(time.process_time() - cpu, 3),
            "rss_before_mb": round(before, 1), "rss_after_mb": round(rss_mb(), 1)}
    load["rss_added_mb"] = round(load["rss_after_mb"] - load["rss_before_mb"], 1)
    if model is None:
        print(json.dumps({"meaning": meaning.status()}))
        return 1

    with_meaning, words_only = RankOptions(), RankOptions(meaning=False)

    def cpu_ms(text: str, question: str, options: RankOptions) -> float:
        started = time.process_time()  # every thread of the process (a library's own threads included)
        best_passages(text, question, options=options)
        return (time.process_time() - started) * 1000

    model.forget_words()  # cold: no word vector kept yet
    cold = [cpu_ms(texts[q["id"]], q["question"], with_meaning) for q in questions]
    runs: dict[str, list[list[float]]] = {"meaning": [[] for _ in questions], "lexical": [[] for _ in questions]}
    for _ in range(args.repeats):
        for k, q in enumerate(questions):
            text = texts[q["id"]]
            runs["lexical"][k].append(cpu_ms(text, q["question"], words_only))
            runs["meaning"][k].append(cpu_ms(text, q["question"], with_meaning))
    per_question = {name: [statistics.median(r) for r in rs] for name, rs in runs.items()}
    added = [m - w for m, w in zip(per_question["meaning"], per_question["lexical"])]
    lengths = sorted((len(texts[q["id"]]), k) for k, q in enumerate(questions))
    median_length, median_k = lengths[len(lengths) // 2]
    report = {
        "model": model.source, "load": load, "questions": len(questions), "repeats": args.repeats,
        "cold_total_ms": {"median": round(statistics.median(cold), 2), "p90": round(p90(cold), 2)},
        "total_ms": {name: {"median": round(statistics.median(v), 2), "p90": round(p90(v), 2)}
                     for name, v in per_question.items()},
        "added_ms": {"median": round(statistics.median(added), 2), "p90": round(p90(added), 2)},
        "median_page": {"chars": median_length,
                        "meaning_p90_ms": round(p90(runs["meaning"][median_k]), 2),
                        "lexical_p90_ms": round(p90(runs["lexical"][median_k]), 2)},
        "words_kept": len(model._rows),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['model']}: loaded in {load['wall_s']} s ({load['cpu_s']} s CPU), resident memory "
              f"{load['rss_before_mb']} -> {load['rss_after_mb']} MB (+{load['rss_added_mb']} MB)")
        print(f"passage selection, CPU ms per page over {len(questions)} questions (median of {args.repeats} runs each):")
        for name, v in report["total_ms"].items():
            print(f"  {name:<8} median {v['median']:>6}  p90 {v['p90']:>6}")
        print(f"  added by the meaning signal: median {report['added_ms']['median']}, p90 {report['added_ms']['p90']}")
        print(f"  cold word cache (first run): median {report['cold_total_ms']['median']}, p90 {report['cold_total_ms']['p90']}")
        page = report["median_page"]
        print(f"  median page ({page['chars']} characters): p90 of its runs {page['meaning_p90_ms']} ms with meaning, "
              f"{page['lexical_p90_ms']} ms without")
    return 0


if __name__ == "__main__":
    sys.exit(main())
