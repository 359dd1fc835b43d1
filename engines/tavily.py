"""Tavily (api.tavily.com/search): a keyed search API built for LLM agents."""

from __future__ import annotations

import re

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, allowed_of, not_understood, rows_from
from engines.dates import parse_date
from engines.jsonapi import (
    MESSAGE_CHARS,
    KeyedEngine,
    error_message,
    host_name,
    keyed_request,
    linked,
    load_json,
    page_window,
    plain_text,
    results_array,
    trim,
)
from engines.redirects import unwrap

URL = "https://api.tavily.com/search"

# Tavily's `content` is page text with markdown headings and emphasis left in.
_MD_HEADING = re.compile(r"(?:^|(?<=\s))#{1,6}\s+")
_MD_EMPHASIS = re.compile(r"\*\*|__")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_BULLET = re.compile(r"(?m)^\s*[*+-]\s+")


def clean(text: str) -> str:
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_BULLET.sub("", text)
    text = _MD_EMPHASIS.sub("", text)
    return plain_text(text)


def _error_message(data: object) -> str:
    # Tavily: {"detail": {"error": "..."}}; FastAPI validation: {"detail": [...]}.
    if isinstance(data, dict):
        detail = data.get("detail", data)
        if isinstance(detail, dict):
            detail = detail.get("error") or detail.get("message")
        if isinstance(detail, str) and detail.strip():
            return detail.strip()[:MESSAGE_CHARS]
    return error_message(data, ("error", "message"))


class Tavily(KeyedEngine):
    facts = EngineFacts(
        name="tavily",
        tier="primary",
        weight=1.0,
        region="global",
        index="tavily",
        key_env="TAVILY_API_KEY",
        native_site=True,
        native_time=True,
        native_domains=True,
        news=True,
        paging=True,
        max_page=2,  # max_results tops out at 20
        description="Tavily search API for agents, keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        ask, _ = page_window(options, 20)  # no offset: page N asks for N pages' results, 20 at most
        body: dict[str, object] = {
            "query": query,
            "max_results": ask,
            "search_depth": "basic",
            # Tavily's documented topics: "general", and "news" (real-time updates, with published_date).
            "topic": "news" if options.category == "news" else "general",
        }
        allowed = allowed_of(options)
        if allowed:
            body["include_domains"] = list(allowed)
        if options.blocked_domains:
            body["exclude_domains"] = list(options.blocked_domains)
        if options.time_range:
            body["time_range"] = options.time_range  # day | week | month | year, as Tavily names them
        return keyed_request("POST", URL, options, "Authorization", "Bearer ", body=body)

    # Tavily's statuses: 401 bad key, 429 rate limit, 432 plan limit, 433 pay-as-you-go limit.
    # Its quota answers are told by status alone, not by the message.
    service = "Tavily"
    quota_statuses = (402, 432, 433)
    quota_words = ()

    def error_message(self, data: object) -> str:
        return _error_message(data)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        # Empty `results` is "empty" even beside an `answer`: an answer alone is not a row.
        results = results_array(data, _error_message(data))
        if isinstance(results, Parsed):
            return results
        items = []
        for result, url in linked(results):
            title = result.get("title")
            content = result.get("content")
            published = result.get("published_date")
            items.append((
                clean(title) if isinstance(title, str) else "",
                unwrap(url),
                trim(clean(content)) if isinstance(content, str) else "",
                parse_date(published, options.now) if isinstance(published, str) else None,
                host_name(url) if options.category == "news" else None,  # Tavily names no publisher
            ))
        _, skip = page_window(options, 20)
        rows = rows_from(items[skip:], offset=skip)
        if items and not rows and skip:
            return Parsed("empty", detail=f"no results beyond the first {skip}")
        if rows:
            return Parsed("ok", rows)
        return not_understood("results without title and URL")


ENGINE = Tavily()
