"""What each engine did in a search, logged at info (`metasearch search --verbose`, `METASEARCH_LOG=info`).

One line per HTTP exchange (status, bytes, where), then one line per engine once the search has its
answer: status, its own time and queue time, rows parsed and kept, what was dropped and why, its
detail. Only host and path are logged, never a query string (API keys travel there), and every record
passes the redacting filter of `plugin.infra.logs`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Sequence
from urllib.parse import urlsplit

from engines.base import Request, Response
from plugin.infra.logs import get_logger
from plugin.pipeline.filters import count, in_filters

if TYPE_CHECKING:  # pragma: no cover
    from plugin.pipeline.plan import SearchPlan
    from plugin.pipeline.runner import EngineRun

log = get_logger("metasearch.engines")


def exchange(engine: str, request: Request, response: Response) -> None:
    if log.isEnabledFor(logging.INFO):
        where = urlsplit(response.url)  # where it went (an endpoint override applied), after redirects
        host = f"{where.hostname}:{where.port}" if where.port else where.hostname  # never user:password@
        log.info("%s: %s %s%s -> HTTP %d, %d bytes", engine, request.method, host, where.path,
                 response.status, len(response.body))


def dropped(run: "EngineRun", plan: "SearchPlan") -> list[str]:
    """Why rows of this engine's page did not survive: unusable URLs, outside the recognised operators,
    not about the query (the relevance gate)."""
    if not run.all_rows:
        return []
    usable, filtered = in_filters(run.engine, run.all_rows, plan)
    reasons = []
    if len(usable) < len(run.all_rows):
        reasons.append(f"{len(run.all_rows) - len(usable)} without a usable URL")
    if len(filtered) < len(usable):
        reasons.append(f"{len(usable) - len(filtered)} outside the {'/'.join(plan.operators.recognised) or 'domain'} "
                       f"filter")
    if len(run.kept) < len(filtered):
        reasons.append(f"{len(filtered) - len(run.kept)} not about the query (relevance gate)")
    return reasons


def engine_runs(plan: "SearchPlan", runs: Sequence["EngineRun"]) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    for run in runs:
        parts = [f"{run.engine.name} ({run.tier}): {run.status}"]
        if run.latency_ms is not None:
            parts.append(f"{run.latency_ms} ms" + (f" (+{run.queue_ms} ms queued)" if run.queue_ms else ""))
        if run.cached:
            parts.append("answer from the cache")
        if run.rows or run.kept:
            parts.append(f"{count(run.rows, 'row')}, {len(run.kept)} kept")
        reasons = dropped(run, plan)
        if reasons:
            parts.append("dropped " + ", ".join(reasons))
        if run.detail:
            parts.append(run.detail)
        log.info("%s", "; ".join(parts))
