"""Judging one engine's parsed page: which rows survive, and the status the engine earns.

Rows must have a usable URL, fall inside the recognised operators (allowed and blocked domains, time
window) and pass the relevance gate. An engine whose rows all fall out is `empty` (filtered) or
`irrelevant` (gated), with the reason in its detail.

The gate reads words, and a misspelt query (`javascrpt tutorail`) shares none with the pages the engine
found for what was meant. Two kinds of evidence overrule it: the engine's own correction ("Including
results for javascript tutorial", checked against the gate instead of the query when it is close to the
query), and agreement: engines drawing on different indexes that returned the same pages
(`restore_agreeing`, run once the tiers have answered).
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, Sequence

from engines.base import Engine, Parsed, Row
from plugin.pipeline.canonical import canonical_url, identity
from plugin.pipeline.domains import passes
from plugin.pipeline.plan import SearchPlan
from plugin.pipeline.relevance import build_gate, fold

# Pages two independent engines must share for their lists to count as agreeing.
AGREEMENT_MIN_URLS = 2
# How close an engine's correction must be to the query to be read as its spelling (not a new query).
CORRECTION_MIN_SIMILARITY = 0.6


def in_filters(engine: Engine, rows: Sequence[Row], plan: SearchPlan) -> tuple[list[Row], list[Row]]:
    """(usable rows, those also inside the recognised operators): the rows the gate is asked about."""
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
    return usable, filtered


def survivors(engine: Engine, rows: Sequence[Row], plan: SearchPlan,
              correction: str | None = None) -> tuple[list[Row], str, str]:
    """Rows that pass URL checks, the operator filters and the relevance gate, with the status an
    engine gets when none do (empty: filtered out; irrelevant: gated out) and why."""
    usable, filtered = in_filters(engine, rows, plan)
    ops = plan.operators
    kept = plan.gate.filter(filtered)
    if filtered and not kept and spelling_of(correction, ops.text):
        kept = build_gate(correction, plan.gate.min_units).filter(filtered)  # type: ignore[arg-type]
        if kept:
            return kept, "empty", f"gated against the engine's correction {correction!r}"
    if usable and not filtered:
        return kept, "empty", f"{count(len(usable), 'row')}, none inside the {'/'.join(ops.recognised)} filter"
    if filtered and not kept:
        return kept, "irrelevant", f"{count(len(filtered), 'row')}, none about the query (relevance gate)"
    return kept, "empty", ""


def count(number: int, noun: str) -> str:
    """`1 row`, `2 rows`, `0 rows`: a count as a person writes it (regular plurals only)."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def spelling_of(correction: str | None, query: str) -> bool:
    """Whether an engine's corrected query reads as a respelling of `query` (close in letters), not a
    different question it chose to answer instead."""
    if not correction:
        return False
    return difflib.SequenceMatcher(None, fold(correction), fold(query)).ratio() >= CORRECTION_MIN_SIMILARITY


def judge(engine: Engine, parsed: Parsed, plan: SearchPlan) -> tuple[str, list[Row], str]:
    """(status, kept rows, detail) for one parsed page."""
    if parsed.status != "ok":
        return parsed.status, [], parsed.detail
    kept, status_if_none, why = survivors(engine, parsed.rows, plan, parsed.correction)
    if not parsed.rows:
        why = why or parsed.detail or "no rows"
    return ("ok" if kept else status_if_none), kept, why or parsed.detail


def _page_key(url: str) -> str | None:
    key = identity(url)
    return key.casefold() if key else None  # w3schools.com/Js and /js are one page to two engines


def restore_agreeing(runs: Sequence[Any], plan: SearchPlan) -> list[Any]:
    """The tier's engine runs, with lists the relevance gate called irrelevant restored when an engine
    drawing on another index (`facts.index`) returned at least AGREEMENT_MIN_URLS of the same pages: two
    independent indexes agreeing is evidence the list is about the query, whatever its words. A
    space-separated query gets the whole list back (its gate judges whole lists); a CJK query only the
    shared rows. Runs are copied, never changed: a run may be shared by concurrent searches."""
    if plan.gate.kind == "none":
        return list(runs)
    pages: dict[int, tuple[list[Row], set[str]]] = {}
    for number, run in enumerate(runs):
        if run.status in ("ok", "irrelevant") and run.all_rows:
            _, rows = in_filters(run.engine, run.all_rows, plan)
            pages[number] = (rows, {key for row in rows if (key := _page_key(row.url))})
    restored = list(runs)
    for number, run in enumerate(runs):
        if run.status != "irrelevant" or number not in pages:
            continue
        rows, keys = pages[number]
        shared: set[str] = set()
        partners = []
        for other, (_, other_keys) in pages.items():
            if other != number and runs[other].engine.facts.index != run.engine.facts.index \
                    and len(keys & other_keys) >= AGREEMENT_MIN_URLS:
                partners.append(runs[other].engine.name)
                shared |= keys & other_keys
        if not partners:
            continue
        kept = rows if plan.gate.kind == "latin" else [row for row in rows if _page_key(row.url) in shared]
        restored[number] = dataclasses.replace(
            run, status="ok", kept=kept,
            detail=f"kept: {len(shared)} of its pages also found by {', '.join(partners)} (another index), "
                   f"though none shares the query's words")
    return restored
