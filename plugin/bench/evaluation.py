"""Scoring a ranking against graded domain judgments, and comparing two rankers fairly.

Judged by domain, not URL: titles and snippets change constantly; the domain
is what ranking must get right. A result matches a judged domain when its host
equals it or is a subdomain of it. Grades: an expected domain is 2 (where a
person wants to land), an acceptable domain 1 (a good answer, not the first
choice), anything else 0.

Metrics over the top K = 8 rows:
- p@8: rows of a judged domain (grade ≥ 1), over 8.
- r@8: expected domains present, over the expected domains.
- mrr@8: 1 / rank of the first row of an expected domain (0 when none).
- ndcg@8: graded DCG with gain 2^grade − 1 counted once per judged domain (a
  second row of the same domain adds nothing), over the ideal DCG of the
  judged domains that any engine returned for the query (its pool), best
  grade first. 0 when the pool holds no judged domain.

Comparisons are paired by query: the mean difference with a paired-bootstrap
95% interval, a paired sign-flip randomisation test (exact when few queries
differ), and wins/losses/ties. With many exact ties the bootstrap interval is
optimistic, which is why the sign-flip p-value and the W/L/T counts sit next
to it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import NormalDist, mean, stdev
from typing import Iterable, Mapping, Sequence

from plugin.pipeline.canonical import host_of

K = 8
METRICS = ("p@8", "r@8", "mrr@8", "ndcg@8")


def matches(url: str, domains: Iterable[str]) -> str | None:
    """The judged domain this URL belongs to, if any."""
    h = host_of(url)
    for domain in domains:
        domain = domain.lower()
        if h == domain or h.endswith("." + domain):
            return domain
    return None


@dataclass(frozen=True)
class Judgment:
    expected: tuple[str, ...]  # grade 2
    acceptable: tuple[str, ...] = ()  # grade 1

    @classmethod
    def of(cls, judged: "Judgment | Sequence[str]") -> "Judgment":
        return judged if isinstance(judged, Judgment) else cls(tuple(judged))

    def grade(self, url: str) -> tuple[str | None, int]:
        """(the judged domain, its grade) for a URL; an expected domain wins over an acceptable one."""
        found = matches(url, self.expected)
        if found:
            return found, 2
        found = matches(url, self.acceptable)
        return (found, 1) if found else (None, 0)


def _dcg(gains: Sequence[int]) -> float:
    return sum((2 ** g - 1) / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def score(urls: Sequence[str], judged: "Judgment | Sequence[str]", k: int = K,
          pool: Iterable[str] | None = None) -> dict[str, float]:
    """p@8, r@8, mrr@8 and ndcg@8 of a ranking; `pool` is every URL any engine returned for the query
    (the ideal for nDCG); without it the ranking itself is the pool."""
    judgment = Judgment.of(judged)
    top = list(urls)[:k]
    graded = [judgment.grade(u) for u in top]
    precision = sum(1 for _, g in graded if g) / k
    found = {d for d, g in graded if g == 2}
    recall = len(found) / len(judgment.expected) if judgment.expected else 0.0
    rr = next((1.0 / rank for rank, (_, g) in enumerate(graded, start=1) if g == 2), 0.0)
    seen: set[str] = set()
    gains = []
    for domain, g in graded:
        gains.append(g if domain and domain not in seen else 0)
        if domain:
            seen.add(domain)
    best: dict[str, int] = {}
    for url in (pool if pool is not None else urls):
        domain, g = judgment.grade(url)
        if domain:
            best[domain] = max(best.get(domain, 0), g)
    ideal = _dcg(sorted(best.values(), reverse=True)[:k])
    ndcg = _dcg(gains) / ideal if ideal else 0.0
    return {"p@8": precision, "r@8": recall, "mrr@8": rr, "ndcg@8": ndcg}


def average(rows: Sequence[dict[str, float]]) -> dict[str, float | None]:
    if not rows:
        return {m: None for m in METRICS} | {"n": 0}
    return {m: round(mean(r[m] for r in rows), 4) for m in METRICS} | {"n": len(rows)}


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, float | bool]:
        return {"diff": round(self.mean, 4), "ci95": [round(self.low, 4), round(self.high, 4)],
                "significant": self.excludes_zero}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], rounds: int = 10000, seed: int = 7) -> Interval:
    """95% interval of mean(a - b) by resampling queries with replacement (paired)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    diffs = [x - y for x, y in zip(a, b)]
    if not diffs:
        return Interval(0.0, 0.0, 0.0)
    import numpy as np  # the bench extra's; a Python loop per draw took most of a bench's time

    rng = np.random.default_rng(seed)
    values = np.asarray(diffs, dtype=float)
    n = len(diffs)
    rows = max(1, 4_000_000 // n)  # resamples drawn at once (~32 MB of indices at most)
    means = np.sort(np.concatenate([values[rng.integers(0, n, size=(min(rows, rounds - done), n))].mean(axis=1)
                                    for done in range(0, rounds, rows)]))
    return Interval(mean(diffs), float(means[int(0.025 * rounds)]), float(means[int(0.975 * rounds) - 1]))


EXACT_SIGN_FLIP_MAX = 18  # up to 2^18 sign patterns are counted exactly; beyond, Monte Carlo


def sign_flip_p(a: Sequence[float], b: Sequence[float], rounds: int = 20000, seed: int = 7) -> float:
    """Two-sided p-value of the paired sign-flip (randomisation) test of mean(a - b) = 0.

    Under the null each query's difference is as likely to have either sign, so the observed
    |sum of differences| is compared with its distribution over every sign pattern. Ties (zero
    differences) do not move under a flip. Exact when at most 18 queries differ (the distribution of
    sums is built one query at a time), else `rounds` random patterns with the (count + 1) /
    (rounds + 1) estimate.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    diffs = [x - y for x, y in zip(a, b) if abs(x - y) > 1e-12]
    if not diffs:
        return 1.0
    observed = abs(sum(diffs)) - 1e-9
    if len(diffs) <= EXACT_SIGN_FLIP_MAX:
        sums: dict[float, int] = {0.0: 1}
        for d in diffs:
            grown: dict[float, int] = {}
            for total, count in sums.items():
                for signed in (round(total + d, 9), round(total - d, 9)):
                    grown[signed] = grown.get(signed, 0) + count
            sums = grown
        return sum(count for total, count in sums.items() if abs(total) >= observed) / 2 ** len(diffs)
    rng = random.Random(seed)
    hits = sum(1 for _ in range(rounds)
               if abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed)
    return (hits + 1) / (rounds + 1)


def wins_losses_ties(a: Sequence[float], b: Sequence[float]) -> tuple[int, int, int]:
    wins = sum(1 for x, y in zip(a, b) if x - y > 1e-12)
    losses = sum(1 for x, y in zip(a, b) if y - x > 1e-12)
    return wins, losses, len(a) - wins - losses


def queries_needed(a: Sequence[float], b: Sequence[float], alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Queries like these a paired test would need to call the observed mean difference significant
    (two-sided `alpha`, `power`), by the normal approximation n = ((z_α/2 + z_β) · sd / mean)²; at
    least 6, the fewest for which an all-wins sign-flip test reaches p < 0.05. None when the
    observed difference is zero (nothing to detect)."""
    diffs = [x - y for x, y in zip(a, b)]
    if len(diffs) < 2 or abs(mean(diffs)) < 1e-12:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    spread = stdev(diffs)
    return max(6, math.ceil((z * spread / abs(mean(diffs))) ** 2))


def compare(a: Sequence[float], b: Sequence[float]) -> dict:
    """Everything the bench says about mean(a) - mean(b) on paired queries."""
    wins, losses, ties = wins_losses_ties(a, b)
    interval = paired_bootstrap(a, b)
    p = sign_flip_p(a, b)
    return interval.to_dict() | {
        "p_sign_flip": round(p, 4), "wins": wins, "losses": losses, "ties": ties,
        # Significant only when both tests say so: the bootstrap interval excludes zero and p < 0.05.
        "significant": interval.excludes_zero and p < 0.05,
        "queries_needed": queries_needed(a, b),
    }


def below_floors(measured: Mapping[str, float | None], floors: Mapping[str, float], scope: str) -> list[str]:
    """Each metric of `floors` that `measured` lacks or falls below, said as `<scope> <metric> = <got> is
    below the floor <floor>` (the benches' --check-floors)."""
    return [f"{scope} {metric} = {measured.get(metric)} is below the floor {floor}"
            for metric, floor in floors.items()
            if measured.get(metric) is None or measured[metric] < floor]  # type: ignore[operator]


def floors_verdict(below: Sequence[str], floors_file: str, *, checked: int) -> int:
    """The benches' --check-floors verdict on stderr, either way (a check that says nothing when it passes
    cannot be told from one that did not run): 0 when the floors hold, 1 (naming each) when not."""
    import sys

    if below:
        print(f"below the floors of {floors_file}: " + "; ".join(below), file=sys.stderr)
        return 1
    print(f"floors hold: {checked} metric{'' if checked == 1 else 's'} at or above {floors_file}", file=sys.stderr)
    return 0
