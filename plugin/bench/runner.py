"""The bench: replay recorded engine responses through the full pipeline and score the rows.

Replay is tier-aware (primary engines first, fallback only when the primaries kept
fewer than `limit` rows) and applies the same relevance gate as a live search; the corpus bench
puts every captured engine in the first wave (`every_engine_primary`) so that
our ranking and the baselines merge the same engines. Each query runs with
fresh cooldown state, at the moment it was recorded. Baselines rank the same
recorded rows. The report splits multi-engine queries (where fusion can
matter) from single-engine ones (where it must not hurt). `--record`
(scripts/bench.py) is the only mode that touches the network.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Sequence

from pydantic import SecretStr

from engines import ENGINES
from engines.base import Row
from plugin.bench import baselines
from plugin.bench.corpus import JudgedQuery
from plugin.bench.evaluation import METRICS, average, compare, score
from plugin.bench.replay import Cassette, Recordings, RecordingTransport, ReplayTransport, cassette_name
from plugin.pipeline.searcher import EngineRun, Searcher, SearchPlan
from plugin.settings import KEY_FIELDS, Settings
from plugin.infra.state import MemoryState
from plugin.models import ANSWERED_STATUSES


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


def every_engine_primary(settings: Settings) -> Settings:
    """Settings under which every engine runs in the first wave, so that our ranking fuses exactly the
    engines the baselines merge. The corpus bench uses them for its fusion comparisons (`--tier-aware` replays as a live search): a corpus query
    holds whatever engines someone happened to capture, not what a live search would have asked, so a
    captured fallback engine would otherwise reach the baselines but never our ranking."""
    return settings.model_copy(update={"tiers": {name: "primary" for name in ENGINES}})


@dataclass
class QueryRun:
    query: JudgedQuery
    plan: SearchPlan
    runs: list[EngineRun]
    engine_rows: dict[str, list[Row]] = field(default_factory=dict)  # every recorded engine, alone, as parsed
    statuses: dict[str, str] = field(default_factory=dict)
    engine_kept: dict[str, list[Row]] = field(default_factory=dict)  # ...and what filters and gate left of it

    @property
    def answering(self) -> list[str]:
        """Engines whose recorded page parsed into at least one row."""
        return [name for name, rows in self.engine_rows.items() if rows]

    @property
    def multi_engine(self) -> bool:
        return len(self.answering) >= 2

    @property
    def fused(self) -> list[str]:
        """Engines whose rows our ranking actually merged (tier-aware, after the gate)."""
        return [run.engine.name for run in self.runs if run.kept]

    @property
    def pool(self) -> list[str]:
        return [row.url for rows in self.engine_rows.values() for row in rows]


async def replay_query(query: JudgedQuery, cassette: Cassette, settings: Settings) -> QueryRun:
    recordings = Recordings([cassette])
    settings = replay_settings(settings, recordings.engines())
    searcher = Searcher(settings, transport=ReplayTransport(settings, recordings), state=MemoryState())
    plan = searcher.plan(query.query, limit=8, now=cassette.recorded_at)
    runs = await searcher.run_tiers(plan)
    solo = Searcher(settings, transport=ReplayTransport(settings, recordings), state=MemoryState())
    recorded = [name for name in ENGINES if any(ex.engine == name for ex in cassette.exchanges)]
    engine_rows, engine_kept = {}, {}
    for name in recorded:
        run = await solo.run_engine(ENGINES[name], solo.tier_of(ENGINES[name]), plan)
        engine_rows[name] = run.all_rows
        engine_kept[name] = run.kept
    return QueryRun(query=query, plan=plan, runs=runs, engine_rows=engine_rows, engine_kept=engine_kept,
                    statuses={run.engine.name: run.status for run in runs})


def rank_urls(settings: Settings, qrun: QueryRun) -> list[str]:
    return [row.url for row in Searcher(settings, state=MemoryState()).rank(qrun.plan, qrun.runs)]


BASELINES: dict[str, Callable[[QueryRun], list[str]]] = {
    "searxng": lambda q: baselines.searxng_merge(q.engine_rows, {}),
    "ddgs": lambda q: baselines.ddgs_rank(q.engine_rows, q.query.query),
    "round_robin": lambda q: baselines.round_robin(q.engine_rows),
    "concatenation": lambda q: baselines.concatenation(q.engine_rows),
}
ORACLE = "oracle_single"


def query_scores(settings: Settings, qrun: QueryRun) -> dict:
    """Every system's metrics on one query, our ranking's URLs, and each engine alone."""
    judgment, pool = qrun.query.judgment, qrun.pool
    ours = rank_urls(settings, qrun)
    systems = {"ours": score(ours, judgment, pool=pool)}
    for name, ranker in BASELINES.items():
        systems[name] = score(ranker(qrun), judgment, pool=pool)
    alone = {name: score(baselines.single_engine(qrun.engine_rows, name), judgment, pool=pool)
             for name in qrun.answering}
    systems[ORACLE] = baselines.oracle_single(alone)
    gated = {name: score(baselines.single_engine(qrun.engine_kept, name), judgment, pool=pool)
             for name in qrun.answering}
    return {"ours_urls": ours, "systems": systems, "alone": alone, "alone_gated": gated}


def _group(rows: list[dict], key: str) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row["metrics"])
    return {name: average(items) for name, items in sorted(groups.items())}


def _rounded(metrics: dict[str, float]) -> dict[str, float]:
    return {m: round(v, 4) for m, v in metrics.items()}


def _expected_domains_in(urls: Sequence[str], qrun: QueryRun) -> set[str]:
    return {d for d, g in (qrun.query.judgment.grade(u) for u in list(urls)[:8]) if g == 2}


def report(qruns: Sequence[QueryRun], settings: Settings, missing: Sequence[str] = (), label: str = "") -> dict:
    scored = [query_scores(settings, q) for q in qruns]
    per_query = []
    for qrun, s in zip(qruns, scored):
        per_query.append({
            "id": qrun.query.id, "query": qrun.query.query, "lang": qrun.query.lang,
            "category": qrun.query.category, "expected_domains": list(qrun.query.expected_domains),
            "acceptable_domains": list(qrun.query.acceptable_domains),
            "answering": qrun.answering, "fused": qrun.fused, "multi_engine": qrun.multi_engine,
            "metrics": _rounded(s["systems"]["ours"]),
            "systems": {name: _rounded(m) for name, m in s["systems"].items() if name != "ours"},
            "top": s["ours_urls"][:8], "engines": qrun.statuses,
            "pending": qrun.query.pending_files(),
        })

    members = {"all": list(range(len(qruns))),
               "multi_engine": [i for i, q in enumerate(qruns) if q.multi_engine],
               "single_engine": [i for i, q in enumerate(qruns) if not q.multi_engine]}
    groups = {}
    for group, idx in members.items():
        systems = {name: average([scored[i]["systems"][name] for i in idx]) for name in scored[0]["systems"]} \
            if scored else {}
        comparisons = {}
        for name in systems:
            if name == "ours":
                continue
            comparisons[name] = {m: compare([scored[i]["systems"]["ours"][m] for i in idx],
                                            [scored[i]["systems"][name][m] for i in idx]) for m in METRICS}
        groups[group] = {"n": len(idx), "queries": [qruns[i].query.id for i in idx], "systems": systems,
                         "ours_minus": comparisons}

    # Each engine alone, over the queries it answered: does our ranking keep what that engine had?
    by_engine = {}
    for name in sorted({n for q in qruns for n in q.answering}):
        idx = [i for i, q in enumerate(qruns) if name in q.answering]
        alone = [scored[i]["alone"][name] for i in idx]
        ours = [scored[i]["systems"]["ours"] for i in idx]
        by_engine[name] = average(alone) | {
            "ours": average(ours),
            "ours_minus_alone": {m: compare([o[m] for o in ours], [a[m] for a in alone]) for m in METRICS}}

    # The issue-12 targets, query by query.
    dropped = []
    for i in members["multi_engine"]:
        searxng = _expected_domains_in(BASELINES["searxng"](qruns[i]), qruns[i])
        ours = _expected_domains_in(scored[i]["ours_urls"], qruns[i])
        if searxng - ours:
            dropped.append({"id": qruns[i].query.id, "kept_by_searxng_not_ours": sorted(searxng - ours)})
    below_engine = []
    for i in members["single_engine"]:
        for name in qruns[i].answering:
            for m in METRICS:
                ours_m, alone_m = scored[i]["systems"]["ours"][m], scored[i]["alone"][name][m]
                if ours_m < alone_m - 1e-12:
                    gated_m = scored[i]["alone_gated"][name][m]
                    below_engine.append({
                        "id": qruns[i].query.id, "engine": name, "metric": m, "ours": round(ours_m, 4),
                        "engine_alone": round(alone_m, 4), "engine_after_gate": round(gated_m, 4),
                        # The gate (or an operator filter) removed on purpose what ours lacks when ours
                        # still matches the engine's own order of what the gate kept.
                        "cause": "gate" if ours_m >= gated_m - 1e-12 else "fusion"})

    worst = min(per_query, key=lambda r: (r["metrics"]["mrr@8"], r["metrics"]["p@8"], r["id"])) if per_query else None
    return {
        "set": label,
        "overall": average([r["metrics"] for r in per_query]),
        "groups": groups,
        "by_language": _group(per_query, "lang"),
        "by_category": _group(per_query, "category"),
        "by_engine": by_engine,
        "targets": {"multi_engine_dropped_vs_searxng": dropped, "single_engine_below_engine": below_engine},
        "pending": {r["id"]: r["pending"] for r in per_query if r["pending"]},
        "worst": worst,
        "queries": per_query,
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
        # Engines the live search never asked are recorded too, so the bench can score them: those it
        # skipped (fallback tier) and those still queued for admission when it answered (our load).
        plan = searcher.plan(query.query, engines=engines, now=now)
        for report in response.engines:
            if report.status in ("skipped", "queued"):
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
        if fresh and status in ANSWERED_STATUSES:
            exchanges.extend(fresh)
            final_statuses[name] = status
        elif old:
            exchanges.extend(old)
            if fresh:
                kept_previous[name] = f"new answer was {status}; previous recording kept"
        elif fresh and status is not None:
            kept_previous[name] = f"answered {status}; nothing recorded (no usable previous recording)"
    usable = any(statuses.get(name) in ANSWERED_STATUSES and new_by_engine.get(name) for name in ENGINES)
    cassette = Cassette(query=query.query, recorded_at=now, exchanges=exchanges, statuses=final_statuses,
                        query_id=query.id)
    written = False
    if usable:
        cassette.write(path)
        written = True
    return RecordOutcome(query.id, path, written, statuses, kept_previous,
                         response.model_dump(mode="json"))
