#!/usr/bin/env python3
"""Grid-search the fusion knobs on recorded responses and test the best point against the defaults.

    python scripts/sweep.py [--corpus ../shared/serp-corpus | --fixtures bench/fixtures] [--quick] [--json] [--plot]

The full grid is 81 configurations: rrf_k 40/60/80 × authority_boost 0.1/0.25/0.4
× freshness_boost 0.1/0.2/0.35 × freshness_days 7/30/90; `--quick` keeps the 27
with freshness_days = 30. Each query's engines are replayed once (tier-aware,
gated) and only the fusion is re-run per configuration. The report gives
marginal means per knob and a paired bootstrap (MRR@8, by query) of the best
point against the shipped defaults; a default should change only when that
interval excludes zero.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plugin.bench.runner import rank_urls, replay_query  # noqa: E402
from plugin.bench.corpus import corpus_cassette, load_queries  # noqa: E402
from plugin.bench.evaluation import paired_bootstrap, score  # noqa: E402
from plugin.bench.replay import Cassette, cassette_name  # noqa: E402
from plugin.settings import Settings  # noqa: E402

GRID = {
    "rrf_k": (40, 60, 80),
    "authority_boost": (0.1, 0.25, 0.4),
    "freshness_boost": (0.1, 0.2, 0.35),
    "freshness_days": (7, 30, 90),
}


# Design choices outside the grid, each tried alone against the shipped defaults.
def alternatives() -> dict[str, dict]:
    from engines import ENGINES

    return {
        "same_index_discount=0.75": {"same_index_discount": 0.75},
        "same_index_discount=0.5": {"same_index_discount": 0.5},
        "off_region_weight=0.25": {"off_region_weight": 0.25},
        "off_region_weight=1.0": {"off_region_weight": 1.0},
        "freshness_scope=timely": {"freshness_scope": "timely"},
        "max_per_domain=2": {"max_per_domain": 2},
        "max_per_domain=3": {"max_per_domain": 3},
        "uniform engine weights": {"weights": {name: 1.0 for name in ENGINES}},
    }


def configurations(quick: bool) -> list[dict[str, float]]:
    grid = dict(GRID)
    if quick:
        grid["freshness_days"] = (30,)
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


async def load_runs(args: argparse.Namespace, settings: Settings):
    if args.corpus:
        queries = load_queries(args.judgments)
        return [await replay_query(q, corpus_cassette(q, args.corpus), settings) for q in queries]
    runs = []
    for query in load_queries(args.queries):
        path = Path(args.fixtures) / cassette_name(query.id)
        if path.exists():
            runs.append(await replay_query(query, Cassette.read(path), settings))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", help="replay the real-page corpus in DIR")
    parser.add_argument("--judgments", default=str(ROOT / "bench" / "corpus-judgments.json"))
    parser.add_argument("--queries", default=str(ROOT / "bench" / "queries.json"))
    parser.add_argument("--fixtures", default=str(ROOT / "bench" / "fixtures"))
    parser.add_argument("--quick", action="store_true", help="27-point subset (freshness_days fixed at 30)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--plot", action="store_true", help="draw the marginals into bench/images/")
    args = parser.parse_args(argv)
    if not args.corpus and not (ROOT / "bench" / "fixtures").exists():
        args.corpus = str(ROOT.parent / "shared" / "serp-corpus")

    base = Settings()
    qruns = asyncio.run(load_runs(args, base))
    if not qruns:
        print(json.dumps({"error": "no recorded queries to sweep"}))
        return 1

    def per_query(overrides: dict, metric: str) -> list[float]:
        settings = base.model_copy(update=overrides)
        return [score(rank_urls(settings, q), q.query.judgment, pool=q.pool)[metric] for q in qruns]

    def mrr_per_query(overrides: dict) -> list[float]:
        return per_query(overrides, "mrr@8")

    defaults = {k: getattr(base, k) for k in GRID}
    default_scores = mrr_per_query(defaults)
    points = []
    for config in configurations(args.quick):
        scores = mrr_per_query(config)
        points.append({"config": config, "mrr@8": round(mean(scores), 4), "_scores": scores})
    best = max(points, key=lambda p: (p["mrr@8"], p["config"] == defaults))
    interval = paired_bootstrap(best["_scores"], default_scores)
    marginals = {
        knob: {str(value): round(mean(p["mrr@8"] for p in points if p["config"][knob] == value), 4)
               for value in sorted({p["config"][knob] for p in points})}
        for knob in GRID
    }
    alternative_report = {}
    default_recall = per_query(defaults, "r@8")
    for name, overrides in alternatives().items():
        scores = mrr_per_query(overrides)
        recall = per_query(overrides, "r@8")
        alternative_report[name] = {"mrr@8": round(mean(scores), 4),
                                    "minus_defaults": paired_bootstrap(scores, default_scores).to_dict(),
                                    "r@8": round(mean(recall), 4),
                                    "r@8_minus_defaults": paired_bootstrap(recall, default_recall).to_dict()}
    result = {
        "set": "corpus" if args.corpus else "fixtures",
        "queries": len(qruns),
        "points": [{k: v for k, v in p.items() if k != "_scores"} for p in points],
        "defaults": {"config": defaults, "mrr@8": round(mean(default_scores), 4)},
        "best": {"config": best["config"], "mrr@8": best["mrr@8"]},
        "best_minus_defaults": interval.to_dict(),
        "marginals": marginals,
        "alternatives": alternative_report,
        "verdict": ("change the defaults to the best point: its interval excludes zero" if interval.excludes_zero
                    else "keep the defaults: the best point's interval includes zero"),
    }
    if args.plot:
        result["images"] = [str(plot(marginals))]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['set']}: {len(qruns)} queries, {len(points)} configurations")
        print(f"defaults {defaults} -> MRR@8 {result['defaults']['mrr@8']}")
        print(f"best     {best['config']} -> MRR@8 {best['mrr@8']}")
        d = result["best_minus_defaults"]
        print(f"best - defaults: {d['diff']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] -> {result['verdict']}")
        for knob, values in marginals.items():
            print(f"  {knob:<16} " + "  ".join(f"{v}: {m:.4f}" for v, m in values.items()))
        print("alternatives (each alone, minus defaults, paired bootstrap 95% CI):")
        for name, alt in alternative_report.items():
            d, r = alt["minus_defaults"], alt["r@8_minus_defaults"]
            print(f"  {name:<26} MRR@8 {alt['mrr@8']:.4f} {d['diff']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}]"
                  + (" *" if d["significant"] else "  ")
                  + f"  r@8 {alt['r@8']:.4f} {r['diff']:+.4f} [{r['ci95'][0]:+.4f}, {r['ci95'][1]:+.4f}]"
                  + (" *" if r["significant"] else ""))
    return 0


def plot(marginals: dict) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = ROOT / "bench" / "images"
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(marginals), figsize=(3.2 * len(marginals), 3), sharey=True)
    for ax, (knob, values) in zip(axes, marginals.items()):
        ax.plot(list(values), list(values.values()), marker="o")
        ax.set_title(knob)
        ax.set_xlabel("value")
    axes[0].set_ylabel("mean MRR@8")
    fig.tight_layout()
    path = out / "sweep-marginals.png"
    fig.savefig(path)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
