#!/usr/bin/env python3
"""Measure ranking quality offline, compare with baselines, or refresh recordings.

    python scripts/bench.py [--queries bench/queries.json] [--fixtures bench/fixtures] [--json] [--plot]
    python scripts/bench.py --corpus ../shared/serp-corpus [--judgments bench/corpus-judgments.json] [--json]
    python scripts/bench.py --record [--engines a,b] [--endpoint NAME=URL]...   # the only networked mode

Replay (the default) reads vcrpy cassettes, one per query, and runs them
through the full pipeline; `--corpus` replays the real pages of the corpus
against the judgments in bench/. `--check-floors` exits 1 when a metric of the
corpus set falls below bench/floors.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plugin.bench.runner import record_query, replay_query, report  # noqa: E402
from plugin.surfaces.cli import UsageError, _parse_endpoints  # noqa: E402
from plugin.bench.corpus import corpus_cassette, load_queries  # noqa: E402
from plugin.pipeline.query import check_engines  # noqa: E402
from plugin.bench.replay import Cassette, cassette_name  # noqa: E402
from plugin.settings import Settings  # noqa: E402

BENCH = ROOT / "bench"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", default=str(BENCH / "queries.json"))
    parser.add_argument("--fixtures", default=str(BENCH / "fixtures"))
    parser.add_argument("--corpus", help="replay the real-page corpus in DIR instead of the fixtures")
    parser.add_argument("--judgments", default=str(BENCH / "corpus-judgments.json"))
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
        qruns = [await replay_query(q, corpus_cassette(q, corpus), settings) for q in queries]
        return report(qruns, settings, label=f"corpus ({corpus})")
    queries = load_queries(args.queries)
    fixtures = Path(args.fixtures)
    qruns, missing = [], []
    for query in queries:
        path = fixtures / cassette_name(query.id)
        if not path.exists():
            missing.append(query.id)
            continue
        qruns.append(await replay_query(query, Cassette.read(path), settings))
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


def check_floors(result: dict, floors_path: Path) -> list[str]:
    floors = json.loads(floors_path.read_text(encoding="utf-8"))["corpus"]
    failures = []
    for scope, values in floors.items():
        measured = result["overall"] if scope == "overall" else result["by_language"].get(scope, {})
        for metric, floor in values.items():
            got = measured.get(metric)
            if got is None or got < floor:
                failures.append(f"{scope} {metric} = {got} is below the floor {floor}")
    return failures


def render(result: dict) -> str:
    lines = [f"set: {result['set']}  queries: {result['overall'].get('n', 0)}"]
    if result.get("note"):
        lines.append("note: " + result["note"])

    def row(name: str, m: dict) -> str:
        if not m or m.get("n", 0) == 0:
            return f"  {name:<28} (no data)"
        return f"  {name:<28} p@8 {m['p@8']:.3f}  r@8 {m['r@8']:.3f}  mrr@8 {m['mrr@8']:.3f}  (n={m['n']})"

    lines.append(row("overall", result["overall"]))
    for title, key in (("by language", "by_language"), ("by category", "by_category"), ("by engine", "by_engine")):
        lines.append(title + ":")
        lines.extend(row(name, m) for name, m in result[key].items())
    lines.append("baselines (MRR@8 ours minus baseline, paired bootstrap 95% CI):")
    for name, b in result["baselines"].items():
        d = b["mrr_diff_ours_minus_baseline"]
        lines.append(row(name, b["overall"]) + f"  diff {d['diff']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"
                     + (" *" if d["significant"] else ""))
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

    systems = {"ours": result["overall"], **{k: v["overall"] for k, v in result["baselines"].items()}}
    fig, ax = plt.subplots(figsize=(8, 4))
    labels = list(systems)
    width = 0.27
    for i, metric in enumerate(("p@8", "r@8", "mrr@8")):
        ax.bar([x + i * width for x in range(len(labels))], [systems[s][metric] or 0 for s in labels], width,
               label=metric)
    ax.set_xticks([x + width for x in range(len(labels))], labels, rotation=20, ha="right")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title(f"Ours vs baselines — {result['set']}")
    fig.tight_layout()
    path = out_dir / "bench-baselines.png"
    fig.savefig(path)
    plt.close(fig)
    written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        endpoints = _parse_endpoints(args.endpoint)
        settings = Settings(endpoints=endpoints) if endpoints else Settings()
        if args.record:
            result = asyncio.run(run_record(args, settings))
            print(json.dumps(result, indent=2, ensure_ascii=False, default=str) if args.json else
                  "\n".join(f"{o['id']}: {'written' if o['written'] else 'kept previous'} "
                            f"{o['statuses']} {o['kept_previous'] or ''}" for o in result["recorded"]))
            return 0
        result = asyncio.run(run_replay(args, settings))
    except UsageError as exc:
        print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
        return 2
    if args.plot:
        result["images"] = [str(p) for p in plot(result, BENCH / "images")]
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str) if args.json else render(result))
    if args.check_floors:
        failures = check_floors(result, Path(args.floors))
        for failure in failures:
            print("FLOOR: " + failure, file=sys.stderr)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
