"""Merging engines' lists into one ranking: consensus first, boosts that inform.

1. Trust: how far to trust each engine's list for this query (`agreement_trust`):
   how much the other engines back it. With one engine, or `trust_strength` 0,
   every engine is trusted 1; trust averages 1 over the engines of a search.
2. Votes: each engine votes once for each URL identity it lists (however it
   spells the URL), by the row's place p in that engine's kept list:
       vote  = weight × region × trust × (rrf_k + 1) / (rrf_k + p)
       score = Σ over engines  discount × vote
             × (1 + authority_boost × official(row, query))   (once per site)
             × (1 + coverage_boost × coverage(row, query))    (two engines or more)
             + freshness_boost × freshness(date)              (timely queries only)
   A first row at full weight and trust is worth exactly 1.0. `region` is 1 for
   engines of the query's region, `off_region_weight` for the others;
   `discount` is 1, or `same_index_discount` for a further engine drawing on
   an index (e.g. Bing's) that already voted for the row.
3. Ties break on the row's slot in a weighted round-robin interleave (engines
   of the query's region lead each round; weight 2 takes two slots a round),
   then the URL identity: deterministic.

The unit is one engine's top vote, so every knob reads the same way. Agreement
between engines is the strongest signal: a row one engine ranked 19th cannot
overtake a row two engines ranked in their top 8 because of its domain or its
date (the defaults keep it so; tests/test_ranking.py checks every pair of
independent engines). The defaults (rrf_k 2, trust 0.5) were chosen by
cross-validation on real multi-engine lists (README, "Measuring quality").

- official (see plugin/pipeline/intent.py): the site of what the query names
  (python → python.org), the site spelled like a query that is only a name,
  standards bodies and registries for documentation and package queries, and
  any `authority_suffixes` a user configured (none by default; matched on a
  label boundary in any case). Only the best-voted row of each official site
  (registrable domain) is boosted: the boost brings the site into view, it
  does not fill the page with it. The boost scales the row's own votes: an
  official page its engines rank second can lead, one they rank deep gains
  little.
- coverage: the share of the query's content words (CJK: its bigrams, an ASCII
  word counting two) that the row's title, snippet and URL hold, matched as the
  relevance gate matches them (plugin/pipeline/relevance.py). The gate keeps
  or drops an engine's list; coverage orders the rows it kept: of two rows the
  engines rank alike, the one about the whole query leads. A row that holds
  the whole query counts its votes 1.35 times. Chosen by cross-validation on
  the multi-engine lists (README, "Measuring quality"); its ceiling (0.35)
  keeps consensus first with every boost at once.
- freshness: 1 for today falling linearly to 0 at `freshness_days`, counted
  only when the query asks for recent things (`freshness_scope` "timely") and
  the row carries a date its engine gave (a date field of the engine, or a
  short stamp at the very start of the snippet: engines/dates.leading_date).
  A date more than a day in the future is an event, not a publication: 0. A
  merged row keeps its earliest date (first publication). Undated rows get 0:
  neither boosted nor punished.
- one engine alone: its order is its own judgment. Only a site the query
  names is boosted (not reference sites or suffixes), coverage does not count
  and freshness does not add to the score: a recent row (first half of
  `freshness_days`) rises at most `lone_freshness_places` places, above older
  rows only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Sequence

from engines.base import Engine, Row
from plugin.pipeline.canonical import canonical_url, host_of, identity, registrable_domain
from plugin.pipeline.domains import within
from plugin.pipeline.intent import Intent
from plugin.pipeline.relevance import Gate
from plugin.settings import Settings


@dataclass
class EngineList:
    """One engine's surviving rows, with the facts fusion needs."""

    engine: str
    weight: float
    region: str  # global | cjk
    index: str
    rows: Sequence[Row]

    @classmethod
    def of(cls, engine: Engine, rows: Sequence[Row], settings: Settings) -> "EngineList":
        """An engine's rows with its facts: its weight from settings, else its own."""
        return cls(engine=engine.name, weight=settings.weights.get(engine.name, engine.facts.weight),
                   region=engine.facts.region, index=engine.facts.index, rows=rows)


@dataclass
class Fused:
    title: str
    url: str
    snippet: str
    domain: str
    date: date | None
    score: float  # votes + boosts, in units of one engine's top vote
    engines: list[str] = field(default_factory=list)
    source: str | None = None  # a news row's publisher, from the first engine that names one
    positions: dict[str, int] = field(default_factory=dict)
    first_slot: int = 0
    key: str = ""
    votes: float = 0.0  # the engines' votes alone
    votes_by: dict[str, float] = field(default_factory=dict)  # each engine's vote (weight x trust x place)
    trust: dict[str, float] = field(default_factory=dict)  # the trust of each engine that voted
    boosts: dict[str, float] = field(default_factory=dict)  # authority, coverage, freshness: as added to the score
    official: bool = False
    freshness: float = 0.0
    coverage: float = 0.0  # the share of the query's words (CJK: bigrams) the row's title, snippet and URL hold
    content: str | None = None  # page text an engine sent with the row (Exa, Firecrawl), for read=N


def is_authority(host: str, domain: str, intent: Intent, settings: Settings, *, named_only: bool = False) -> bool:
    """Whether a row's site is official for this query (see the module docstring); `named_only`: only a
    site the query itself names (the official-sites table, or a query that is only the site's name)."""
    named = within(host, intent.official) or bool(
        settings.official_from_name and intent.subject and domain.split(".", 1)[0].replace("-", "") == intent.subject)
    if named or named_only:
        return named
    if intent.reference and within(host, settings.authority_domains):
        return True
    # A suffix counts on a label boundary and in any case: "gov.uk" is official for x.gov.uk, not notgov.uk.
    return within(host, [suffix.strip().lstrip(".").lower() for suffix in settings.authority_suffixes])


def vote(place: int, rrf_k: float) -> float:
    """One engine's vote for the row at `place` in its list (before weight and trust): 1.0 for its first
    row, then fading as rrf_k sets."""
    return (rrf_k + 1) / (rrf_k + place)


def freshness(when: date | None, now: datetime, days: float) -> float:
    """1 for today, falling linearly to 0 at `days` old; 0 when unknown or in the future."""
    if when is None:
        return 0.0
    age = (now.date() - when).days
    if age < -1:  # a future date is an event date, not a publication date
        return 0.0
    return max(0.0, 1.0 - max(age, 0) / days)


def interleave(lists: Sequence[EngineList], lead_region: str, off_region_weight: float) -> list[tuple[EngineList, Row]]:
    """Weighted round-robin over the lists; lead-region engines first in every round."""
    order = sorted(lists, key=lambda l: (l.region != lead_region, -l.weight, l.engine))
    weights = {l.engine: l.weight * (1.0 if l.region == lead_region else off_region_weight) for l in order}
    cursors = {l.engine: 0 for l in order}
    credit = {l.engine: 0.0 for l in order}
    sequence: list[tuple[EngineList, Row]] = []
    remaining = sum(len(l.rows) for l in order if weights[l.engine] > 0)
    while remaining > 0:
        for lst in order:
            weight = weights[lst.engine]
            if weight <= 0 or cursors[lst.engine] >= len(lst.rows):
                continue
            credit[lst.engine] += weight
            while credit[lst.engine] >= 1.0 - 1e-9 and cursors[lst.engine] < len(lst.rows):
                sequence.append((lst, lst.rows[cursors[lst.engine]]))
                cursors[lst.engine] += 1
                credit[lst.engine] -= 1.0
                remaining -= 1
    return sequence


def _better_title(current: str, candidate: str) -> str:
    def quality(title: str) -> tuple[int, int]:
        truncated = title.endswith(("...", "…"))
        return (0 if truncated else 1, len(title))
    return candidate if quality(candidate) > quality(current) else current


def _usable(lst: EngineList) -> list[tuple[int, str]]:
    """(the engine's own place, URL identity) of each row, each identity once, in the engine's order."""
    seen: set[str] = set()
    out = []
    for place, row in enumerate(lst.rows, start=1):
        key = identity(row.url)
        if key is not None and key not in seen:
            seen.add(key)
            out.append((place, key))
    return out


def agreement_trust(lists: Sequence[EngineList], settings: Settings) -> dict[str, float]:
    """How far to trust each engine's list for this query: how much the other engines back it.

    An engine's agreement is the share of its top `trust_depth` rows the others also list, each of its
    rows counted by 1 / its place (its top matters most) and each other engine's backing by that
    engine's vote for the row (a page another engine has first backs more than one it has tenth),
    averaged over the other engines. Trust is (trust_floor + agreement) ** trust_strength, scaled so that
    the engines of the search average 1: it moves votes between engines, never the total. With one
    engine, or strength 0, every engine is trusted 1."""
    names = [lst.engine for lst in lists]
    if settings.trust_strength == 0 or len(set(names)) < 2:
        return {name: 1.0 for name in names}
    places: dict[str, dict[str, int]] = {}
    usable = {lst.engine: _usable(lst) for lst in lists}
    for name, rows in usable.items():
        for place, key in rows:
            places.setdefault(key, {})[name] = place
    raw = {}
    for name, rows in usable.items():
        backed = weight = 0.0
        for place, key in rows[: settings.trust_depth]:
            backed += sum(vote(at, settings.rrf_k) for other, at in places[key].items() if other != name) / place
            weight += 1 / place
        agreement = backed / weight / (len(usable) - 1) if weight else 0.0
        raw[name] = (settings.trust_floor + agreement) ** settings.trust_strength
    scale = len(raw) / sum(raw.values())
    return {name: value * scale for name, value in raw.items()}


def fuse(lists: Sequence[EngineList], settings: Settings, *, lead_region: str, now: datetime,
         intent: Intent | None = None, gate: Gate | None = None) -> list[Fused]:
    """Merge and rank; `intent` says whether the query is timely and which sites are official for it,
    `gate` (the query's relevance gate) how much of the query each row's text holds."""
    intent = intent or Intent()
    lists = [lst for lst in lists if lst.rows]
    lone = len({lst.engine for lst in lists}) == 1
    fresh_weight = settings.freshness_boost if (intent.timely or settings.freshness_scope == "all") else 0.0
    trust = agreement_trust(lists, settings)
    region_factor = {lst.engine: 1.0 if lst.region == lead_region else settings.off_region_weight for lst in lists}
    places = {lst.engine: {id(row): place for place, row in enumerate(lst.rows, start=1)} for lst in lists}
    merged: dict[str, Fused] = {}
    voted_indexes: dict[str, set[str]] = {}
    for slot, (lst, row) in enumerate(interleave(lists, lead_region, settings.off_region_weight), start=1):
        key = identity(row.url)
        url = canonical_url(row.url)
        if key is None or url is None:
            continue
        fused = merged.get(key)
        if fused is None:
            fused = merged[key] = Fused(title=row.title, url=url, snippet=row.snippet,
                                        domain=registrable_domain(url), date=row.date, score=0.0,
                                        first_slot=slot, key=key, source=row.source, content=row.content)
        else:
            fused.title = _better_title(fused.title, row.title)
            if len(row.snippet) > len(fused.snippet):
                fused.snippet = row.snippet
            if row.date is not None and (fused.date is None or row.date < fused.date):
                fused.date = row.date
            fused.source = fused.source or row.source
            fused.content = fused.content or row.content
        if lst.engine in fused.positions:
            continue  # the same engine listing the URL again (another spelling): one engine, one vote
        indexes = voted_indexes.setdefault(key, set())
        discount = settings.same_index_discount if lst.index in indexes else 1.0
        indexes.add(lst.index)
        fused.engines.append(lst.engine)
        fused.positions[lst.engine] = row.position
        weight = lst.weight * region_factor[lst.engine] * trust[lst.engine]
        fused.votes_by[lst.engine] = discount * weight * vote(places[lst.engine][id(row)], settings.rrf_k)
        fused.trust[lst.engine] = trust[lst.engine]
        fused.votes += fused.votes_by[lst.engine]
    lifted: set[str] = set()
    for fused in sorted(merged.values(), key=lambda f: (-f.votes, f.first_slot, f.key)):
        # The boost lifts an official site into view once, on its best-voted row: boosting every row of
        # it would fill the page with one site (five python.org pages above Wikipedia for "python").
        # A lone engine's order is its own judgment: only a site the query names overturns it.
        fused.official = fused.domain not in lifted and is_authority(host_of(fused.url), fused.domain, intent,
                                                                     settings, named_only=lone)
        if fused.official:
            lifted.add(fused.domain)
        fused.freshness = freshness(fused.date, now, settings.freshness_days)
        fused.coverage = gate.coverage(fused.title, fused.snippet, fused.url) if gate is not None else 0.0
        # Authority and coverage scale the row's own votes (an official page the engines rank deep gains
        # little; one they rank second can lead), coverage after authority, so that rows that all hold the
        # whole query keep their order; freshness is added, in top votes. A lone engine's order is its own
        # judgment: its rows' coverage of the query does not reorder it.
        authority = settings.authority_boost * fused.votes * fused.official
        coverage = 0.0 if lone else settings.coverage_boost * fused.coverage * (fused.votes + authority)
        fused.boosts = {"authority": authority, "coverage": coverage,
                        "freshness": 0.0 if lone else fresh_weight * fused.freshness}
        fused.score = fused.votes + sum(fused.boosts.values())
    ranked = sorted(merged.values(), key=lambda f: (-f.score, f.first_slot, f.key))
    if lone and fresh_weight and settings.lone_freshness_places:
        ranked = _fresher_nearby(ranked, settings.lone_freshness_places)
    return ranked


def _fresher_nearby(ranked: list[Fused], places: int) -> list[Fused]:
    """One engine's rows, freshness applied only among rows of similar rank: a recent row (freshness at
    least 0.5, i.e. from the first half of `freshness_days`) rises at most `places` places, and only above
    rows older than it."""
    order = sorted(range(len(ranked)),
                   key=lambda i: (i - places * (ranked[i].freshness >= 0.5), -ranked[i].freshness, i))
    return [ranked[i] for i in order]


def rank(lists: Sequence[EngineList], settings: Settings, *, lead_region: str, now: datetime,
         intent: Intent | None = None, gate: Gate | None = None) -> list[Fused]:
    """The ranking a search returns before its cut: fused, then spread over domains as settings ask."""
    fused = fuse(lists, settings, lead_region=lead_region, now=now, intent=intent, gate=gate)
    return diversify(fused, settings.max_per_domain)


def diversify(ranked: Sequence[Fused], max_per_domain: int | None) -> list[Fused]:
    """Move a domain's rows beyond its first `max_per_domain` behind every other row (order kept)."""
    if not max_per_domain:
        return list(ranked)
    seen: dict[str, int] = {}
    head, tail = [], []
    for fused in ranked:
        seen[fused.domain] = seen.get(fused.domain, 0) + 1
        (head if seen[fused.domain] <= max_per_domain else tail).append(fused)
    return head + tail
