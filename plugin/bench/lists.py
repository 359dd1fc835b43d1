"""The ranked-lists bench: real engines' top-10 URL lists for one query, graded URL by URL.

A folder of this kind (../shared/multi-engine-lists) holds `lists.json`
(`{"queries": [{"id", "query", "set", "lists": {engine: [url, ...]}}]}`) and
`judgments.json` (`{"protocol": ..., "judgments": {id: {url: grade}}}`, grades
0/1/2 for every URL in the query's pool). Each list becomes one engine's rows
(url and position only: no title, no snippet, no date), so the relevance gate
and freshness are off here, and coverage (fusion.py) reads the URL alone: the
judges graded from the URL too, so what coverage gains here is an upper bound
of what it gains where rows carry titles and snippets. The page corpus
(`--corpus`) measures the gate and the text signals on full rows. Our ranking
is the very `rank()` a live search runs.

Engines are named by their index, mapped to the project's engines: google →
startpage, bing → bing, yahoo → yahoo, duckduckgo → duckduckgo-html. Ask (and
any other name) has no engine here: it is its own index, weight 1.

Metrics over the top K = 8, URL by URL (a URL matches its judgment by key:
host lower-cased without `www.`, path without a trailing `/`, query string
kept, scheme and fragment ignored; rows that our URL identity merges take the
best grade of their spellings):
- ndcg@8: DCG with gain 2^grade − 1 and discount log2(rank + 1), over the
  ideal DCG of the query's pool (best eight grades);
- p@8: rows graded ≥ 1, over 8;
- mrr@8: 1 / rank of the first row graded 2 (0 when none).
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Mapping, Sequence
from urllib.parse import urlsplit

from engines import ENGINES
from engines.base import Row
from plugin.bench import baselines
from plugin.bench.evaluation import compare
from plugin.pipeline.canonical import canonical_url, identity
from plugin.pipeline.fusion import EngineList, rank
from plugin.pipeline.intent import read_intent
from plugin.pipeline.relevance import build_gate
from plugin.settings import Settings

K = 8
LIST_METRICS = ("ndcg@8", "p@8", "mrr@8")
# The lists' engines, by the index they draw on, as the project's engines (the issue-20 mapping).
ENGINE_OF = {"google": "startpage", "bing": "bing", "yahoo": "yahoo", "duckduckgo": "duckduckgo-html", "ask": "ask"}
# No list carries a date; the reference time only matters to the intent's "a year near now" rule.
REFERENCE_TIME = datetime(2025, 1, 1, 12)


class ListsError(ValueError):
    """A lists folder that cannot be read as one: the message says which file and what is wrong."""


@dataclass(frozen=True)
class ListQuery:
    id: str
    query: str
    set: str
    lists: dict[str, tuple[str, ...]]  # the project's engine name -> URLs in the engine's order
    grades: dict[str, int] = field(default_factory=dict)  # judgment key -> grade
    sources: dict[str, str] = field(default_factory=dict)  # the project's engine name -> the list's name

    def grade_of(self, url: str) -> int | None:
        return self.grades.get(judgment_key(url))


def judgment_key(url: str) -> str:
    """How the judgments name a URL: host lower-cased without a leading `www.`, path without a trailing
    `/`, the query string kept; scheme and fragment ignored."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if parts.port:
        host = f"{host}:{parts.port}"
    key = host + parts.path.rstrip("/")
    return key + ("?" + parts.query if parts.query else "")


def engine_name(source: str) -> str:
    return ENGINE_OF.get(source.lower(), source.lower())


def _fail(path: Path, what: str) -> ListsError:
    return ListsError(f"{path}: {what}")


def _read_json(path: Path) -> object:
    if not path.is_file():
        raise ListsError(f"{path} not found (a lists folder holds lists.json and judgments.json)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"not valid JSON ({exc})") from None


def load_lists(folder: str | Path) -> list[ListQuery]:
    """Every query of a lists folder with its lists and grades; `ListsError` names what is malformed."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ListsError(f"{folder} is not a folder (expected lists.json and judgments.json in it)")
    lists_path, judgments_path = folder / "lists.json", folder / "judgments.json"
    data, judged = _read_json(lists_path), _read_json(judgments_path)
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise _fail(lists_path, 'expected {"queries": [...]}')
    if not isinstance(judged, dict) or not isinstance(judged.get("judgments"), dict):
        raise _fail(judgments_path, 'expected {"judgments": {query id: {url: grade}}}')
    judgments = judged["judgments"]
    queries, seen = [], set()
    for n, item in enumerate(data["queries"], start=1):
        where = f"query {n}"
        if not isinstance(item, dict):
            raise _fail(lists_path, f"{where} is not an object")
        qid, text, group, lists = item.get("id"), item.get("query"), item.get("set", ""), item.get("lists")
        if not isinstance(qid, str) or not qid:
            raise _fail(lists_path, f"{where} has no string id")
        where = f"query {qid!r}"
        if qid in seen:
            raise _fail(lists_path, f"{where} appears twice")
        seen.add(qid)
        if not isinstance(text, str) or not text.strip():
            raise _fail(lists_path, f"{where} has no query text")
        if not isinstance(group, str):
            raise _fail(lists_path, f"{where}: set must be a string")
        if not isinstance(lists, dict) or not lists:
            raise _fail(lists_path, f"{where} has no lists (expected {{engine: [url, ...]}})")
        mapped: dict[str, tuple[str, ...]] = {}
        sources: dict[str, str] = {}
        for source, urls in lists.items():
            if not isinstance(urls, list) or not all(isinstance(u, str) and u.strip() for u in urls):
                raise _fail(lists_path, f"{where}: the list of {source!r} must be a list of URLs")
            name = engine_name(source)
            if name in mapped:
                raise _fail(lists_path, f"{where}: {source!r} and {sources[name]!r} are both {name}")
            mapped[name], sources[name] = tuple(urls), source
        grades = judgments.get(qid)
        if not isinstance(grades, dict):
            raise _fail(judgments_path, f"no judgments for {where}")
        keyed: dict[str, int] = {}
        for url, grade in grades.items():
            if not isinstance(grade, int) or isinstance(grade, bool) or grade not in (0, 1, 2):
                raise _fail(judgments_path, f"{where}: grade of {url} must be 0, 1 or 2, not {grade!r}")
            key = judgment_key(url)
            keyed[key] = max(keyed.get(key, 0), grade)
        queries.append(ListQuery(qid, text.strip(), group, mapped, keyed, sources))
    if not queries:
        raise _fail(lists_path, "holds no queries")
    return queries


# ----- our ranking and the baselines, on one query -----
def engine_rows(query: ListQuery) -> dict[str, list[Row]]:
    return {name: [Row(title="", url=url, snippet="", position=i) for i, url in enumerate(urls, start=1)]
            for name, urls in query.lists.items()}


def engine_list(name: str, rows: Sequence[Row], settings: Settings) -> EngineList:
    """What the searcher hands fusion for this engine (an unknown engine is its own index, weight 1)."""
    engine = ENGINES.get(name)
    if engine is None:
        return EngineList(engine=name, weight=settings.weights.get(name, 1.0), region="global", index=name,
                          rows=rows)
    return EngineList.of(engine, rows, settings)


def ours(query: ListQuery, settings: Settings) -> list[str]:
    rows = engine_rows(query)
    lists = [engine_list(name, rows[name], settings) for name in rows if rows[name]]
    intent = read_intent(query.query, official_sites=settings.official_sites, now=REFERENCE_TIME)
    gate = build_gate(query.query, settings.gate_min_units)  # the rows' text here is their URL alone
    return [f.url for f in rank(lists, settings, lead_region="global", now=REFERENCE_TIME, intent=intent, gate=gate)]


def rrf(rows: Mapping[str, Sequence[Row]], k: float = 60) -> list[str]:
    """Plain reciprocal rank fusion, equal weights: Σ 1 / (k + rank)."""
    return _by_score(rows, lambda rank, n: 1.0 / (k + rank), lambda total, engines: total)


def combmnz(rows: Mapping[str, Sequence[Row]]) -> list[str]:
    """CombMNZ over rank scores: Σ (n − rank + 1) / n over the engines that list the URL (n: the list's
    length), times how many engines list it."""
    return _by_score(rows, lambda rank, n: (n - rank + 1) / n, lambda total, engines: total * engines)


def _by_score(rows: Mapping[str, Sequence[Row]], part: Callable[[int, int], float],
              combine: Callable[[float, int], float]) -> list[str]:
    total: dict[str, float] = defaultdict(float)
    voters: dict[str, set[str]] = defaultdict(set)
    first: dict[str, tuple[int, int]] = {}
    url_of: dict[str, str] = {}
    for order, (name, listed) in enumerate(rows.items()):
        for row in listed:
            key = identity(row.url)
            if key is None or name in voters[key]:
                continue
            url_of.setdefault(key, canonical_url(row.url) or row.url)
            first[key] = min(first.get(key, (row.position, order)), (row.position, order))
            voters[key].add(name)
            total[key] += part(row.position, len(listed))
    scores = {key: combine(total[key], len(voters[key])) for key in total}
    return [url_of[key] for key in sorted(scores, key=lambda k: (-scores[k], first[k]))]


BASELINES: dict[str, Callable[[ListQuery, dict[str, list[Row]]], list[str]]] = {
    "searxng_merge": lambda q, rows: baselines.searxng_merge(rows, {}),
    "rrf60": lambda q, rows: rrf(rows, 60),
    "combmnz": lambda q, rows: combmnz(rows),
    "round_robin": lambda q, rows: baselines.round_robin(rows),
}


# ----- metrics -----
def _dcg(gains: Sequence[int]) -> float:
    return sum((2 ** g - 1) / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def graded(query: ListQuery) -> dict[str, int]:
    """URL identity -> grade for every URL of the query's lists (the best grade of its spellings;
    unjudged spellings count 0)."""
    grades: dict[str, int] = {}
    for urls in query.lists.values():
        for url in urls:
            key = identity(url)
            if key is not None:
                grades[key] = max(grades.get(key, 0), query.grade_of(url) or 0)
    return grades


def score_urls(urls: Sequence[str], grades: Mapping[str, int], k: int = K) -> dict[str, float]:
    top: list[int] = []
    seen: set[str] = set()
    for url in urls:
        key = identity(url)
        if key is None or key in seen:
            continue
        seen.add(key)
        top.append(grades.get(key, 0))
        if len(top) == k:
            break
    ideal = _dcg(sorted(grades.values(), reverse=True)[:k])
    return {
        "ndcg@8": _dcg(top) / ideal if ideal else 0.0,
        "p@8": sum(1 for g in top if g >= 1) / k,
        "mrr@8": next((1.0 / r for r, g in enumerate(top, start=1) if g == 2), 0.0),
    }


@dataclass
class Scored:
    """Every system's metrics on every query, in the queries' order."""

    queries: list[ListQuery]
    systems: dict[str, list[dict[str, float] | None]]  # None: the system has nothing for this query

    def values(self, system: str, metric: str, members: Sequence[int]) -> list[float]:
        return [self.systems[system][i][metric] for i in members]  # type: ignore[index]

    def answered(self, system: str) -> list[int]:
        return [i for i, m in enumerate(self.systems[system]) if m is not None]


def score_queries(queries: Sequence[ListQuery], settings: Settings,
                  ranker: Callable[[ListQuery], list[str]] | None = None) -> Scored:
    """Ours (or `ranker`), the baselines, each engine alone and the per-query oracle, on every query."""
    ranker = ranker or (lambda q: ours(q, settings))
    systems: dict[str, list] = defaultdict(lambda: [None] * len(queries))
    for i, query in enumerate(queries):
        grades, rows = graded(query), engine_rows(query)
        systems["ours"][i] = score_urls(ranker(query), grades)
        for name, baseline in BASELINES.items():
            systems[name][i] = score_urls(baseline(query, rows), grades)
        alone = {name: score_urls(baselines.single_engine(rows, name), grades) for name in rows if rows[name]}
        for name, metrics in alone.items():
            systems[f"alone:{name}"][i] = metrics
        # The one engine a user with hindsight would have asked for this query: the best nDCG@8 alone.
        systems["oracle"][i] = max(alone.values(), key=lambda a: (a["ndcg@8"], a["mrr@8"], a["p@8"]),
                                   default={m: 0.0 for m in LIST_METRICS})
    return Scored(list(queries), dict(systems))


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _summary(scored: Scored, system: str, members: Sequence[int]) -> dict:
    members = [i for i in members if scored.systems[system][i] is not None]
    return {m: _mean(scored.values(system, m, members)) for m in LIST_METRICS} | {"n": len(members)}


def comparisons(scored: Scored, a: str, b: str, members: Sequence[int],
                metrics: Sequence[str] = LIST_METRICS) -> list[dict]:
    """`a` minus `b` on each metric over the queries both answered (paired)."""
    both = [i for i in members if scored.systems[a][i] is not None and scored.systems[b][i] is not None]
    out = []
    for metric in metrics:
        c = compare(scored.values(a, metric, both), scored.values(b, metric, both))
        out.append({"a": a, "b": b, "metric": metric, "diff": c["diff"], "ci": c["ci95"], "p": c["p_sign_flip"],
                    "wins": c["wins"], "losses": c["losses"], "ties": c["ties"], "n": len(both),
                    "significant": c["significant"]})
    return out


def oracle_gap_closed(scored: Scored, members: Sequence[int], metric: str = "ndcg@8") -> float | None:
    """How much of the gap between SearXNG's merge and the per-query oracle ours closes."""
    s = _mean(scored.values("searxng_merge", metric, members))
    o = _mean(scored.values("oracle", metric, members))
    us = _mean(scored.values("ours", metric, members))
    if s is None or o is None or us is None or o - s <= 1e-12:
        return None
    return round((us - s) / (o - s), 4)


def report(queries: Sequence[ListQuery], settings: Settings, *, label: str = "",
           ranker: Callable[[ListQuery], list[str]] | None = None) -> dict:
    scored = score_queries(queries, settings, ranker)
    everyone = list(range(len(queries)))
    names = ["ours", *BASELINES, "oracle", *sorted(k for k in scored.systems if k.startswith("alone:"))]
    systems = {name: _summary(scored, name, everyone) for name in names}
    compared = []
    for name in names[1:]:
        compared.extend(comparisons(scored, "ours", name, everyone))
    groups: dict[str, dict] = {}
    for title, key in (("set", lambda q: q.set), ("engines", lambda q: str(len(q.lists)))):
        by: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            by[key(q)].append(i)
        groups[title] = {value: {
            "n": len(idx),
            "engines": sorted({e for i in idx for e in queries[i].lists}),
            "systems": {name: _summary(scored, name, idx) for name in names
                        if any(scored.systems[name][i] is not None for i in idx)},
            # On nDCG@8, against the baselines a user would pick instead and every engine alone.
            "ours_minus": [c for name in names[1:] if name not in ("round_robin", "combmnz", "oracle")
                           for c in comparisons(scored, "ours", name, idx, metrics=("ndcg@8",)) if c["n"]],
        } for value, idx in sorted(by.items())}
    sources = sorted({(s, n) for q in queries for n, s in q.sources.items()})
    unjudged = sum(1 for q in queries for urls in q.lists.values() for u in urls if q.grade_of(u) is None)
    return {
        "set": label,
        "queries": len(queries),
        "systems": systems,
        "comparisons": compared,
        "groups": groups,
        "oracle_gap_closed": {m: oracle_gap_closed(scored, everyone, m) for m in LIST_METRICS},
        "engine_map": {source: name for source, name in sources},
        "notes": [
            "Rows carry a URL and a position only (no title, snippet or date): the relevance gate and freshness "
            "are off, and coverage (the share of the query's words a row holds) reads the URL alone; the judges "
            "graded from the URL too, so coverage's gain here is an upper bound for full rows. The page corpus "
            "(--corpus) measures the gate and text signals on full rows.",
            "Engines are the project's engines by the index they draw on ("
            + ", ".join(f"{s} -> {n}" for s, n in sources) + "); an engine the project lacks is its own "
            "index with weight 1.",
            "oracle: the engine with the best nDCG@8 alone on each query, chosen with hindsight (its three metrics).",
        ],
        "unjudged_urls": unjudged,
        "metrics": list(LIST_METRICS),
    }


# ----- cross-validation -----
def folds(ids: Sequence[str], k: int = 5, seed: int = 20) -> list[list[int]]:
    """`k` disjoint folds of query positions covering every query once, seeded and independent of the
    queries' order in the file; each fold is one test set, tuned on the other folds."""
    if k < 2 or k > len(ids):
        raise ValueError(f"cannot make {k} folds of {len(ids)} queries")
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    random.Random(seed).shuffle(order)
    return [sorted(order[f::k]) for f in range(k)]


def cross_validate(queries: Sequence[ListQuery], points: Mapping[str, Settings], *, reference: Settings,
                   k: int = 5, seed: int = 20, metric: str = "ndcg@8") -> dict:
    """5-fold cross-validation of choosing among `points` (named settings): see `cross_validate_scored`.
    `reference` is what "ours" means in the comparisons (the shipped defaults)."""
    per_point = {name: score_queries(queries, settings) for name, settings in points.items()}
    return cross_validate_scored(score_queries(queries, reference), per_point, k=k, seed=seed, metric=metric)


def cross_validate_scored(reference: Scored, per_point: Mapping[str, Scored], *, k: int = 5, seed: int = 20,
                          metric: str = "ndcg@8") -> dict:
    """For each fold, the point with the best mean `metric` on the other folds (the first point listed wins
    a tie); its scores on the held-out fold make the CV estimate, so no query ever scores a point chosen
    with its own help. The estimate ("cv") is compared with the reference ("ours"), the baselines and the
    oracle, paired by query."""
    queries = reference.queries
    names = list(per_point)
    held_out: list[dict[str, float] | None] = [None] * len(queries)
    chosen = []
    for f, test in enumerate(folds([q.id for q in queries], k, seed)):
        train = sorted(set(range(len(queries))) - set(test))
        best = max(names, key=lambda name: (sum(per_point[name].values("ours", metric, train)), -names.index(name)))
        chosen.append({"fold": f, "test": len(test), "chosen": best,
                       "train_" + metric: round(sum(per_point[best].values("ours", metric, train)) / len(train), 4)})
        for i in test:
            held_out[i] = per_point[best].systems["ours"][i]
    cv = Scored(queries, {**reference.systems, "cv": held_out})
    everyone = list(range(len(queries)))
    return {"folds": chosen, "cv": _summary(cv, "cv", everyone), "ours": _summary(cv, "ours", everyone),
            "comparisons": [c for b in ("ours", *BASELINES, "oracle") for c in comparisons(cv, "cv", b, everyone)],
            "points": {name: _summary(s, "ours", everyone) for name, s in per_point.items()}}
