"""What a search returns: the rows and an honest account of every engine."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

from engines.base import Category, Tier

EngineStatus = Literal[
    "ok", "empty", "irrelevant", "timeout", "error", "blocked", "ratelimited", "cooldown", "skipped", "disabled",
    "late",  # still running when the answer went out (its rows are not in it); see plugin/pipeline/tiers.py
]
# Statuses that mean the engine failed us (they start or extend a cooldown).
FAILURE_STATUSES: frozenset[str] = frozenset({"timeout", "error", "blocked", "ratelimited"})
# Statuses that mean the engine answered, whether or not any row survived the gate.
ANSWERED_STATUSES: frozenset[str] = frozenset({"ok", "empty", "irrelevant"})


class ReadFailure(BaseModel):
    code: str = Field(description="A fetch error code: timeout, http_error, blocked_by_robots, ...")
    message: str


class ResultRow(BaseModel):
    title: str
    url: str
    snippet: str
    domain: str = Field(description="Registrable domain of the URL, e.g. python.org")
    engines: list[str] = Field(description="Every engine that returned this result")
    positions: dict[str, int] = Field(default_factory=dict, description="Engine name -> its own 1-based position")
    score: float
    date: dt.date | None = None
    source: str | None = Field(None, description="Publisher of a news row, e.g. Reuters or 新华网")
    # Filled by search(read=N) for the top N rows only.
    content: str | None = Field(None, description="Main text of the page (search with read=N), cleaned; absent "
                                                  "when the page was not read")
    content_truncated: bool = Field(False, description="True when content stops before the page's end "
                                                       "(the read budget); web_fetch reads the rest")
    read_error: ReadFailure | None = Field(None, description="Why the page could not be read (read=N); the "
                                                             "snippet stands")
    # Page text the engine that found the row sent with it (Exa, Firecrawl): read=N uses it instead of reading
    # the page. Not a field: never serialised or shown unless read=N attaches it as `content`.
    _engine_text: str | None = PrivateAttr(None)

    @property
    def engine_text(self) -> str | None:
        return self._engine_text

    def with_engine_text(self, text: str | None) -> "ResultRow":
        self._engine_text = text
        return self


class EngineReport(BaseModel):
    name: str
    tier: Tier
    status: EngineStatus
    latency_ms: int | None = Field(None, description="The engine's own time: requests out, queue time excluded")
    queue_ms: int | None = Field(None, description="Time waiting for admission (our load, not the engine's)")
    rows: int = Field(0, description="Rows the engine's page held")
    kept: int = Field(0, description="Rows that survived filters and the relevance gate")
    detail: str = ""
    cached: bool = Field(False, description="True when this engine's answer came from the answer cache "
                                            "(asked within cache_ttl_s before), not from the engine now")


class SearchResponse(BaseModel):
    query: str
    results: list[ResultRow]
    engines: list[EngineReport]
    partial: bool = Field(description="True when a primary engine failed, was blocked or was cooling down")
    elapsed_ms: int
    recognised: list[str] = Field(default_factory=list, description="Operators recognised in the query")
    warnings: list[str] = Field(default_factory=list)
    cached: bool = Field(False, description="True when every engine answer came from the answer cache "
                                            "(each engine report says so per engine)")
    category: Category = Field("web", description="web, or news (engines' news verticals)")
    page: int = Field(1, description="1-based page; page n never repeats a URL of pages 1..n-1 of the same query")


class FetchResponse(BaseModel):
    """One slice of a page's text, and how to read on."""

    url: str = Field(description="The URL as asked")
    final_url: str = Field(description="Where the text was read, after redirects")
    status: int = Field(description="HTTP status of the final response")
    content_type: str = Field(description="Media type of the page, e.g. text/html or application/pdf")
    title: str | None = None
    published: dt.date | None = Field(None, description="Publication date, when the page states one")
    content: str = Field(description="This slice of the text: Markdown (headings, lists, code, tables) or plain")
    offset: int = Field(description="Where this slice starts, in characters")
    next_offset: int | None = Field(description="Offset to ask for to read on; null when this slice reaches the end")
    total_chars: int = Field(description="Length of the whole text, in characters")
    truncated: bool = Field(description="True when the text goes on after this slice")
    cached: bool = Field(False, description="True when the page came from the page cache (no request made)")
    elapsed_ms: int
    queue_ms: int = Field(0, description="Time the read waited for its turn at the host (politeness) and for "
                                         "admission: our load, not the page's time")
    warnings: list[str] = Field(default_factory=list)
