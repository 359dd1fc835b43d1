"""The real-page corpus (../shared/serp-corpus) as recordings the bench can replay.

Each judged query lists the captured files that answer it; every file becomes
one exchange of its engine (the engine named by the file's folder), keyed the
way that engine would have asked for the query, so replay goes through the
same transport → parser → pipeline path as a live search.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engines import ENGINES
from engines.base import SearchOptions
from plugin.bench.evaluation import Judgment
from plugin.bench.replay import Cassette, Exchange, full_url, request_body
from plugin.pipeline.operators import parse_operators

_CONTENT_TYPES = {".json": "application/json", ".html": "text/html"}


@dataclass(frozen=True)
class JudgedQuery:
    id: str
    query: str
    lang: str
    category: str
    expected_domains: tuple[str, ...]
    captured: datetime | None = None
    files: tuple[dict, ...] = ()
    acceptable_domains: tuple[str, ...] = ()

    @property
    def judgment(self) -> Judgment:
        return Judgment(self.expected_domains, self.acceptable_domains)

    def pending_files(self) -> list[str]:
        """Captures of engines this checkout does not have yet (they count once the engine exists)."""
        return [f["path"] for f in self.files if _engine_of(f["path"]) not in ENGINES]


def load_queries(path: str | Path) -> list[JudgedQuery]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data["queries"] if isinstance(data, dict) else data
    queries = []
    for item in items:
        files = tuple(f if isinstance(f, dict) else {"path": f} for f in item.get("files", ()))
        captured = item.get("captured")
        queries.append(JudgedQuery(
            id=item["id"], query=item["query"], lang=item["lang"], category=item["category"],
            expected_domains=tuple(item["expected_domains"]),
            acceptable_domains=tuple(item.get("acceptable_domains", ())),
            captured=datetime.fromisoformat(captured).replace(hour=12) if captured else None,
            files=files,
        ))
    return queries


def _engine_of(path: str) -> str:
    return path.split("/", 1)[0]


def _body(path: Path, json_key: str | None) -> bytes:
    raw = path.read_bytes()
    if json_key is None:
        return raw
    # A file holding several raw responses keyed by query (PROVENANCE: serper/bet__*).
    return json.dumps(json.loads(raw)[json_key], ensure_ascii=False).encode("utf-8")


def corpus_cassette(query: JudgedQuery, corpus_dir: str | Path) -> Cassette:
    """The judged query's captures as one in-memory cassette."""
    root = Path(corpus_dir)
    now = query.captured or datetime.now()
    exchanges = []
    # Domain operators leave the text and travel as options (`site:a OR site:b` -> allowed_domains):
    # the request is keyed as the pipeline would make it.
    operators = parse_operators(query.query, now=now)
    text = operators.text if operators.allowed_domains or operators.blocked_domains else query.query
    for entry in query.files:
        path = root / entry["path"]
        engine_name = _engine_of(entry["path"])
        engine = ENGINES.get(engine_name)
        if engine is None:  # see JudgedQuery.pending_files
            continue
        options = SearchOptions(api_key="replay", base_url="https://searxng.invalid", now=now,
                                site=operators.site, allowed_domains=operators.allowed_domains,
                                blocked_domains=operators.blocked_domains)
        request = engine.build(text, options)
        content_type = _CONTENT_TYPES.get(path.suffix, "text/html")
        exchanges.append(Exchange(
            engine=engine_name, method=request.method, uri=full_url(request), body=request_body(request),
            request_headers={}, status=200, response_headers={"Content-Type": content_type},
            response_body=_body(path, entry.get("json_key")), final_url=request.url,
        ))
    return Cassette(query=query.query, recorded_at=now, exchanges=exchanges, query_id=query.id)
