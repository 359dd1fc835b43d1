"""Scoring a ranking against expected domains, and comparing two rankers fairly.

Judged by domain, not URL: titles and snippets change constantly; the domain
is what ranking must get right. A result matches an expected domain when its
host equals it or is a subdomain of it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from statistics import mean
from typing import Iterable, Sequence
from urllib.parse import urlsplit

K = 8
METRICS = ("p@8", "r@8", "mrr@8")


def host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def matches(url: str, expected: Iterable[str]) -> str | None:
    """The expected domain this URL belongs to, if any."""
    h = host(url)
    for domain in expected:
        domain = domain.lower()
        if h == domain or h.endswith("." + domain):
            return domain
    return None


def score(urls: Sequence[str], expected: Sequence[str], k: int = K) -> dict[str, float]:
    top = list(urls)[:k]
    hits = [matches(u, expected) for u in top]
    precision = sum(1 for h in hits if h) / k
    recall = len({h for h in hits if h}) / len(expected) if expected else 0.0
    rr = next((1.0 / rank for rank, h in enumerate(hits, start=1) if h), 0.0)
    return {"p@8": precision, "r@8": recall, "mrr@8": rr}


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
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return Interval(mean(diffs), means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1])
