"""What a search returns: the rows and an honest account of every engine."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

from engines.base import Category, Tier

EngineStatus = Literal[
    "ok", "empty", "irrelevant", "timeout", "error", "blocked", "ratelimited", "cooldown", "skipped", "disabled",
    "late",  # still running when the answer went out (its rows are not in it); see plugin/pipeline/tiers.py
    "queued",  # never asked: still waiting for admission (our load) when the search's deadlines came
]
# Statuses that mean the engine failed us (they start or extend a cooldown).
FAILURE_STATUSES: frozenset[str] = frozenset({"timeout", "error", "blocked", "ratelimited"})
# Statuses that mean the engine answered, whether or not any row survived the gate.
ANSWERED_STATUSES: frozenset[str] = frozenset({"ok", "empty", "irrelevant"})


class ReadFailure(BaseModel):
    code: str = Field(description="A fetch error code: timeout, http_error, blocked_by_robots, ...")
    message: str


class RowExplanation(BaseModel):
    """Why a row ranks where it does (search with explain=True): the parts of its score."""

    votes: dict[str, float] = Field(description="Engine -> its vote: weight x trust x (rrf_k + 1) / (rrf_k + "
                                                "the row's place in that engine's list); 1.0 is one engine's top "
                                                "vote at full weight and trust")
    trust: dict[str, float] = Field(description="Engine -> how far its list was trusted for this query (how much "
                                                "the other engines back it; the engines average 1)")
    authority: float = Field(description="Added because the site is official for the query (a share of the votes)")
    coverage: float = Field(0.0, description="Added for the share of the query's words the row's title, snippet "
                                             "and URL hold (a share of the votes)")
    freshness: float = Field(description="Added for a recent date on a timely query")


class Passage(BaseModel):
    """A stretch of a page's text that answers the query: whole sentences (a code block or table whole)."""

    text: str = Field(description="Exactly the page's text between start and end (fetch(url, offset=start, "
                                  "max_chars=end-start) returns it)")
    start: int = Field(description="Offset of the first character in the page's full text (the format asked)")
    end: int = Field(description="Offset just past the last character")
    score: float = Field(description="How well it matches the query (higher is better; comparable within one page)")
    heading_path: list[str] = Field(default_factory=list, description="The headings it sits under, outermost first")


class Omitted(BaseModel):
    """What a budget (max_tokens, max_chars, passages) left out, and how to get it."""

    rows: int = Field(0, description="Result rows left out")
    passages: int = Field(0, description="Passages left out")
    chars: int = Field(0, description="Characters of page text left out")
    snippet_chars: int = Field(0, description="Characters of a row's snippet left out (search max_tokens: the "
                                              "last row shown has its snippet cut to fit, ending with …)")
    next_offset: int | None = Field(None, description="Offset to read on from (fetch(url, offset=...))")
    starts: list[int] = Field(default_factory=list, description="Start offsets of the passages left out")
    how: str = Field("", description="How to get what was left out")


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
    explain: RowExplanation | None = Field(None, description="The votes and boosts behind `score` (search with "
                                                             "explain=True)")
    rendered: bool | None = Field(None, description="With read=N: true when the page's text is what a browser "
                                                    "showed (its scripts run); absent when the page was not read")
    may_require_js: bool | None = Field(None, description="With read=N: true when the page's HTML looks like an app "
                                                          "shell built by scripts; absent when it was not read")
    passages: list[Passage] | None = Field(None, description="The read page's passages that best answer the query "
                                                             "(search with read=N, passages=K), best first; offsets "
                                                             "into the page's Markdown text, as web_fetch reads it")
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
    omitted: Omitted | None = Field(None, description="What max_tokens left out (rows, passages, characters)")


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
    query: str | None = Field(None, description="The query the passages answer (fetch with query)")
    passages: list[Passage] | None = Field(None, description="With a query: the passages that best answer it, "
                                                             "best first (content is then empty)")
    omitted: Omitted | None = Field(None, description="What max_tokens, max_chars or passages left out")
    tokens: int | None = Field(None, description="Estimated tokens of the text a model reads of this answer "
                                                 "(given with max_tokens or query)")
    rendered: bool = Field(False, description="True when the text is the page as a browser (Chromium) showed it, "
                                              "its scripts run; false when it is the HTML as sent")
    may_require_js: bool = Field(False, description="True when the page's HTML looks like an app shell built by "
                                                    "scripts (a warning says what gave it away and whether it was "
                                                    "rendered)")


class VerifyResponse(BaseModel):
    """Whether a quote occurs in a page's text, and where."""

    url: str
    final_url: str
    quote: str
    found: bool = Field(description="True when the quote occurs in the page's text (whitespace, case, quote marks, "
                                    "hyphenation and Markdown emphasis aside)")
    start: int | None = Field(None, description="Offset of the match in the page's full text (the format asked)")
    end: int | None = None
    text: str | None = Field(None, description="The page's text of the match, as written there")
    sentence: str | None = Field(None, description="The sentence (or sentences) around the match")
    sentence_start: int | None = None
    sentence_end: int | None = None
    occurrences: int = Field(0, description="How many times the quote occurs")
    format: str = Field("markdown", description="The text the offsets refer to: markdown or text")
    cached: bool = Field(False, description="True when the page came from the page cache (no request made)")
    elapsed_ms: int = 0
    warnings: list[str] = Field(default_factory=list)
    rendered: bool = Field(False, description="True when the text checked is the page as a browser showed it")
    may_require_js: bool = Field(False, description="True when the page's HTML looks like an app shell built by "
                                                    "scripts")
