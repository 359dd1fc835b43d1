#!/usr/bin/env python3
"""Passage picking on the article corpus: do the passages `fetch(url, query=…)` returns hold the answer?

    python scripts/passage_bench.py --corpus ../shared/article-corpus [--format markdown|text] [--json]
        [--check-floors] [--cv 10] [--rules] [--fit] [--tokens] [--through-fetch] [--set window_chars=200 ...]

Protocol. `qa.json` holds 240 questions on 120 articles, each answer an exact span of the article's
human-written text. Every page is extracted as `metasearch fetch` does (`extract_html`, then
`clean_document`; Markdown by default, `--format text` for plain text). For each question the system
returns passages best first; the answer counts as found when it is inside one returned passage, compared
with runs of whitespace made one space and Markdown emphasis marks (`*`, backticks) left out (in
Markdown, `**$700**` holds the answer `$700`).
- r@1, r@3: inside one of the first 1 or 3 passages;
- r@600, r@1200, r@2400: inside one of the passages packed best first into that many characters (a
  passage that does not fit whole is skipped, later smaller ones may still fit);
- fetch@600, fetch@1200: as issue 28 checks it: the passages `fetch(url, query=…)` returns (packed best
  first into `fetch_passage_chars`, 1,200 characters, a passage that does not fit skipped), joined best
  first with a blank line between them, cut at 600 or 1,200 characters: the answer inside the cut;
- tokens@1200: tokens (`plugin.reading.tokens.estimate_tokens`) of the passages packed into 1,200
  characters; ms/page: CPU time of segmenting and ranking one page (thread time), median and p90, on the
  process's first pass over the questions (the meaning model loaded before it, but no word vector kept
  yet). Below the table, `ours` again: a second, warm pass, and issue 28's own measure, the p90 of 10
  runs on the median page of the corpus (by characters), each after one run that warms it.
`--through-fetch`: the same check through the product itself: every article served from a loopback
server on 127.0.0.1, every question through `Reader.fetch(url, query=question)` (the reader's own
extraction, settings and packing), fetch@600/1200 counted on what it returns, and every passage's offsets
read back with `fetch(url, offset=start, max_chars=end-start)`.
Systems: `ours` (plugin.reading.passages with the shipped RankOptions and weights: with the meaning signal
when the `semantic` extra is installed), `ours-lexical` (the same without the meaning signal, its own
fitted weights; shown when the extra is installed), `bm25` (plain BM25, k1 1.2,
b 0.75, over the same sentence windows of ~400 characters, terms lower-cased `\\w+`, idf over windows, no
folding, stemming, stop words, proximity or prior), `lead` (the page from its start: the first
windows in order, and the first N characters for a budget of N). Ceiling: the answer is in the
extracted text at all. Intervals: 95% bootstrap over questions (plugin.bench.evaluation.paired_bootstrap;
against zero for a system's own mean, paired for differences).
`--fit`: fit the ranker's weights (pairwise logistic regression: each window holding the answer against
each window of the same question that does not, every question weighing the same, L2 penalty `L2`) on
all the questions, with and without the meaning signal, and write them to
plugin/reading/passage_weights.py.
`--cv K`: K-fold cross-validation by article: in each fold, for every setting of a small grid (window
size, prefix length, growth, soft-match threshold), the weights are fitted on the other folds, the setting that finds
most answers there (r@600 + r@1200) is chosen, and its weights rank the fold's own questions; the held-out
recall at 600 and 1,200 characters, with 95% bootstrap intervals, is the estimate for unseen articles.
Nothing about the held-out fold (weights, window size, thresholds) is chosen on it.
`--rules`: the answer-type wording rules (number, date, name, entity) tested in the same
cross-validation: the held-out recall with each one left out, against all of them.
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
from plugin.reading import passages as ranking  # noqa: E402
from plugin.reading.passages import RankOptions, Window, best_passages, pick  # noqa: E402
from plugin.reading.sentences import HEADING, segment  # noqa: E402

BUDGETS = (600, 1200, 2400)
FETCH_BUDGETS = (600, 1200)  # what issue 28 checks: the fetched passages joined, cut at these
JOIN = "\n\n"  # between two fetched passages when they are joined (two characters of the budget)
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


def fetch_chars() -> int:
    """How many characters of passages a fetch with a query returns by default (the setting's default, not
    the environment's)."""
    from plugin.settings import Settings

    return Settings.model_fields["fetch_passage_chars"].default


def as_fetched(text: str, spans: Sequence[tuple[int, int]], budget: int, fetched: int) -> str:
    """What issue 28's check reads: the passages a fetch returns (packed into `fetched` characters),
    joined best first, cut at `budget` characters."""
    return JOIN.join(text[s:e] for s, e in packed(spans, fetched))[:budget]


# ----- measuring -----
def measure(texts: dict[str, str], questions: list[dict], rank: Ranker, markdown: bool,
            lead_budget: bool = False) -> dict[str, list[float]]:
    from plugin.reading.tokens import estimate_tokens

    scores: dict[str, list[float]] = {k: [] for k in ("r@1", "r@3", *(f"r@{b}" for b in BUDGETS),
                                                       *(f"fetch@{b}" for b in FETCH_BUDGETS), "tokens@1200",
                                                       "cpu_ms", "ceiling")}
    fetched = fetch_chars()
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
        for budget in FETCH_BUDGETS:
            seen = text[:budget] if lead_budget else as_fetched(text, spans, budget, fetched)
            scores[f"fetch@{budget}"].append(float(answer in normalise(seen)))
        chosen = [(0, 1200)] if lead_budget else packed(spans, 1200)
        scores["tokens@1200"].append(float(sum(estimate_tokens(text[s:e]) for s, e in chosen)))
        scores["ceiling"].append(float(answer in normalise(text)))
    return scores


def p90(values: Sequence[float]) -> float:
    """The 90th percentile of `values` (the value at 90 % of the way through them, sorted)."""
    ordered = sorted(values)
    return ordered[int(0.9 * (len(ordered) - 1))]


def ranking_cost(texts: dict[str, str], questions: list[dict], rank: Ranker, markdown: bool,
                 runs: int = 10) -> dict:
    """CPU milliseconds (thread time) of `rank` per page: a warm pass over every question (median, p90),
    and the p90 of `runs` runs on the corpus's median page (by characters), after one run that warms it."""
    def cpu_ms(q: dict) -> float:
        started = time.thread_time()
        rank(texts[q["id"]], q["question"], markdown)
        return (time.thread_time() - started) * 1000

    warm = [cpu_ms(q) for q in questions]
    by_length = sorted(questions, key=lambda q: (len(texts[q["id"]]), q["id"]))
    median_page = by_length[len(by_length) // 2]
    cpu_ms(median_page)
    runs_ms = [cpu_ms(median_page) for _ in range(runs)]
    return {"warm_cpu_ms_median": round(statistics.median(warm), 2),
            "warm_cpu_ms_p90": round(p90(warm), 2),
            "median_page_chars": len(texts[median_page["id"]]),
            "median_page_cpu_ms_p90": round(p90(runs_ms), 2), "median_page_runs": runs}


def _mean_interval(values: Sequence[float]) -> list[float]:
    interval = paired_bootstrap(values, [0.0] * len(values), rounds=2000)
    return [round(interval.low, 3), round(interval.high, 3)]


def summarise(scores: dict[str, list[float]]) -> dict:
    out: dict = {}
    for key, values in scores.items():
        if key == "cpu_ms":
            out["cpu_ms_median"] = round(statistics.median(values), 2)
            out["cpu_ms_p90"] = round(p90(values), 2)
        elif key == "tokens@1200":
            out[key] = round(statistics.mean(values), 1)
        else:
            out[key] = round(statistics.mean(values), 4)
            if key.startswith(("r@", "fetch@")):
                out[key + "_95"] = _mean_interval(values)
    return out


# ----- fitting the weights, and cross-validation -----
L2 = 0.1  # the penalty of the pairwise logistic regression (on standardised feature differences)
# Growth settings come first: on a tie the passages that hold the question's spread words (issue 28) win.
GRID = {"window_chars": (120, 150, 200), "prefix": (4, 5), "grow": ((400, 0.5), (300, 0.3), (0, 0.0)),
        "soft_threshold": (0.35, 0.45, 0.55)}


@dataclasses.dataclass
class Collected:
    """Every question's candidate windows with their features, and which hold the answer."""
    features: list  # plugin.reading.passages.Features per question
    labels: list    # per question: per window, whether it holds the answer
    names: tuple    # the feature names fitted


def collect(texts: dict[str, str], questions: list[dict], markdown: bool, options: RankOptions,
            model) -> Collected:
    features, labels = [], []
    for q in questions:
        text = texts[q["id"]]
        answer = normalise(q["answer"])
        found = ranking.window_features(text, q["question"], markdown=markdown, options=options, model=model)
        features.append(found)
        labels.append([answer in normalise(text[w.start:w.end]) for w in found.windows])
    names = ranking.FEATURES if model is not None else ranking.LEXICAL
    return Collected(features, labels, names)


def fit(collected: Collected, indices: Sequence[int], l2: float = L2, rounds: int = 300) -> dict[str, float]:
    """Weights by pairwise logistic regression over the questions `indices`: every window holding the
    answer against every window of the same question that does not, each question weighing the same;
    gradient descent on standardised differences (deterministic)."""
    import numpy as np

    names = collected.names
    blocks, weights = [], []
    for i in indices:
        found, labels = collected.features[i], collected.labels[i]
        if not labels or all(labels) or not any(labels):
            continue
        matrix = np.array([found.values[name] for name in names], dtype=np.float64).T
        holds = np.array(labels)
        pairs = (matrix[holds][:, None, :] - matrix[~holds][None, :, :]).reshape(-1, len(names))
        blocks.append(pairs)
        weights.append(np.full(len(pairs), 1.0 / len(pairs)))
    differences = np.vstack(blocks)
    weight = np.concatenate(weights)
    scale = differences.std(axis=0) + 1e-9
    standard = differences / scale
    beta = np.zeros(len(names))
    for _ in range(rounds):
        p = 1 / (1 + np.exp(np.clip(standard @ beta, -50, 50)))
        beta -= 0.5 * (-(standard * (p * weight)[:, None]).sum(axis=0) / weight.sum() + l2 * beta)
    return {name: float(f"{value:.4g}") for name, value in zip(names, beta / scale)}


def held_found(texts: dict[str, str], questions: list[dict], collected: Collected, weights: dict[str, float],
               options: RankOptions, indices: Sequence[int]) -> dict[int, dict[str, float]]:
    """r@1, r@600, r@1200, fetch@600, fetch@1200 of each question in `indices` ranked with `weights`
    (grown as `options` say)."""
    out = {}
    fetched = fetch_chars()
    for i in indices:
        text = texts[questions[i]["id"]]
        answer = normalise(questions[i]["answer"])
        found = collected.features[i]
        chosen = ranking.pick(ranking.score_windows(found, weights), None, found, options)
        spans = [(w.start, w.end) for w in chosen]
        out[i] = {"r@1": float(any(answer in normalise(text[s:e]) for s, e in spans[:1]))}
        for budget in (600, 1200):
            out[i][f"r@{budget}"] = float(any(answer in normalise(text[s:e]) for s, e in packed(spans, budget)))
        for budget in FETCH_BUDGETS:
            out[i][f"fetch@{budget}"] = float(answer in normalise(as_fetched(text, spans, budget, fetched)))
    return out


def _folds(questions: list[dict], folds: int, seed: int = 13) -> list[int]:
    articles = sorted({q["id"] for q in questions})
    random.Random(seed).shuffle(articles)
    fold_of = {a: i % folds for i, a in enumerate(articles)}
    return [fold_of[q["id"]] for q in questions]


def _settings(meaning: bool) -> list[dict]:
    names = ["window_chars", "prefix", "grow"] + (["soft_threshold"] if meaning else [])
    return [dict(zip(names, values)) for values in itertools.product(*(GRID[n] for n in names))]


def _features_key(setting: dict) -> tuple:
    """What the features depend on (growth acts after ranking)."""
    return tuple(sorted((k, v) for k, v in setting.items() if k != "grow"))


def _options(setting: dict, base: RankOptions = RankOptions()) -> RankOptions:
    grow_chars, grow_share = setting["grow"]
    rest = {k: v for k, v in setting.items() if k != "grow"}
    return dataclasses.replace(base, grow_chars=grow_chars, grow_share=grow_share, **rest)


def cross_validate(texts: dict[str, str], questions: list[dict], markdown: bool, folds: int, meaning: bool,
                   seed: int = 13, settings: list[dict] | None = None, base: RankOptions = RankOptions()) -> dict:
    """K-fold CV by article; everything (weights, and window size, growth and threshold among `settings`,
    GRID by default) chosen on the other folds."""
    model = _model() if meaning else None
    settings = settings or _settings(meaning)
    fold_of = _folds(questions, folds, seed)
    collected: dict[tuple, Collected] = {}
    for setting in settings:
        key = _features_key(setting)
        if key not in collected:
            collected[key] = collect(texts, questions, markdown, _options(setting, base), model)
    held: dict[int, dict[str, float]] = {}
    chosen = []
    everyone = range(len(questions))
    for fold in range(folds):
        train = [i for i in everyone if fold_of[i] != fold]
        test = [i for i in everyone if fold_of[i] == fold]
        fitted = {key: fit(c, train) for key, c in collected.items()}
        best, best_score = None, -1.0
        for setting in settings:
            key = _features_key(setting)
            found = held_found(texts, questions, collected[key], fitted[key], _options(setting, base), train)
            score = sum(r["r@600"] + r["r@1200"] for r in found.values())
            if score > best_score + 1e-9:
                best, best_score = setting, score
        chosen.append(json.dumps(best, sort_keys=True))
        key = _features_key(best)
        held.update(held_found(texts, questions, collected[key], fitted[key], _options(best, base), test))
    report = {"folds": folds, "meaning": meaning, "grid": {k: v for k, v in GRID.items()
                                                          if meaning or k != "soft_threshold"},
              "chosen_per_fold": Counter(chosen).most_common(), "per_question": held}
    for key in ("r@1", "r@600", "r@1200", "fetch@600", "fetch@1200"):
        values = [held[i][key] for i in everyone]
        report[f"cv_{key}"] = round(statistics.mean(values), 4)
        report[f"cv_{key}_95"] = _mean_interval(values)
    return report


def rule_ablation(texts: dict[str, str], questions: list[dict], markdown: bool, folds: int, meaning: bool) -> dict:
    """Each answer-type wording rule left out in turn, cross-validated with the shipped window size, growth
    and threshold (the weights refitted in each fold): the held-out recall without it, and the paired
    difference with all rules on."""
    shipped = RankOptions()
    setting = {"window_chars": shipped.window_chars, "prefix": shipped.prefix,
               "grow": (shipped.grow_chars, shipped.grow_share)}
    if meaning:
        setting["soft_threshold"] = shipped.soft_threshold
    full = cross_validate(texts, questions, markdown, folds, meaning, settings=[setting])
    out = {"all_rules": {"r@600": full["cv_r@600"], "r@1200": full["cv_r@1200"]}}
    for kind in ranking.ANSWER_KINDS:
        kinds = tuple(k for k in ranking.ANSWER_KINDS if k != kind)
        without = cross_validate(texts, questions, markdown, folds, meaning, settings=[setting],
                                 base=RankOptions(answer_kinds=kinds))
        asked = [i for i, q in enumerate(questions) if ranking.question_kind(q["question"]) == kind]
        row = {"questions": len(asked)}
        for key in ("r@600", "r@1200"):
            every = range(len(questions))
            row[f"without_{key}"] = without[f"cv_{key}"]
            row[f"rule_gain_{key}"] = paired_bootstrap([full["per_question"][i][key] for i in every],
                                                       [without["per_question"][i][key] for i in every],
                                                       rounds=2000).to_dict()
        out[kind] = row
    return out


def _model():
    from plugin.reading import meaning

    return meaning.model()


def write_weights(texts: dict[str, str], questions: list[dict], markdown: bool, path: Path) -> dict:
    """Fit both weight sets on every question (shipped window size and threshold) and write `path`."""
    options = RankOptions()
    model = _model()
    if model is None:
        raise SystemExit("--fit needs the meaning model (pip install 'metasearch[semantic]')")
    everyone = range(len(questions))
    lexical = fit(collect(texts, questions, markdown, options, None), everyone)
    meaning = fit(collect(texts, questions, markdown, options, model), everyone)
    path.write_text(f'''"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 {L2}) on all {len(questions)} dev questions of the article corpus ({"Markdown" if markdown else "text"}), windows of
{options.window_chars} characters, soft-match threshold {options.soft_threshold}. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {json.dumps(lexical, indent=4)}

MEANING_WEIGHTS = {json.dumps(meaning, indent=4)}
''', encoding="utf-8")
    return {"lexical": lexical, "meaning": meaning}


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
        tokens: bool = False, rules: bool = False, fit_path: Path | None = None, through: bool = False) -> dict:
    texts, questions = load(folder, markdown)
    report: dict = {"corpus": str(folder), "format": "markdown" if markdown else "text", "questions": len(questions),
                    "articles": len(texts), "options": dataclasses.asdict(options)}
    if fit_path is not None:
        report["fitted"] = write_weights(texts, questions, markdown, fit_path)
        import importlib

        importlib.reload(importlib.import_module("plugin.reading.passage_weights"))
    from plugin.reading import meaning

    model = _model() if options.meaning else None  # loaded before any timing
    report["meaning"] = meaning.status() if options.meaning else {"available": False, "reason": "meaning=False"}
    systems = {"ours": measure(texts, questions, ours(options), markdown)}
    if model is not None:
        systems["ours-lexical"] = measure(texts, questions, ours(dataclasses.replace(options, meaning=False)), markdown)
    systems["bm25"] = measure(texts, questions, plain_bm25, markdown)
    systems["lead"] = measure(texts, questions, lead, markdown, lead_budget=True)
    report["systems"] = {name: summarise(s) for name, s in systems.items()}
    report["cost"] = ranking_cost(texts, questions, ours(options), markdown)
    report["differences"] = {}
    for other in [name for name in systems if name != "ours"]:
        report["differences"][f"ours - {other}"] = {
            key: paired_bootstrap(systems["ours"][key], systems[other][key], rounds=2000).to_dict()
            for key in ("r@1", "r@3", *(f"r@{b}" for b in BUDGETS))}
    if folds:
        report["cross_validation"] = {}
        for with_meaning in ([True, False] if model is not None else [False]):
            cv = cross_validate(texts, questions, markdown, folds, with_meaning)
            if rules:
                cv["rules"] = rule_ablation(texts, questions, markdown, folds, with_meaning)
            report["cross_validation"]["meaning" if with_meaning else "lexical"] = cv
        found = report["cross_validation"]
        if "meaning" in found:
            report["cross_validation"]["meaning - lexical"] = {
                key: paired_bootstrap([found["meaning"]["per_question"][i][key] for i in range(len(questions))],
                                      [found["lexical"]["per_question"][i][key] for i in range(len(questions))],
                                      rounds=2000).to_dict() for key in ("r@1", "r@600", "r@1200", "fetch@600")}
        for cv in found.values():
            cv.pop("per_question", None)
    if tokens:
        report["token_estimate"] = token_error(texts, questions, markdown)
    if through:
        report["through_fetch"] = through_fetch(folder, questions)
    return report


COLUMNS = ("r@1", "r@3", "r@600", "r@1200", "r@2400", "fetch@600", "fetch@1200")


def through_fetch(folder: Path, questions: list[dict]) -> dict:
    """Issue 28's check itself: the corpus's pages served on 127.0.0.1 (robots.txt open), every question
    through the product's `Reader.fetch(url, query=question)` with the settings the environment gives (the
    defaults unless METASEARCH_* says otherwise; the allow-list set to 127.0.0.1/32, an in-memory state
    store, no rendering), the passages joined best first and cut at 600 and 1,200 characters; every
    passage's offsets read back with `fetch(url, offset=start, max_chars=end-start)`."""
    import asyncio

    from plugin.bench.loopback import LoopbackSite
    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    pages = {f"/{key}": gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes())
             for key in sorted({q["id"] for q in questions})}

    def answer(path: str) -> tuple[int, str, bytes]:
        if path == "/robots.txt":
            return 200, "text/plain", b"User-agent: *\nDisallow:\n"
        page = pages.get(path)
        return (200, "text/html; charset=utf-8", page) if page is not None else (404, "text/plain", b"not found")

    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                        render="never")
    scores: dict[str, list[float]] = {f"fetch@{b}": [] for b in FETCH_BUDGETS}
    counts = {"passages": 0, "offsets_checked": 0, "offsets_wrong": 0, "failed": 0}

    async def check() -> None:
        from plugin.errors import SearchError

        async with Reader(settings) as reader:
            for q in questions:
                url = f"{site.base}/{q['id']}"
                try:
                    response = await reader.fetch(url, query=q["question"])
                except SearchError:
                    counts["failed"] += 1
                    for budget in FETCH_BUDGETS:
                        scores[f"fetch@{budget}"].append(0.0)
                    continue
                passages = response.passages or []
                joined = JOIN.join(p.text for p in passages)
                answer = normalise(q["answer"])
                for budget in FETCH_BUDGETS:
                    scores[f"fetch@{budget}"].append(float(answer in normalise(joined[:budget])))
                counts["passages"] += len(passages)
                for passage in passages:
                    piece = await reader.fetch(url, offset=passage.start, max_chars=passage.end - passage.start)
                    counts["offsets_checked"] += 1
                    counts["offsets_wrong"] += piece.content != passage.text

    started = time.perf_counter()
    with LoopbackSite(answer) as site:
        asyncio.run(check())
    out: dict = {"questions": len(questions), "seconds": round(time.perf_counter() - started, 1),
                 "passages_mean": round(counts["passages"] / max(len(questions), 1), 2),
                 **{k: v for k, v in counts.items() if k != "passages"}}
    for key, values in scores.items():
        out[key] = round(statistics.mean(values), 4)
        out[key + "_95"] = _mean_interval(values)
    return out


def render(report: dict) -> str:
    lines = [f"{report['questions']} questions on {report['articles']} articles of {report['corpus']} "
             f"({report['format']}); answer recall with 95% bootstrap intervals; meaning signal: "
             f"{report['meaning'].get('source') or report['meaning'].get('reason', 'not used')}", "",
             f"{'system':<12} " + " ".join(f"{k:>20}" for k in COLUMNS)
             + f" {'tokens@1200':>12} {'ms/page med/p90':>16}"]
    for name, s in report["systems"].items():
        cells = [f"{s[k]:.3f} [{s[k + '_95'][0]:.2f},{s[k + '_95'][1]:.2f}]" for k in COLUMNS]
        lines.append(f"{name:<12} " + " ".join(f"{c:>20}" for c in cells)
                     + f" {s['tokens@1200']:>12} {str(s['cpu_ms_median']) + ' / ' + str(s['cpu_ms_p90']):>16}")
    lines.append(f"ceiling (answer in the extracted text): {report['systems']['ours']['ceiling']:.3f}")
    cost = report.get("cost")
    if cost:
        lines.append(f"ours, CPU per page: the table's ms/page is the first pass (no word vector kept yet); warm "
                     f"pass {cost['warm_cpu_ms_median']} / {cost['warm_cpu_ms_p90']} ms (median / p90); the "
                     f"median page ({cost['median_page_chars']:,} characters) p90 {cost['median_page_cpu_ms_p90']} "
                     f"ms over {cost['median_page_runs']} runs")
    lines.append("")
    for pair, d in report["differences"].items():
        lines.append(f"{pair:<20} " + "  ".join(f"{k} {v['diff']:+.3f} [{v['ci95'][0]:+.3f},{v['ci95'][1]:+.3f}]"
                                                for k, v in d.items()))
    for name, cv in report.get("cross_validation", {}).items():
        lines.append("")
        if name == "meaning - lexical":
            lines.append("cross-validated, meaning - lexical: " + "  ".join(
                f"{k} {v['diff']:+.3f} [{v['ci95'][0]:+.3f},{v['ci95'][1]:+.3f}]" for k, v in cv.items()))
            continue
        lines.append(f"{cv['folds']}-fold cross-validation by article, {name} (weights fitted and {cv['grid']} "
                     f"chosen on the other folds): held-out r@600 {cv['cv_r@600']:.3f} {cv['cv_r@600_95']}, "
                     f"r@1200 {cv['cv_r@1200']:.3f} {cv['cv_r@1200_95']}, r@1 {cv['cv_r@1']:.3f}; as fetched "
                     f"fetch@600 {cv['cv_fetch@600']:.3f} {cv['cv_fetch@600_95']}, fetch@1200 "
                     f"{cv['cv_fetch@1200']:.3f} {cv['cv_fetch@1200_95']}; chosen per fold {cv['chosen_per_fold']}")
        rules = dict(cv.get("rules", {}))
        if rules:
            every = rules.pop("all_rules")
            lines.append(f"  answer-type rules, shipped window/growth/threshold, weights refitted per fold: all rules "
                         f"r@600 {every['r@600']:.3f}, r@1200 {every['r@1200']:.3f}")
        for kind, row in rules.items():
            gains = "  ".join(f"{k[len('rule_gain_'):]} {v['diff']:+.3f} [{v['ci95'][0]:+.3f},{v['ci95'][1]:+.3f}]"
                              for k, v in row.items() if k.startswith("rule_gain_"))
            lines.append(f"  rule {kind:<7} ({row['questions']} questions): CV without it r@600 "
                         f"{row['without_r@600']:.3f}, r@1200 {row['without_r@1200']:.3f}; gain with it {gains}")
    if "fitted" in report:
        lines.append("")
        lines.append(f"fitted weights written: {json.dumps(report['fitted'])}")
    through = report.get("through_fetch")
    if through:
        lines.append("")
        lines.append(f"through fetch(url, query=…) from a loopback server ({through['questions']} questions, "
                     f"{through['seconds']} s): fetch@600 {through['fetch@600']:.3f} {through['fetch@600_95']}, "
                     f"fetch@1200 {through['fetch@1200']:.3f} {through['fetch@1200_95']}; passages per answer "
                     f"{through['passages_mean']}; offsets read back {through['offsets_checked']}, "
                     f"{through['offsets_wrong']} wrong; failed reads {through['failed']}")
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
    parser.add_argument("--cv", type=int, default=0, metavar="K",
                        help="K-fold cross-validation: weights, window size, growth and threshold chosen on the other folds")
    parser.add_argument("--rules", action="store_true", help="with --cv: each answer-type wording rule left out in turn")
    parser.add_argument("--fit", action="store_true",
                        help="fit the weights on all questions and write plugin/reading/passage_weights.py")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a RankOptions field (repeatable)")
    parser.add_argument("--tokens", action="store_true",
                        help="compare the token estimate with real BPE counts (needs pip install bpe-openai)")
    parser.add_argument("--check-floors", action="store_true", help="exit 1 below bench/passage-floors.json")
    parser.add_argument("--through-fetch", action="store_true",
                        help="also put every question through fetch(url, query=…) from a loopback server "
                             "(issue 28's check)")
    args = parser.parse_args(argv)
    folder = Path(args.corpus)
    if not (folder / "qa.json").is_file():
        print(f"no article corpus with questions at {folder} (qa.json missing)", file=sys.stderr)
        return 2
    overrides = {}
    for item in args.set:
        name, _, value = item.partition("=")
        kind = type(getattr(RankOptions(), name))
        overrides[name] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    options = dataclasses.replace(RankOptions(), **overrides)
    report = run(folder, markdown=args.format == "markdown", options=options, folds=args.cv, tokens=args.tokens,
                 rules=args.rules, fit_path=ROOT / "plugin" / "reading" / "passage_weights.py" if args.fit else None,
                 through=args.through_fetch)
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    if args.check_floors:
        floors = json.loads((ROOT / "bench" / "passage-floors.json").read_text(encoding="utf-8"))
        below, checked = [], 0
        for system, scope in floor_scopes(report):
            below += below_floors(report["systems"][system], floors[scope], f"{system} ({scope})")
            checked += len(floors[scope])
        return floors_verdict(below, "bench/passage-floors.json", checked=checked)
    return 0


def floor_scopes(report: dict) -> list[tuple[str, str]]:
    """(system, floors key) pairs a report is held to: the lexical ranker always, the meaning one when
    the model is installed."""
    fmt = report["format"]
    if "ours-lexical" in report["systems"]:
        return [("ours", f"{fmt}-meaning"), ("ours-lexical", fmt)]
    return [("ours", fmt)]


if __name__ == "__main__":
    sys.exit(main())
