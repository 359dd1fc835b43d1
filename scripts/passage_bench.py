#!/usr/bin/env python3
"""Passage picking on the article corpus: do the passages `fetch(url, query=…)` returns hold the answer?

    python scripts/passage_bench.py --corpus ../shared/article-corpus [--format markdown|text] [--json]
        [--check-floors] [--cv 10] [--tokens] [--set window_chars=400 ...]

Protocol. `qa.json` holds 240 questions on 120 articles, each answer an exact span of the article's
human-written text. Every page is extracted as `metasearch fetch` does (`extract_html`, then
`clean_document`; Markdown by default, `--format text` for plain text). For each question the system
returns passages best first; the answer counts as found when it is inside one returned passage, compared
with runs of whitespace made one space and Markdown emphasis marks (`*`, backticks) left out (in
Markdown, `**$700**` holds the answer `$700`).
- r@1, r@3: inside one of the first 1 or 3 passages;
- r@600, r@1200, r@2400: inside one of the passages packed best first into that many characters (a
  passage that does not fit whole is skipped, later smaller ones may still fit);
- tokens@1200: tokens (`plugin.reading.tokens.estimate_tokens`) of the passages packed into 1,200
  characters; ms/page: CPU time of segmenting and ranking one page (thread time), median and p90.
Systems: `ours` (plugin.reading.passages with the shipped RankOptions), `bm25` (plain BM25, k1 1.2,
b 0.75, over the same sentence windows of ~400 characters, terms lower-cased `\\w+`, idf over windows, no
folding, stemming, stop words, proximity or prior), `lead` (the page from its start: the first
windows in order, and the first N characters for a budget of N). Ceiling: the answer is in the
extracted text at all. Intervals: 95% bootstrap over questions (plugin.bench.evaluation.paired_bootstrap;
against zero for a system's own mean, paired for differences).
`--cv K`: K-fold cross-validation by article of a small grid of RankOptions (each fold picks the best
setting on the other folds, r@1200 scored on its own), to check that the shipped setting is not tuned
to these questions.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import itertools
import json
import math
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

from plugin.bench.evaluation import below_floors, floors_verdict, paired_bootstrap  # noqa: E402
from plugin.reading.passages import RankOptions, Window, best_passages, pick  # noqa: E402
from plugin.reading.sentences import HEADING, segment  # noqa: E402

BUDGETS = (600, 1200, 2400)
MARKS = re.compile(r"[*`]")
Ranker = Callable[[str, str, bool], list[tuple[int, int]]]


def normalise(text: str) -> str:
    return " ".join(MARKS.sub("", text).split())


def load(folder: Path, markdown: bool) -> tuple[dict[str, str], list[dict]]:
    """{article id: extracted text} and the questions."""
    from plugin.pipeline.sanitize import clean_document
    from plugin.reading.extract import extract_html

    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    questions = json.loads((folder / "qa.json").read_text(encoding="utf-8"))
    texts = {}
    for key in sorted({q["id"] for q in questions}):
        html = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes()).decode("utf-8", "replace")
        texts[key] = clean_document(extract_html(html, url=truth[key].get("url") or None, markdown=markdown).content)
    return texts, questions


# ----- systems: (text, question, markdown) -> passage spans, best first -----
def ours(options: RankOptions = RankOptions()) -> Ranker:
    def rank(text: str, question: str, markdown: bool) -> list[tuple[int, int]]:
        return [(w.start, w.end) for w in best_passages(text, question, markdown=markdown, options=options)]
    return rank


_PLAIN = re.compile(r"\w+")


def plain_bm25(text: str, question: str, markdown: bool, window_chars: int = 400) -> list[tuple[int, int]]:
    seg = segment(text, markdown=markdown)
    units = [u for u in seg.units if u.kind != HEADING]
    spans = []
    for i, unit in enumerate(units):
        j = i
        while j + 1 < len(units) and units[j + 1].end - unit.start <= window_chars:
            j += 1
        spans.append((unit.start, units[j].end))
    bags = [Counter(_PLAIN.findall(text[s:e].lower())) for s, e in spans]
    if not bags:
        return []
    n = len(bags)
    df: Counter = Counter()
    for bag in bags:
        df.update(bag.keys())
    average = sum(sum(b.values()) for b in bags) / n or 1.0
    query = _PLAIN.findall(question.lower())
    windows = []
    for (s, e), bag in zip(spans, bags):
        length = sum(bag.values())
        score = 0.0
        for t in query:
            f = bag.get(t, 0)
            if f:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / average))
        windows.append(Window(s, e, score, ()))
    windows.sort(key=lambda w: (-w.score, w.start))
    return [(w.start, w.end) for w in pick(windows)]


def lead(text: str, question: str, markdown: bool) -> list[tuple[int, int]]:
    windows = plain_bm25(text, "", markdown)  # every score 0: document order
    return sorted(windows)


def packed(spans: Sequence[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    kept, used = [], 0
    for s, e in spans:
        if used + (e - s) <= budget:
            kept.append((s, e))
            used += e - s
    return kept


# ----- measuring -----
def measure(texts: dict[str, str], questions: list[dict], rank: Ranker, markdown: bool,
            lead_budget: bool = False) -> dict[str, list[float]]:
    from plugin.reading.tokens import estimate_tokens

    scores: dict[str, list[float]] = {k: [] for k in ("r@1", "r@3", *(f"r@{b}" for b in BUDGETS), "tokens@1200",
                                                       "cpu_ms", "ceiling")}
    for q in questions:
        text = texts[q["id"]]
        answer = normalise(q["answer"])
        started = time.thread_time()
        spans = rank(text, q["question"], markdown)
        scores["cpu_ms"].append((time.thread_time() - started) * 1000)

        def found(chosen: Sequence[tuple[int, int]]) -> float:
            return float(any(answer in normalise(text[s:e]) for s, e in chosen))

        scores["r@1"].append(found(spans[:1]))
        scores["r@3"].append(found(spans[:3]))
        for budget in BUDGETS:
            chosen = [(0, budget)] if lead_budget else packed(spans, budget)
            scores[f"r@{budget}"].append(found(chosen))
        chosen = [(0, 1200)] if lead_budget else packed(spans, 1200)
        scores["tokens@1200"].append(float(sum(estimate_tokens(text[s:e]) for s, e in chosen)))
        scores["ceiling"].append(float(answer in normalise(text)))
    return scores


def _mean_interval(values: Sequence[float]) -> list[float]:
    interval = paired_bootstrap(values, [0.0] * len(values), rounds=2000)
    return [round(interval.low, 3), round(interval.high, 3)]


def summarise(scores: dict[str, list[float]]) -> dict:
    out: dict = {}
    for key, values in scores.items():
        if key == "cpu_ms":
            ordered = sorted(values)
            out["cpu_ms_median"] = round(statistics.median(values), 2)
            out["cpu_ms_p90"] = round(ordered[int(0.9 * (len(ordered) - 1))], 2)
        elif key == "tokens@1200":
            out[key] = round(statistics.mean(values), 1)
        else:
            out[key] = round(statistics.mean(values), 4)
            if key.startswith("r@"):
                out[key + "_95"] = _mean_interval(values)
    return out


GRID = {"window_chars": (150, 200, 300, 400), "context": (0.0, 0.3, 0.6, 1.0), "answer_type": (0.0, 1.0),
        "prefix": (0, 4, 5)}


def cross_validate(texts: dict[str, str], questions: list[dict], markdown: bool, folds: int, seed: int = 13) -> dict:
    """K-fold CV by article over GRID: each fold's r@1200 with the setting best on the other folds."""
    articles = sorted({q["id"] for q in questions})
    random.Random(seed).shuffle(articles)
    fold_of = {a: i % folds for i, a in enumerate(articles)}
    names = list(GRID)
    settings = [dict(zip(names, values)) for values in itertools.product(*(GRID[n] for n in names))]
    per_setting = {}
    for setting in settings:
        options = dataclasses.replace(RankOptions(), **setting)
        per_setting[json.dumps(setting, sort_keys=True)] = measure(texts, questions, ours(options), markdown)["r@1200"]
    held_out: list[float] = [0.0] * len(questions)
    chosen = []
    for fold in range(folds):
        train = [i for i, q in enumerate(questions) if fold_of[q["id"]] != fold]
        test = [i for i, q in enumerate(questions) if fold_of[q["id"]] == fold]
        best = max(per_setting, key=lambda key: (sum(per_setting[key][i] for i in train), key))
        chosen.append(best)
        for i in test:
            held_out[i] = per_setting[best][i]
    shipped = json.dumps({n: getattr(RankOptions(), n) for n in names}, sort_keys=True)
    return {"folds": folds, "grid": GRID, "cv_r@1200": round(statistics.mean(held_out), 4),
            "cv_r@1200_95": _mean_interval(held_out), "chosen_per_fold": Counter(chosen).most_common(),
            "shipped": shipped, "shipped_r@1200": round(statistics.mean(per_setting[shipped]), 4)
            if shipped in per_setting else None,
            "best_in_grid": max(per_setting, key=lambda k: sum(per_setting[k]))}


def token_error(texts: dict[str, str], questions: list[dict], markdown: bool) -> dict:
    """estimate_tokens against real BPE counts (o200k_base, cl100k_base through the `bpe-openai` package,
    which ships its vocabularies: `pip install bpe-openai`, bench only) on the texts a budget applies to:
    the 5 best passages of every question, 1,200-character slices and whole pages."""
    try:
        import bpe_openai
    except ImportError:
        return {"skipped": "bpe-openai is not installed (pip install bpe-openai): no real tokenizer to compare with"}
    from plugin.reading.tokens import estimate_tokens

    samples = []
    for q in questions:
        text = texts[q["id"]]
        samples.extend(text[s:e] for s, e in ours()(text, q["question"], markdown)[:5])
    for text in texts.values():
        samples.append(text)
        samples.extend(text[i:i + 1200] for i in range(0, len(text), 1200))
    estimates = [estimate_tokens(s) for s in samples]
    out: dict = {"texts": len(samples), "package": f"bpe-openai {getattr(bpe_openai, '__version__', '?')}"}
    for name in ("o200k_base", "cl100k_base"):
        encoding = bpe_openai.get_encoding(name)
        real = [len(encoding.encode(s)) for s in samples]
        over = [r / max(e, 1) - 1 for r, e in zip(real, estimates)]
        ratios = sorted(e / max(r, 1) for r, e in zip(real, estimates))
        out[name] = {"real_above_estimate_share": round(sum(o > 0 for o in over) / len(over), 4),
                     "worst_real_above_estimate": round(max(over), 3),
                     "p99_real_above_estimate": round(sorted(over)[int(0.99 * (len(over) - 1))], 3),
                     "estimate_over_real_median": round(ratios[len(ratios) // 2], 3),
                     "estimate_over_real_total": round(sum(estimates) / sum(real), 3)}
    return out


def run(folder: Path, markdown: bool = True, options: RankOptions = RankOptions(), folds: int = 0,
        tokens: bool = False) -> dict:
    texts, questions = load(folder, markdown)
    systems = {"ours": measure(texts, questions, ours(options), markdown),
               "bm25": measure(texts, questions, plain_bm25, markdown),
               "lead": measure(texts, questions, lead, markdown, lead_budget=True)}
    report = {"corpus": str(folder), "format": "markdown" if markdown else "text", "questions": len(questions),
              "articles": len(texts), "options": dataclasses.asdict(options),
              "systems": {name: summarise(s) for name, s in systems.items()}, "differences": {}}
    for other in ("bm25", "lead"):
        report["differences"][f"ours - {other}"] = {
            key: paired_bootstrap(systems["ours"][key], systems[other][key], rounds=2000).to_dict()
            for key in ("r@1", "r@3", *(f"r@{b}" for b in BUDGETS))}
    if folds:
        report["cross_validation"] = cross_validate(texts, questions, markdown, folds)
    if tokens:
        report["token_estimate"] = token_error(texts, questions, markdown)
    return report


def render(report: dict) -> str:
    lines = [f"{report['questions']} questions on {report['articles']} articles of {report['corpus']} "
             f"({report['format']}); answer recall with 95% bootstrap intervals", "",
             f"{'system':<6} " + " ".join(f"{k:>20}" for k in ("r@1", "r@3", "r@600", "r@1200", "r@2400"))
             + f" {'tokens@1200':>12} {'ms/page med/p90':>16}"]
    for name, s in report["systems"].items():
        cells = [f"{s[k]:.3f} [{s[k + '_95'][0]:.2f},{s[k + '_95'][1]:.2f}]" for k in
                 ("r@1", "r@3", "r@600", "r@1200", "r@2400")]
        lines.append(f"{name:<6} " + " ".join(f"{c:>20}" for c in cells)
                     + f" {s['tokens@1200']:>12} {str(s['cpu_ms_median']) + ' / ' + str(s['cpu_ms_p90']):>16}")
    lines.append(f"ceiling (answer in the extracted text): {report['systems']['ours']['ceiling']:.3f}")
    lines.append("")
    for pair, d in report["differences"].items():
        lines.append(f"{pair:<13} " + "  ".join(f"{k} {v['diff']:+.3f} [{v['ci95'][0]:+.3f},{v['ci95'][1]:+.3f}]"
                                                 for k, v in d.items()))
    cv = report.get("cross_validation")
    if cv:
        lines.append("")
        lines.append(f"{cv['folds']}-fold cross-validation by article over {cv['grid']}: held-out r@1200 "
                     f"{cv['cv_r@1200']:.3f} {cv['cv_r@1200_95']}; shipped setting {cv['shipped']} "
                     f"r@1200 {cv['shipped_r@1200']}; chosen per fold {cv['chosen_per_fold']}")
    estimate = report.get("token_estimate")
    if estimate:
        lines.append("")
        lines.append(f"token estimate vs real BPE counts: {json.dumps(estimate)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "article-corpus"))
    parser.add_argument("--format", choices=("markdown", "text"), default="markdown")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cv", type=int, default=0, metavar="K", help="K-fold cross-validation of the grid")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a RankOptions field (repeatable)")
    parser.add_argument("--tokens", action="store_true",
                        help="compare the token estimate with real BPE counts (needs pip install bpe-openai)")
    parser.add_argument("--check-floors", action="store_true", help="exit 1 below bench/passage-floors.json")
    args = parser.parse_args(argv)
    folder = Path(args.corpus)
    if not (folder / "qa.json").is_file():
        print(f"no article corpus with questions at {folder} (qa.json missing)", file=sys.stderr)
        return 2
    overrides = {}
    for item in args.set:
        name, _, value = item.partition("=")
        kind = type(getattr(RankOptions(), name))
        overrides[name] = kind(value)
    options = dataclasses.replace(RankOptions(), **overrides)
    report = run(folder, markdown=args.format == "markdown", options=options, folds=args.cv, tokens=args.tokens)
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    if args.check_floors:
        floors = json.loads((ROOT / "bench" / "passage-floors.json").read_text(encoding="utf-8"))[report["format"]]
        below = below_floors(report["systems"]["ours"], floors, "ours")
        return floors_verdict(below, f"bench/passage-floors.json ({report['format']})", checked=len(floors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
