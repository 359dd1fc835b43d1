"""Counters and histograms for `metasearch serve`, rendered in Prometheus text format (no dependency)."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict

from plugin.models import SearchResponse

SEARCH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
ENGINE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0)
QUEUE_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
READ_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 60.0)


class Histogram:
    def __init__(self, buckets: tuple[float, ...]):
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def to_dict(self) -> dict:
        return {"counts": self.counts, "total": self.total, "sum": self.sum}

    def add(self, other: dict) -> None:
        """Add another process's histogram of the same buckets (`to_dict`)."""
        self.counts = [a + b for a, b in zip(self.counts, other["counts"])]
        self.total += other["total"]
        self.sum += other["sum"]

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1

    def render(self, name: str, labels: str = "") -> list[str]:
        sep = "," if labels else ""
        lines = [f'{name}_bucket{{{labels}{sep}le="{bound}"}} {count}' for bound, count in zip(self.buckets, self.counts)]
        lines.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.total}')
        lines.append(f"{name}_sum{{{labels}}} {self.sum:.6f}" if labels else f"{name}_sum {self.sum:.6f}")
        lines.append(f"{name}_count{{{labels}}} {self.total}" if labels else f"{name}_count {self.total}")
        return lines


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# How many executions' engine reports are remembered, to count the reports of one execution once.
RECENT_EXECUTIONS = 1024


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Identical searches in flight at once share one execution (plugin.pipeline.searcher): each caller
        # gets a shallow copy of its response, whose `engines` is the same list. Its engine outcomes
        # happened once: counted once, not once per caller. The lists are held (not only their ids), so an
        # id is never that of another list meanwhile.
        self._counted: OrderedDict[int, list] = OrderedDict()
        self.searches: dict[str, int] = defaultdict(int)
        self.engine_status: dict[tuple[str, str], int] = defaultdict(int)
        self.search_seconds = Histogram(SEARCH_BUCKETS)
        self.engine_seconds: dict[str, Histogram] = {}
        self.queue_seconds: dict[str, Histogram] = {}
        # GET /fetch and /verify: outcome (ok, cached, found, not_found, bad_input, or the error code of a page
        # that could not be had) -> count, and the time of those that asked for a page.
        self.fetches: dict[str, int] = defaultdict(int)
        self.verifies: dict[str, int] = defaultdict(int)
        self.fetch_seconds = Histogram(READ_BUCKETS)
        self.verify_seconds = Histogram(READ_BUCKETS)

    def bad_input(self) -> None:
        with self._lock:
            self.searches["bad_input"] += 1

    def fetched(self, outcome: str, seconds: float | None = None) -> None:
        with self._lock:
            self.fetches[outcome] += 1
            if seconds is not None:
                self.fetch_seconds.observe(seconds)

    def verified(self, outcome: str, seconds: float | None = None) -> None:
        with self._lock:
            self.verifies[outcome] += 1
            if seconds is not None:
                self.verify_seconds.observe(seconds)

    def observe(self, response: SearchResponse) -> None:
        outcome = "cached" if response.cached else ("partial" if response.partial else "ok")
        with self._lock:
            self.searches[outcome] += 1
            self.search_seconds.observe(response.elapsed_ms / 1000)
            if response.cached or self._counted.get(id(response.engines)) is response.engines:
                return
            self._counted[id(response.engines)] = response.engines
            if len(self._counted) > RECENT_EXECUTIONS:
                self._counted.popitem(last=False)
            for report in response.engines:
                self.engine_status[(report.name, report.status)] += 1
                if report.latency_ms is not None:
                    histogram = self.engine_seconds.setdefault(report.name, Histogram(ENGINE_BUCKETS))
                    histogram.observe(report.latency_ms / 1000)
                if getattr(report, "queue_ms", None) is not None:
                    histogram = self.queue_seconds.setdefault(report.name, Histogram(QUEUE_BUCKETS))
                    histogram.observe(report.queue_ms / 1000)

    def snapshot(self) -> dict:
        """Everything counted so far, as JSON-able data (`merged` adds snapshots of other workers)."""
        with self._lock:
            return {"searches": dict(self.searches),
                    "engine_status": [[e, st, n] for (e, st), n in self.engine_status.items()],
                    "search_seconds": self.search_seconds.to_dict(),
                    "engine_seconds": {k: h.to_dict() for k, h in self.engine_seconds.items()},
                    "queue_seconds": {k: h.to_dict() for k, h in self.queue_seconds.items()},
                    "fetches": dict(self.fetches), "verifies": dict(self.verifies),
                    "fetch_seconds": self.fetch_seconds.to_dict(), "verify_seconds": self.verify_seconds.to_dict()}

    def merged(self, snapshots: list[dict]) -> "Metrics":
        """These counts plus other processes' snapshots (the workers of one `serve`)."""
        total = Metrics()
        for snap in [self.snapshot(), *snapshots]:
            for outcome, n in snap["searches"].items():
                total.searches[outcome] += n
            for engine, status, n in snap["engine_status"]:
                total.engine_status[(engine, status)] += n
            total.search_seconds.add(snap["search_seconds"])
            for field, buckets in (("engine_seconds", ENGINE_BUCKETS), ("queue_seconds", QUEUE_BUCKETS)):
                histograms = getattr(total, field)
                for engine, data in snap[field].items():
                    histograms.setdefault(engine, Histogram(buckets)).add(data)
            for field in ("fetches", "verifies"):  # .get: a worker of an older version has none
                for outcome, n in snap.get(field, {}).items():
                    getattr(total, field)[outcome] += n
            for field in ("fetch_seconds", "verify_seconds"):
                if field in snap:
                    getattr(total, field).add(snap[field])
        return total

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP metasearch_searches_total Searches answered, by outcome.",
                     "# TYPE metasearch_searches_total counter"]
            lines += [f'metasearch_searches_total{{outcome="{k}"}} {v}' for k, v in sorted(self.searches.items())]
            lines += ["# HELP metasearch_engine_status_total Engine outcomes, by engine and status.",
                      "# TYPE metasearch_engine_status_total counter"]
            lines += [f'metasearch_engine_status_total{{engine="{_escape(e)}",status="{s}"}} {v}'
                      for (e, s), v in sorted(self.engine_status.items())]
            lines += ["# HELP metasearch_search_duration_seconds Time to answer a search.",
                      "# TYPE metasearch_search_duration_seconds histogram"]
            lines += self.search_seconds.render("metasearch_search_duration_seconds")
            lines += ["# HELP metasearch_engine_latency_seconds The engine's own time (requests out), failures "
                      "included; for a late engine, its time until the answer went out. Queue time is apart.",
                      "# TYPE metasearch_engine_latency_seconds histogram"]
            for engine, histogram in sorted(self.engine_seconds.items()):
                lines += histogram.render("metasearch_engine_latency_seconds", f'engine="{_escape(engine)}"')
            lines += ["# HELP metasearch_engine_queue_seconds Time each engine's requests waited for admission "
                      "(our load: per-upstream politeness and the process's pool), not counted as the engine's.",
                      "# TYPE metasearch_engine_queue_seconds histogram"]
            for engine, histogram in sorted(self.queue_seconds.items()):
                lines += histogram.render("metasearch_engine_queue_seconds", f'engine="{_escape(engine)}"')
            for noun, counts, histogram, what in (
                    ("fetches", self.fetches, self.fetch_seconds, "Page reads (GET /fetch) answered"),
                    ("verifies", self.verifies, self.verify_seconds, "Quote checks (GET /verify) answered")):
                lines += [f"# HELP metasearch_{noun}_total {what}, by outcome.", f"# TYPE metasearch_{noun}_total counter"]
                lines += [f'metasearch_{noun}_total{{outcome="{_escape(k)}"}} {v}' for k, v in sorted(counts.items())]
                single = "fetch" if noun == "fetches" else "verify"
                lines += [f"# HELP metasearch_{single}_duration_seconds Time to answer one that asked for a page.",
                          f"# TYPE metasearch_{single}_duration_seconds histogram"]
                lines += histogram.render(f"metasearch_{single}_duration_seconds")
            return "\n".join(lines) + "\n"
