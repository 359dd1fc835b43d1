"""The bench: replay recorded engine responses through the full pipeline and score the rows.

Replay is tier-aware (primary engines first, fallback only when no primary kept
a row) and applies the same relevance gate as a live search. Each query runs
with fresh cooldown state, at the moment it was recorded. Baselines rank the
same recorded rows. `--record` (scripts/bench.py) is the only mode that
touches the network.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from statistics import mean
from typing import Callable, Iterable, Sequence

from pydantic import SecretStr

from engines import ENGINES
from engines.base import Row
from plugin.bench import baselines
from plugin.bench.corpus import JudgedQuery
from plugin.bench.evaluation import METRICS, average, paired_bootstrap, score
from plugin.bench.replay import Cassette, Recordings, RecordingTransport, ReplayTransport, cassette_name
from plugin.pipeline.searcher import EngineRun, Searcher, SearchPlan
from plugin.settings import KEY_FIELDS, Settings
from plugin.infra.state import MemoryState

USABLE = ("ok", "empty", "irrelevant")


def replay_settings(settings: Settings, recorded: Iterable[str]) -> Settings:
    """Settings under which every recorded engine is enabled (placeholder keys never leave the process)."""
    recorded = set(recorded)
    update: dict = {}
    for name in recorded:
        env = KEY_FIELDS.get(name)
        if env and settings.api_key(name) is None:
            update[env.lower()] = SecretStr("replay-placeholder")
    if "searxng" in recorded and not settings.searxng_url:
        update["searxng_url"] = "https://searxng.invalid"
    update["endpoints"] = {}  # replay never rewrites hosts: recordings are keyed by the engines' own
    return settings.model_copy(update=update) if update else settings


@dataclass
class QueryRun:
    query: JudgedQuery
    plan: SearchPlan
    runs: list[EngineRun]
    engine_rows: dict[str, list[Row]] = field(default_factory=dict)  # every recorded engine, alone
    statuses: dict[str, str] = field(default_factory=dict)


async def replay_query(query: JudgedQuery, cassette: Cassette, settings: Settings) -> QueryRun:
    recordings = Recordings([cassette])
    settings = replay_settings(settings, recordings.engines())
    searcher = Searcher(settings, transport=ReplayTransport(settings, recordings), state=MemoryState())
    plan = searcher.plan(query.query, limit=8, now=cassette.recorded_at)
    runs = await searcher.run_tiers(plan)
    solo = Searcher(settings, transport=ReplayTransport(settings, recordings), state=MemoryState())
    recorded = [name for name in ENGINES if any(ex.engine == name for ex in cassette.exchanges)]
    engine_rows = {}
    for name in recorded:
        run = await solo.run_engine(ENGINES[name], solo.tier_of(ENGINES[name]), plan)
        engine_rows[name] = run.all_rows
    return QueryRun(query=query, plan=plan, runs=runs, engine_rows=engine_rows,
                    statuses={run.engine.name: run.status for run in runs})


def rank_urls(settings: Settings, qrun: QueryRun) -> list[str]:
    return [row.url for row in Searcher(settings, state=MemoryState()).rank(qrun.plan, qrun.runs)]


BASELINES: dict[str, Callable[[QueryRun], list[str]]] = {
    "searxng": lambda q: baselines.searxng_merge(q.engine_rows, {}),
    "ddgs": lambda q: baselines.ddgs_rank(q.engine_rows, q.query.query),
    "concatenation": lambda q: baselines.concatenation(q.engine_rows),
    "round_robin": lambda q: baselines.round_robin(q.engine_rows),
}


def _group(rows: list[dict], key: str) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row["metrics"])
    return {name: average(items) for name, items in sorted(groups.items())}


def report(qruns: Sequence[QueryRun], settings: Settings, missing: Sequence[str] = (), label: str = "") -> dict:
    per_query = []
    ours_mrr = []
    for qrun in qruns:
        urls = rank_urls(settings, qrun)
        metrics = score(urls, qrun.query.expected_domains)
        ours_mrr.append(metrics["mrr@8"])
        per_query.append({
            "id": qrun.query.id, "query": qrun.query.query, "lang": qrun.query.lang,
            "category": qrun.query.category, "expected_domains": list(qrun.query.expected_domains),
            "metrics": {m: round(v, 4) for m, v in metrics.items()}, "top": urls[:8], "engines": qrun.statuses,
        })
    by_engine_rows: dict[str, list[dict]] = defaultdict(list)
    for qrun in qruns:
        for name, rows in qrun.engine_rows.items():
            by_engine_rows[name].append(score(baselines.single_engine(qrun.engine_rows, name),
                                              qrun.query.expected_domains))
    by_engine = {name: average(rows) for name, rows in sorted(by_engine_rows.items())}

    # Best single engine: highest mean MRR over the whole set (0 where it has no recording).
    engine_names = sorted(by_engine)
    single_mrr = {name: [score(baselines.single_engine(q.engine_rows, name), q.query.expected_domains)["mrr@8"]
                         for q in qruns] for name in engine_names}
    best_engine = max(engine_names, key=lambda n: (mean(single_mrr[n]) if qruns else 0, n)) if engine_names else None

    baseline_report = {}
    systems = dict(BASELINES)
    if best_engine:
        systems[f"best_single ({best_engine})"] = lambda q, e=best_engine: baselines.single_engine(q.engine_rows, e)
    for name, ranker in systems.items():
        rows = [score(ranker(q), q.query.expected_domains) for q in qruns]
        baseline_report[name] = {
            "overall": average(rows),
            "mrr_diff_ours_minus_baseline": paired_bootstrap(ours_mrr, [r["mrr@8"] for r in rows]).to_dict(),
        }
    worst = min(per_query, key=lambda r: (r["metrics"]["mrr@8"], r["metrics"]["p@8"], r["id"])) if per_query else None
    return {
        "set": label,
        "overall": average([r["metrics"] for r in per_query]),
        "by_language": _group(per_query, "lang"),
        "by_category": _group(per_query, "category"),
        "by_engine": by_engine,
        "worst": worst,
        "queries": per_query,
        "baselines": baseline_report,
        "missing": list(missing),
        "metrics": list(METRICS),
    }


# ----- recording -----
@dataclass
class RecordOutcome:
    query_id: str
    path: Path
    written: bool
    statuses: dict[str, str]
    kept_previous: dict[str, str]  # engine -> why its previous recording was kept
    response: dict


async def record_query(query: JudgedQuery, fixtures: Path, settings: Settings,
                       engines: Sequence[str] | None = None) -> RecordOutcome:
    """Search live, keep every engine's raw exchange, and merge into the query's cassette."""
    now = datetime.now()
    transport = RecordingTransport(settings, settings.secret_values())
    searcher = Searcher(settings, transport=transport, state=MemoryState())
    try:
        response = await searcher.search(query.query, engines=engines, now=now)
        statuses = {report.name: report.status for report in response.engines}
        # Engines the live search skipped (fallback tier) are recorded too, so the bench can score them.
        plan = searcher.plan(query.query, engines=engines, now=now)
        for report in response.engines:
            if report.status == "skipped":
                engine = ENGINES[report.name]
                run = await searcher.run_engine(engine, searcher.tier_of(engine), plan)
                statuses[report.name] = run.status
    finally:
        await searcher.close()
    path = fixtures / cassette_name(query.id)
    previous = Cassette.read(path) if path.exists() else None
    new_by_engine: dict[str, list] = defaultdict(list)
    for exchange in transport.exchanges:
        new_by_engine[exchange.engine].append(exchange)
    exchanges = []
    kept_previous: dict[str, str] = {}
    final_statuses = dict(previous.statuses) if previous else {}
    for name in ENGINES:
        fresh = new_by_engine.get(name, [])
        status = statuses.get(name)
        old = [ex for ex in previous.exchanges if ex.engine == name] if previous else []
        if fresh and status in USABLE:
            exchanges.extend(fresh)
            final_statuses[name] = status
        elif old:
            exchanges.extend(old)
            if fresh:
                kept_previous[name] = f"new answer was {status}; previous recording kept"
        elif fresh and status is not None:
            kept_previous[name] = f"answered {status}; nothing recorded (no usable previous recording)"
    usable = any(statuses.get(name) in USABLE and new_by_engine.get(name) for name in ENGINES)
    cassette = Cassette(query=query.query, recorded_at=now, exchanges=exchanges, statuses=final_statuses,
                        query_id=query.id)
    written = False
    if usable:
        cassette.write(path)
        written = True
    return RecordOutcome(query.id, path, written, statuses, kept_previous,
                         response.model_dump(mode="json"))
