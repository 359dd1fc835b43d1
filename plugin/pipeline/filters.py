"""Judging one engine's parsed page: which rows survive, and the status the engine earns.

Rows must have a usable URL, fall inside the recognised operators (allowed and blocked domains, time
window) and pass the relevance gate. An engine whose rows all fall out is `empty` (filtered) or
`irrelevant` (gated), with the reason in its detail.
"""

from __future__ import annotations

from typing import Sequence

from engines.base import Engine, Parsed, Row
from plugin.pipeline.canonical import canonical_url
from plugin.pipeline.domains import passes
from plugin.pipeline.plan import SearchPlan


def survivors(engine: Engine, rows: Sequence[Row], plan: SearchPlan) -> tuple[list[Row], str, str]:
    """Rows that pass URL checks, the operator filters and the relevance gate, with the status an
    engine gets when none do (empty: filtered out; irrelevant: gated out) and why."""
    usable = [row for row in rows if canonical_url(row.url) is not None]
    ops = plan.operators
    filtered = usable
    if ops.allowed_domains or ops.blocked_domains:
        # Hard filters on every engine, also those asked natively: not every engine honours them fully.
        filtered = [r for r in filtered if passes(r.url, ops.allowed_domains, ops.blocked_domains)]
    start = ops.window_start(plan.now)
    if start is not None:
        undated_ok = engine.facts.applies_time(ops.time_range) or not ops.range_asked
        filtered = [r for r in filtered if (r.date >= start if r.date else undated_ok)]
    kept = plan.gate.filter(filtered)
    if usable and not filtered:
        return kept, "empty", f"{len(usable)} rows, none inside the {'/'.join(ops.recognised)} filter"
    if filtered and not kept:
        return kept, "irrelevant", f"{len(filtered)} rows, none about the query (relevance gate)"
    return kept, "empty", ""


def judge(engine: Engine, parsed: Parsed, plan: SearchPlan) -> tuple[str, list[Row], str]:
    """(status, kept rows, detail) for one parsed page."""
    if parsed.status != "ok":
        return parsed.status, [], parsed.detail
    kept, status_if_none, why = survivors(engine, parsed.rows, plan)
    if not parsed.rows:
        why = why or parsed.detail or "no rows"
    return ("ok" if kept else status_if_none), kept, why or parsed.detail
