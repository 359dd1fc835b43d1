#!/usr/bin/env python3
"""Measure ranking quality offline, compare with baselines, or refresh recordings.

    python scripts/bench.py [--queries bench/queries.json] [--fixtures bench/fixtures] [--json] [--plot]
    python scripts/bench.py --corpus ../shared/serp-corpus [--judgments bench/corpus-judgments.json] [--json]
    python scripts/bench.py --lists ../shared/multi-engine-lists [--json] [--check-floors]
    python scripts/bench.py --record [--engines a,b] [--endpoint NAME=URL]...   # the only networked mode

Replay (the default) reads vcrpy cassettes, one per query, and runs them
through the full pipeline; `--corpus` replays the real pages of the corpus
against the judgments in bench/; `--lists` scores our fusion on real engines'
ranked URL lists with graded URL judgments (plugin/bench/lists.py) against
SearXNG's merge, plain RRF, CombMNZ, round-robin, each engine alone and the
per-query oracle. `--check-floors` exits 1 when a metric of the corpus (or
lists) set falls below bench/floors.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plugin.bench.evaluation import METRICS, below_floors  # noqa: E402
from plugin.bench.lists import ListsError, load_lists  # noqa: E402
from plugin.bench.lists import report as lists_report  # noqa: E402
from plugin.bench.runner import every_engine_primary, record_query, replay_query, report  # noqa: E402
from plugin.errors import SearchError  # noqa: E402
from plugin.bench.corpus import corpus_cassette, load_queries  # noqa: E402
from plugin.pipeline.query import check_engines  # noqa: E402
from plugin.bench.replay import Cassette, cassette_name, no_recordings  # noqa: E402
from plugin.settings import Settings, parse_endpoints  # noqa: E402

BENCH = ROOT / "bench"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", default=str(BENCH / "queries.json"))
    parser.add_argument("--fixtures", default=str(BENCH / "fixtures"))
    parser.add_argument("--corpus", help="replay the real-page corpus in DIR instead of the fixtures")
    parser.add_argument("--judgments", default=str(BENCH / "corpus-judgments.json"))
    parser.add_argument("--lists", metavar="DIR",
                        help="score fusion on a folder of ranked URL lists with graded judgments (lists.json, "
                             "judgments.json)")
    parser.add_argument("--tier-aware", action="store_true",
                        help="corpus: replay tier-aware as a live search would (fallback engines only when the "
                             "primaries kept fewer than limit rows) instead of fusing every captured engine")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--plot", action="store_true", help="draw charts into bench/images/ (needs matplotlib)")
    parser.add_argument("--check-floors", action="store_true", help="exit 1 if the corpus set falls below floors")
    parser.add_argument("--floors", default=str(BENCH / "floors.json"))
    parser.add_argument("--record", action="store_true", help="refresh fixtures from the live engines")
    parser.add_argument("--engines", help="comma-separated engines (record mode)")
    parser.add_argument("--endpoint", action="append", metavar="NAME=URL", help="engine endpoint override")
    return parser.parse_args(argv)


async def run_replay(args: argparse.Namespace, settings: Settings) -> dict:
    if args.corpus:
        corpus = Path(args.corpus)
        if not corpus.is_dir():
            raise SystemExit(f"corpus directory {corpus} not found")
        queries = load_queries(args.judgments)
        if not args.tier_aware:
            settings = every_engine_primary(settings)
        qruns = [await replay_query(q, corpus_cassette(q, corpus), settings) for q in queries]
        mode = "tier-aware, as a live search" if args.tier_aware else "every captured engine in the first wave"
        return report(qruns, settings, label=f"corpus ({corpus}; {mode})")
    queries = load_queries(args.queries)
    fixtures = Path(args.fixtures)
    qruns, missing = [], []
    for query in queries:
        path = fixtures / cassette_name(query.id)
        if not path.exists():
            missing.append(query.id)
            continue
        qruns.append(await replay_query(query, Cassette.read(path), settings))
    if not qruns:  # one clear line, not a table of zeros
        raise SystemExit(no_recordings(fixtures))
    result = report(qruns, settings, missing=missing, label=f"fixtures ({fixtures})")
    if missing:
        result["note"] = (f"{len(missing)} of {len(queries)} queries have no recording in {fixtures}; "
                          "run `python scripts/bench.py --record` with network access to record them")
    return result


async def run_record(args: argparse.Namespace, settings: Settings) -> dict:
    engines = check_engines(args.engines)
    fixtures = Path(args.fixtures)
    outcomes = []
    for query in load_queries(args.queries):
        outcome = await record_query(query, fixtures, settings, engines)
        outcomes.append({"id": outcome.query_id, "cassette": str(outcome.path), "written": outcome.written,
                         "statuses": outcome.statuses, "kept_previous": outcome.kept_previous,
                         "response": outcome.response})
    return {"recorded": outcomes}


def floors_checked(result: dict, floors_path: Path) -> int:
    """How many floors `check_floors` compares for this result."""
    floors = json.loads(floors_path.read_text(encoding="utf-8"))["lists" if "comparisons" in result else "corpus"]
    return sum(len(values) for values in floors.values())


def check_floors(result: dict, floors_path: Path) -> list[str]:
    if "comparisons" in result:  # the lists bench: floors per system
        floors = json.loads(floors_path.read_text(encoding="utf-8"))["lists"]
        return [failure for system, values in floors.items()
                for failure in below_floors(result["systems"].get(system, {}), values, system)]
    floors = json.loads(floors_path.read_text(encoding="utf-8"))["corpus"]
    failures = []
    for scope, values in floors.items():
        # "overall", a query group ("multi_engine", "single_engine") or a language.
        measured = (result["overall"] if scope == "overall" else
                    result["groups"][scope]["systems"].get("ours", {}) if scope in result["groups"] else
                    result["by_language"].get(scope, {}))
        failures += below_floors(measured, values, scope)
    return failures


GROUP_TITLES = {"all": "all queries", "multi_engine": "multi-engine queries (fusion can matter)",
                "single_engine": "single-engine queries (fusion must not hurt)"}


def _metrics_row(name: str, m: dict) -> str:
    if not m or m.get("n", 0) == 0:
        return f"  {name:<22} (no data)"
    return "  " + f"{name:<22}" + "  ".join(f"{k} {m[k]:.3f}" for k in METRICS) + f"  (n={m['n']})"


def _comparison(c: dict) -> str:
    needed = c["queries_needed"]
    return (f"{c['diff']:+.3f} [{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] p={c['p_sign_flip']:.3f} "
            f"{c['wins']}/{c['losses']}/{c['ties']}" + (" *" if c["significant"] else "")
            + (f" need~{needed}" if needed else ""))


def render_lists(result: dict) -> str:
    lines = [f"set: {result['set']}  queries: {result['queries']}"]
    lines.extend("note: " + note for note in result["notes"])
    lines.append("\n== systems (ndcg@8 graded 2^g-1, p@8 grade >= 1, mrr@8 first grade 2) ==")
    for name, m in result["systems"].items():
        lines.append(f"  {name:<24}" + "  ".join(f"{k} {m[k]:.4f}" for k in result["metrics"]) + f"  (n={m['n']})")
    gap = result["oracle_gap_closed"]
    lines.append("  share of the gap from SearXNG's merge to the oracle that ours closes: "
                 + "  ".join(f"{m} {v:+.1%}" if v is not None else f"{m} -" for m, v in gap.items()))
    lines.append("\n== ours minus each system: diff [bootstrap 95% CI] sign-flip p  W/L/T (n) ==")
    for c in result["comparisons"]:
        lines.append(f"  vs {c['b']:<24}{c['metric']:<7} {c['diff']:+.4f} [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}] "
                     f"p={c['p']:.3f} {c['wins']}/{c['losses']}/{c['ties']} (n={c['n']})"
                     + (" *" if c["significant"] else ""))
    for title, groups in result["groups"].items():
        lines.append(f"\n== by {title} (ndcg@8; ours minus baseline) ==")
        for value, group in groups.items():
            systems = group["systems"]
            lines.append(f"  {title} {value} (n={group['n']}; {', '.join(group['engines'])}): "
                         + "  ".join(f"{name} {m['ndcg@8']:.3f}" for name, m in systems.items()))
            lines.append("      " + "  ".join(f"vs {c['b']} {c['diff']:+.3f} [{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}]"
                                              for c in group["ours_minus"]))
    return "\n".join(lines)


def render(result: dict) -> str:
    lines = [f"set: {result['set']}  queries: {result['overall'].get('n', 0)}"]
    if result.get("note"):
        lines.append("note: " + result["note"])
    for group, data in result["groups"].items():
        lines.append(f"\n== {GROUP_TITLES[group]}: {data['n']} ==")
        for name, m in data["systems"].items():
            lines.append(_metrics_row(name, m))
        if data["n"]:
            lines.append("  ours minus baseline: diff [bootstrap 95% CI] sign-flip p  W/L/T  (* = both tests "
                         "significant; need~N = queries a significant result would need)")
            for name, by_metric in data["ours_minus"].items():
                lines.append(f"  vs {name}:")
                lines.extend(f"      {m:<7} {_comparison(c)}" for m, c in by_metric.items())
    lines.append("\n== each engine alone, over the queries it answered (alone | ours | ours minus alone) ==")
    for name, data in result["by_engine"].items():
        lines.append(_metrics_row(name, data))
        lines.append(_metrics_row("  ours", data["ours"]))
        lines.extend(f"      {m:<7} {_comparison(c)}" for m, c in data["ours_minus_alone"].items())
    targets = result["targets"]
    lines.append("\n== targets ==")
    lines.append("multi-engine queries where ours drops an expected domain SearXNG's merge keeps in the top 8: "
                 + (", ".join(f"{d['id']} {d['kept_by_searxng_not_ours']}"
                              for d in targets["multi_engine_dropped_vs_searxng"]) or "none"))
    below = targets["single_engine_below_engine"]
    lines.append("single-engine queries where ours is below the engine's own order: "
                 + (", ".join(f"{b['id']} {b['metric']} {b['ours']:.3f}<{b['engine_alone']:.3f} ({b['cause']})"
                              for b in below) or "none"))
    if result.get("pending"):
        lines.append("captures waiting for an engine this checkout lacks: "
                     + "; ".join(f"{k}: {', '.join(v)}" for k, v in result["pending"].items()))
    if result["worst"]:
        w = result["worst"]
        lines.append(f"worst query: {w['id']} ({w['query']!r}) mrr@8 {w['metrics']['mrr@8']:.3f}")
    return "\n".join(lines)


def plot(result: dict, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    groups = {**{f"lang:{k}": v for k, v in result["by_language"].items()},
              **{f"cat:{k}": v for k, v in result["by_category"].items()}}
    names = list(groups)
    fig, ax = plt.subplots(figsize=(max(6, len(names) * 0.9), 4))
    ax.bar(range(len(names)), [groups[n]["mrr@8"] or 0 for n in names], color="#3b6ea5")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("MRR@8 (ours)")
    ax.set_ylim(0, 1)
    ax.set_title(f"MRR@8 by language and category — {result['set']}")
    fig.tight_layout()
    path = out_dir / "bench-groups.png"
    fig.savefig(path)
    plt.close(fig)
    written.append(path)

    shown = [g for g in ("multi_engine", "all") if result["groups"][g]["n"]]
    fig, axes = plt.subplots(1, len(shown), figsize=(7 * len(shown), 4.2), squeeze=False)
    for ax, group in zip(axes[0], shown):
        systems = result["groups"][group]["systems"]
        labels = list(systems)
        width = 0.8 / len(METRICS)
        for i, metric in enumerate(METRICS):
            ax.bar([x + i * width for x in range(len(labels))], [systems[s][metric] or 0 for s in labels], width,
                   label=metric)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))], labels, rotation=25, ha="right")
        ax.set_ylim(0, 1.15)
        ax.legend(fontsize=8, ncol=len(METRICS), loc="upper center")
        ax.set_title(f"{GROUP_TITLES[group]} (n={result['groups'][group]['n']})", fontsize=10)
    fig.suptitle(f"Ours vs baselines — {result['set']}", fontsize=11)
    fig.tight_layout()
    path = out_dir / "bench-baselines.png"
    fig.savefig(path)
    plt.close(fig)
    written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        endpoints = parse_endpoints(args.endpoint)
        settings = Settings(endpoints=endpoints) if endpoints else Settings()
        if args.record:
            result = asyncio.run(run_record(args, settings))
            print(json.dumps(result, indent=2, ensure_ascii=False, default=str) if args.json else
                  "\n".join(f"{o['id']}: {'written' if o['written'] else 'kept previous'} "
                            f"{o['statuses']} {o['kept_previous'] or ''}" for o in result["recorded"]))
            return 0
        if args.lists:
            result = lists_report(load_lists(args.lists), settings, label=f"lists ({args.lists})")
        else:
            result = asyncio.run(run_replay(args, settings))
    except SearchError as exc:  # a bad --endpoint or setting
        print(json.dumps(exc.to_dict(), ensure_ascii=False))
        return 2
    except ListsError as exc:  # a lists folder that is not one: say what is wrong, no traceback
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if args.lists:
        print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render_lists(result))
        return _floors_verdict(result, args)
    if args.plot:
        result["images"] = [str(p) for p in plot(result, BENCH / "images")]
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str) if args.json else render(result))
    return _floors_verdict(result, args)


def _floors_verdict(result: dict, args: argparse.Namespace) -> int:
    if not args.check_floors:
        return 0
    from plugin.bench.evaluation import floors_verdict

    failures = check_floors(result, Path(args.floors))
    for failure in failures:
        print("FLOOR: " + failure, file=sys.stderr)
    return floors_verdict(failures, args.floors, checked=floors_checked(result, Path(args.floors)))


if __name__ == "__main__":
    sys.exit(main())
