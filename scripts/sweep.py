#!/usr/bin/env python3
"""Grid-search the fusion knobs on recorded responses and test the best point against the defaults.

    python scripts/sweep.py [--corpus ../shared/serp-corpus | --fixtures bench/fixtures] [--quick] [--json] [--plot]
    python scripts/sweep.py --lists ../shared/multi-engine-lists [--json]

Scores are in units of one engine's top vote (plugin/pipeline/fusion.py), so the
grid spans boosts far below a vote to a whole vote: rrf_k 1/2/5/10/60 ×
authority_boost 0/0.2/0.4/0.8 (a multiple of the row's own votes) ×
freshness_boost 0/0.1/0.2/0.4 × freshness_days 7/30/90 (240 points; `--quick`
runs 12: rrf_k 2/60 × authority_boost 0/0.4/0.8 × freshness_boost 0/0.2 at 30
days).

`--lists` sweeps the multi-engine ranked lists (plugin/bench/lists.py; no
titles, snippets or dates, so authority and freshness play little part and
coverage reads the URL alone) over rrf_k 1/2/3/5/10/20/60 × trust_strength
0/0.25/0.5/1 × same_index_discount 1/0.75/0.5 × coverage_boost 0/0.1/0.2/0.35
× engine weights (the defaults, or Startpage 0.9 and Yahoo 0.8 as before issue
20): 672 points, chosen by 5-fold cross-validation (each fold's point picked on the
other four folds). The CV estimate is what tuning on this grid is worth on
queries it never saw; a default changes only when that estimate beats the
defaults with an interval that excludes zero. Named points sit beside the grid: the shipped defaults,
zero boosts, the values the modelled plugin ships (rrf_k 60, authority 0.25,
freshness 0.2 over 30 days) and the pre-issue-12 behaviour written in the new
unit (boosts 61 times larger, `.gov`/`.edu` suffixes, freshness on every query).

Each query's engines are replayed once (tier-aware, gated) and only the fusion
is re-run per configuration. The objective is mean nDCG@8 over all judged
queries (MRR@8 breaks ties); the report gives marginal means per knob (all
queries and multi-engine queries), the best point against the defaults (paired
bootstrap interval, sign-flip p, wins/losses/ties, on nDCG@8 and MRR@8), and
design alternatives each tried alone against the defaults. A default changes
only when the best point's interval excludes zero and its sign-flip p < 0.05.
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

from plugin.bench.corpus import corpus_cassette, load_queries  # noqa: E402
from plugin.bench.evaluation import METRICS, compare, score  # noqa: E402
from plugin.bench.replay import Cassette, cassette_name, no_recordings  # noqa: E402
from plugin.bench.runner import every_engine_primary, rank_urls, replay_query  # noqa: E402
from plugin.settings import DEFAULT_OFFICIAL_SITES, Settings  # noqa: E402

GRID = {
    "rrf_k": (1, 2, 5, 10, 60),
    "authority_boost": (0.0, 0.2, 0.4, 0.8),
    "freshness_boost": (0.0, 0.1, 0.2, 0.4),
    "freshness_days": (7, 30, 90),
}
LIST_GRID = {
    "rrf_k": (1, 2, 3, 5, 10, 20, 60),
    "trust_strength": (0.0, 0.25, 0.5, 1.0),
    "same_index_discount": (1.0, 0.75, 0.5),
    "coverage_boost": (0.0, 0.1, 0.2, 0.35),
    "weights": ("defaults", "startpage 0.9, yahoo 0.8"),
}
LIST_WEIGHTS = {"defaults": {}, "startpage 0.9, yahoo 0.8": {"startpage": 0.9, "yahoo": 0.8}}
OBJECTIVE = "ndcg@8"
OLD_SUFFIXES = [".gov", ".edu", ".mil", ".int", ".gov.cn", ".edu.cn", ".ac.cn", ".gov.uk", ".ac.uk", ".gov.au",
                ".edu.au", ".go.jp", ".ac.jp", ".gc.ca", ".europa.eu"]


def named_points() -> dict[str, dict]:
    return {
        "zero boosts": {"authority_boost": 0.0, "freshness_boost": 0.0},
        "modelled plugin (rrf_k 60, authority 0.25, freshness 0.2 / 30 days)":
            {"rrf_k": 60, "authority_boost": 0.25, "freshness_boost": 0.2, "freshness_days": 30},
        "pre-issue-12 scale (boosts x61, suffixes, freshness everywhere)":
            {"rrf_k": 60, "authority_boost": 0.25 * 61, "freshness_boost": 0.2 * 61, "freshness_days": 30,
             "authority_suffixes": OLD_SUFFIXES, "freshness_scope": "all"},
    }


def alternatives(qruns) -> dict[str, dict]:
    """Design choices outside the grid, each tried alone against the shipped defaults."""
    from engines import ENGINES

    # Entries of the official-sites table that name something a judged query names: the table with
    # them removed shows how much of the result comes from the table knowing the bench's own subjects.
    from plugin.pipeline.intent import official_domains
    named = {name for q in qruns for name in DEFAULT_OFFICIAL_SITES
             if official_domains(q.query.query, {name: DEFAULT_OFFICIAL_SITES[name]})}
    return {
        "same_index_discount=0.5": {"same_index_discount": 0.5},
        "same_index_discount=0.75": {"same_index_discount": 0.75},
        "off_region_weight=0.25": {"off_region_weight": 0.25},
        "off_region_weight=1.0": {"off_region_weight": 1.0},
        "freshness_scope=all": {"freshness_scope": "all"},
        "max_per_domain=2": {"max_per_domain": 2},
        "max_per_domain=3": {"max_per_domain": 3},
        "uniform engine weights": {"weights": {name: 1.0 for name in ENGINES}},
        "official_from_name=false": {"official_from_name": False},
        f"official table without the {len(named)} entries judged queries name ({', '.join(sorted(named))})": {
            "official_sites": {k: list(v) for k, v in DEFAULT_OFFICIAL_SITES.items() if k not in named}},
        "no official table": {"official_sites": {}},
        "no reference domains": {"authority_domains": []},
        "old suffix authority added": {"authority_suffixes": OLD_SUFFIXES},
    }


QUICK = {"rrf_k": (2, 60), "authority_boost": (0.0, 0.4, 0.8), "freshness_boost": (0.0, 0.2),
         "freshness_days": (30,)}


def configurations(quick: bool) -> list[dict[str, float]]:
    grid = QUICK if quick else GRID
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


def sweep_lists(folder: str, *, seed: int = 20) -> dict:
    """The lists grid under 5-fold cross-validation (see the module docstring)."""
    from plugin.bench.lists import cross_validate_scored, load_lists, score_queries

    queries = load_lists(folder)
    defaults = Settings()
    keys = list(LIST_GRID)
    points: dict[str, dict] = {}
    for values in itertools.product(*(LIST_GRID[k] for k in keys)):
        config = dict(zip(keys, values))
        points[", ".join(f"{k} {v}" for k, v in config.items())] = config

    def settings_of(config: dict) -> Settings:
        update = {k: v for k, v in config.items() if k != "weights"}
        return defaults.model_copy(update=update | {"weights": {**defaults.weights, **LIST_WEIGHTS[config["weights"]]}})

    def is_default(config: dict) -> bool:
        return config["weights"] == "defaults" and all(getattr(defaults, k) == v for k, v in config.items()
                                                       if k != "weights")

    # The defaults first: a fold whose best points tie keeps them.
    ordered = sorted(points, key=lambda name: not is_default(points[name]))
    scored = {name: score_queries(queries, settings_of(points[name])) for name in ordered}
    reference = score_queries(queries, defaults)
    cv = cross_validate_scored(reference, scored, seed=seed)
    marginals = {knob: {str(value): round(mean(cv["points"][n][OBJECTIVE] for n in ordered
                                               if points[n][knob] == value), 4)
                        for value in LIST_GRID[knob]} for knob in keys}
    best = max(ordered, key=lambda n: (cv["points"][n][OBJECTIVE], n == ordered[0]))
    versus_defaults = next(c for c in cv["comparisons"] if c["b"] == "ours" and c["metric"] == OBJECTIVE)
    change = versus_defaults["ci"][0] > 0 and versus_defaults["p"] < 0.05
    return {
        "set": f"lists ({folder})", "queries": len(queries), "objective": OBJECTIVE, "points": len(points),
        "defaults": {k: getattr(defaults, k) for k in keys if k != "weights"} | {"weights": "defaults"},
        "defaults_score": cv["ours"], "cv": cv["cv"], "folds": cv["folds"], "comparisons": cv["comparisons"],
        "best_in_sample": {"point": best, **cv["points"][best]}, "marginals": marginals,
        "verdict": ("change the defaults to the best point: tuning on this grid beats them on held-out folds"
                    if change else "keep the defaults: tuning on this grid does not beat them on held-out folds"),
    }


def render_lists(result: dict) -> str:
    lines = [f"{result['set']}: {result['queries']} queries, {result['points']} grid points, objective "
             f"{result['objective']}, 5-fold cross-validation",
             f"defaults {result['defaults']} -> " + _metrics(result["defaults_score"]),
             "CV estimate (each fold's point chosen on the other folds) -> " + _metrics(result["cv"])]
    lines += [f"  fold {f['fold']}: chose {f['chosen']} (train {OBJECTIVE} {f['train_' + OBJECTIVE]})"
              for f in result["folds"]]
    lines.append("CV estimate minus each system: diff [bootstrap 95% CI] sign-flip p W/L/T")
    lines += [f"  vs {c['b']:<14}{c['metric']:<7} {c['diff']:+.4f} [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}] "
              f"p={c['p']:.3f} {c['wins']}/{c['losses']}/{c['ties']}" for c in result["comparisons"]]
    b = result["best_in_sample"]
    lines.append(f"best point on all queries (in-sample, optimistic): {b['point']} -> " + _metrics(b))
    lines.append("verdict: " + result["verdict"])
    lines.append(f"marginal mean {OBJECTIVE} per knob value:")
    for knob, values in result["marginals"].items():
        lines.append(f"  {knob:<20} " + "  ".join(f"{v}: {m:.4f}" for v, m in values.items()))
    return "\n".join(lines)


def _metrics(m: dict) -> str:
    return "  ".join(f"{k} {m[k]:.4f}" for k in ("ndcg@8", "p@8", "mrr@8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lists", metavar="DIR", help="sweep the multi-engine ranked lists in DIR by 5-fold CV")
    parser.add_argument("--corpus", help="replay the real-page corpus in DIR")
    parser.add_argument("--judgments", default=str(ROOT / "bench" / "corpus-judgments.json"))
    parser.add_argument("--queries", default=str(ROOT / "bench" / "queries.json"))
    parser.add_argument("--fixtures", default=str(ROOT / "bench" / "fixtures"))
    parser.add_argument("--quick", action="store_true", help="12-point subset, for a quick check")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--plot", action="store_true", help="draw the marginals into bench/images/")
    args = parser.parse_args(argv)
    if args.lists:
        from plugin.bench.lists import ListsError

        try:
            result = sweep_lists(args.lists)
        except ListsError as exc:
            print(f"sweep: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render_lists(result))
        return 0

    # The corpus is swept as the bench measures it: every captured engine in the first wave.
    base = every_engine_primary(Settings()) if args.corpus else Settings()
    qruns = asyncio.run(load_runs(args, base))
    if not qruns:  # one clear line, not {"error": ...}
        raise SystemExit(no_recordings(args.fixtures))
    multi = [i for i, q in enumerate(qruns) if q.multi_engine]

    def evaluate(overrides: dict) -> dict[str, list[float]]:
        settings = base.model_copy(update=overrides)
        scored = [score(rank_urls(settings, q), q.query.judgment, pool=q.pool) for q in qruns]
        return {m: [s[m] for s in scored] for m in METRICS}

    def summary(per_query: dict[str, list[float]]) -> dict:
        return {m: round(mean(v), 4) for m, v in per_query.items()} | {
            f"multi {m}": round(mean(per_query[m][i] for i in multi), 4) if multi else None for m in METRICS}

    def against(per_query: dict[str, list[float]], reference: dict[str, list[float]]) -> dict:
        """Every metric, on all queries and on the multi-engine ones: a change must not lose on any."""
        result = {m: compare(per_query[m], reference[m]) for m in METRICS}
        if multi:
            result |= {f"multi {m}": compare([per_query[m][i] for i in multi], [reference[m][i] for i in multi])
                       for m in METRICS}
        return result

    defaults = {k: getattr(base, k) for k in GRID}
    default_scores = evaluate({})
    points = []
    for config in configurations(args.quick):
        per_query = evaluate(config)
        points.append({"config": config, **summary(per_query), "_scores": per_query})
    best = max(points, key=lambda p: (p[OBJECTIVE], p["mrr@8"], p["config"] == defaults))
    best_vs_defaults = against(best["_scores"], default_scores)
    marginals = {
        knob: {str(value): {"all": round(mean(p[OBJECTIVE] for p in points if p["config"][knob] == value), 4),
                            "multi": (round(mean(p[f"multi {OBJECTIVE}"] for p in points
                                                 if p["config"][knob] == value), 4) if multi else None)}
               for value in sorted({p["config"][knob] for p in points})}
        for knob in GRID
    }
    named = {}
    for name, overrides in named_points().items():
        per_query = evaluate(overrides)
        named[name] = {"config": overrides, **summary(per_query), "minus_defaults": against(per_query, default_scores)}
    alternative_report = {}
    for name, overrides in alternatives(qruns).items():
        per_query = evaluate(overrides)
        alternative_report[name] = {**summary(per_query), "minus_defaults": against(per_query, default_scores)}
    decisive = best_vs_defaults[OBJECTIVE]
    result = {
        "set": "corpus" if args.corpus else "fixtures",
        "queries": len(qruns),
        "multi_engine_queries": len(multi),
        "objective": OBJECTIVE,
        "points": [{k: v for k, v in p.items() if k != "_scores"} for p in points],
        "defaults": {"config": defaults, **summary(default_scores)},
        "best": {"config": best["config"], **{k: v for k, v in best.items() if k not in ("config", "_scores")}},
        "best_minus_defaults": best_vs_defaults,
        "marginals": marginals,
        "named": named,
        "alternatives": alternative_report,
        "verdict": ("change the defaults to the best point: its interval excludes zero and p < 0.05"
                    if decisive["significant"] else
                    "keep the defaults: the best point is not significantly better"),
    }
    if args.plot:
        result["images"] = [str(plot(marginals))]
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render(result))
    return 0


def _fmt(c: dict) -> str:
    return (f"{c['diff']:+.4f} [{c['ci95'][0]:+.4f}, {c['ci95'][1]:+.4f}] p={c['p_sign_flip']:.3f} "
            f"{c['wins']}/{c['losses']}/{c['ties']}" + (" *" if c["significant"] else ""))


def _line(name: str, data: dict) -> list[str]:
    lines = [f"  {name}: {OBJECTIVE} {data[OBJECTIVE]:.4f}  mrr@8 {data['mrr@8']:.4f}  "
             f"(multi-engine {data[f'multi {OBJECTIVE}']}, {data['multi mrr@8']})"]
    lines += [f"      minus defaults {m:<13} {_fmt(c)}" for m, c in data["minus_defaults"].items()]
    return lines


def render(result: dict) -> str:
    d, b = result["defaults"], result["best"]
    lines = [f"{result['set']}: {result['queries']} queries ({result['multi_engine_queries']} multi-engine), "
             f"{len(result['points'])} grid points, objective {result['objective']}",
             f"defaults {d['config']} -> {OBJECTIVE} {d[OBJECTIVE]}  mrr@8 {d['mrr@8']}  "
             f"(multi-engine {d[f'multi {OBJECTIVE}']}, {d['multi mrr@8']})",
             f"best     {b['config']} -> {OBJECTIVE} {b[OBJECTIVE]}  mrr@8 {b['mrr@8']}  "
             f"(multi-engine {b[f'multi {OBJECTIVE}']}, {b['multi mrr@8']})"]
    lines += [f"  best minus defaults {m:<13} {_fmt(c)}" for m, c in result["best_minus_defaults"].items()]
    lines.append("verdict: " + result["verdict"])
    lines.append(f"marginal mean {OBJECTIVE} per knob value (all queries | multi-engine):")
    for knob, values in result["marginals"].items():
        lines.append(f"  {knob:<16} " + "  ".join(f"{v}: {m['all']:.4f}|{m['multi']:.4f}" for v, m in values.items()))
    lines.append("named points:")
    for name, data in result["named"].items():
        lines += _line(name, data)
    lines.append("alternatives (each alone):")
    for name, data in result["alternatives"].items():
        lines += _line(name, data)
    return "\n".join(lines)


def plot(marginals: dict) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = ROOT / "bench" / "images"
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(marginals), figsize=(3.2 * len(marginals), 3), sharey=True)
    for ax, (knob, values) in zip(axes, marginals.items()):
        ax.plot(list(values), [m["all"] for m in values.values()], marker="o", label="all")
        ax.plot(list(values), [m["multi"] or 0 for m in values.values()], marker="s", label="multi-engine")
        ax.set_title(knob)
        ax.set_xlabel("value")
    axes[0].set_ylabel(f"mean {OBJECTIVE}")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = out / "sweep-marginals.png"
    fig.savefig(path)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
