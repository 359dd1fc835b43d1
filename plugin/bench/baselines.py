"""What a user would pick instead of our ranker, run on the same recorded rows.

- SearXNG's merge: score = Σ over positions of (Π engine weights × engines that found it) / position.
- ddgs: its own ResultsAggregator (frequency) and SimpleFilterRanker, from the installed `ddgs` package.
- plain concatenation, round-robin, each engine alone, and the best single engine chosen per query
  with hindsight (the oracle).
Every baseline gets each engine's parsed rows (URLs canonicalised for identity), no gate, no tiers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Sequence

from engines.base import Row
from plugin.bench.evaluation import METRICS
from plugin.pipeline.canonical import canonical_url, identity

EngineRows = Mapping[str, Sequence[Row]]  # engine name -> its rows, in its order


def _dedupe(urls: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for url in urls:
        key = identity(url)
        if key and key not in seen:
            seen.add(key)
            out.append(canonical_url(url) or url)
    return out


def concatenation(lists: EngineRows) -> list[str]:
    return _dedupe([row.url for rows in lists.values() for row in rows])


def round_robin(lists: EngineRows) -> list[str]:
    urls = []
    depth = max((len(rows) for rows in lists.values()), default=0)
    for i in range(depth):
        for rows in lists.values():
            if i < len(rows):
                urls.append(rows[i].url)
    return _dedupe(urls)


def searxng_merge(lists: EngineRows, weights: Mapping[str, float]) -> list[str]:
    """SearXNG's result_score: for each position p of a result, add (Π weights × len(engines)) / p."""
    positions: dict[str, list[int]] = defaultdict(list)
    engines: dict[str, set[str]] = defaultdict(set)
    first_url: dict[str, str] = {}
    order: dict[str, int] = {}
    for name, rows in lists.items():
        for row in rows:
            key = identity(row.url)
            if key is None:
                continue
            first_url.setdefault(key, canonical_url(row.url) or row.url)
            order.setdefault(key, len(order))
            positions[key].append(row.position)
            engines[key].add(name)
    scores = {}
    for key, found_at in positions.items():
        weight = 1.0
        for name in engines[key]:
            weight *= weights.get(name, 1.0)
        weight *= len(engines[key])
        scores[key] = sum(weight / p for p in found_at)
    ranked = sorted(scores, key=lambda k: (-scores[k], order[k]))
    return [first_url[k] for k in ranked]


def ddgs_rank(lists: EngineRows, query: str) -> list[str]:
    """ddgs's aggregation (most frequent first) and SimpleFilterRanker, run from the installed package."""
    from ddgs.results import ResultsAggregator, TextResult
    from ddgs.similarity import SimpleFilterRanker

    aggregator: ResultsAggregator = ResultsAggregator({"href"})
    for rows in lists.values():
        for row in rows:
            url = canonical_url(row.url)
            if url is None:
                continue
            result = TextResult()
            result.title = row.title
            result.href = url
            result.body = row.snippet
            aggregator.append(result)
    ranked = SimpleFilterRanker().rank(aggregator.extract_dicts(), query)
    return _dedupe([doc["href"] for doc in ranked])


def single_engine(lists: EngineRows, engine: str) -> list[str]:
    return _dedupe([row.url for row in lists.get(engine, ())])


def oracle_single(alone: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The best single engine chosen per query, with hindsight: for each metric, the best value any one
    engine reached alone on this query (0 when no engine answered). No user choosing one engine per
    query can do better on any metric, so it is the strictest single-engine bar."""
    metrics = {m for scores in alone.values() for m in scores}
    return {m: max((scores[m] for scores in alone.values()), default=0.0) for m in sorted(metrics)} if alone \
        else {m: 0.0 for m in METRICS}
