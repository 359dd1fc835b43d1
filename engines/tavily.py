"""Tavily (api.tavily.com/search): a keyed search API built for LLM agents."""

from __future__ import annotations

import dataclasses
import html
import json
import re

from engines.base import (
    Engine,
    EngineFacts,
    Parsed,
    Request,
    Response,
    SearchOptions,
    http_failure,
    not_understood,
    parse_retry_after,
    rows_from,
)
from engines.browser import api_headers
from engines.dates import parse_date
from engines.redirects import unwrap

URL = "https://api.tavily.com/search"
SNIPPET_CHARS = 400

_SPACE = re.compile(r"\s+")
# Tavily's `content` is page text with markdown headings and emphasis left in.
_MD_HEADING = re.compile(r"(?:^|(?<=\s))#{1,6}\s+")
_MD_EMPHASIS = re.compile(r"\*\*|__")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_BULLET = re.compile(r"(?m)^\s*[*+-]\s+")


def trim(text: str, limit: int = SNIPPET_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—…") + "…"


def clean(text: str) -> str:
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_BULLET.sub("", text)
    text = _MD_EMPHASIS.sub("", text)
    return _SPACE.sub(" ", html.unescape(text)).strip()


def _load(response: Response) -> object:
    try:
        return json.loads(response.text)
    except (ValueError, TypeError, RecursionError):
        return None


def _error_message(data: object) -> str:
    # Tavily: {"detail": {"error": "..."}}; FastAPI validation: {"detail": [...]}.
    if isinstance(data, dict):
        detail = data.get("detail", data)
        if isinstance(detail, dict):
            detail = detail.get("error") or detail.get("message")
        if isinstance(detail, str) and detail.strip():
            return detail.strip()[:160]
        for key in ("error", "message"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:160]
    return ""


def keyed_failure(response: Response, data: object) -> Parsed | None:
    """Tavily's statuses: 401 bad key, 429 rate limit, 432 plan limit, 433 pay-as-you-go limit."""
    status = response.status
    if 200 <= status < 300:
        return None
    message = _error_message(data)
    suffix = f": {message}" if message else ""
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if status in (401, 403):
        return Parsed("error", detail=f"API key rejected (HTTP {status}){suffix}")
    if status in (402, 432, 433):
        return Parsed("ratelimited", detail=f"Tavily quota exhausted (HTTP {status}){suffix}",
                      retry_after=retry_after)
    failure = http_failure(response) or Parsed("error", detail=f"HTTP {status}")
    return dataclasses.replace(failure, detail=failure.detail + suffix)


class Tavily(Engine):
    facts = EngineFacts(
        name="tavily",
        tier="primary",
        weight=1.0,
        region="global",
        index="tavily",
        key_env="TAVILY_API_KEY",
        native_site=True,
        native_time=True,
        description="Tavily search API for agents, keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        body: dict[str, object] = {
            "query": query,
            "max_results": min(max(options.count, 1), 20),
            "search_depth": "basic",
            "topic": "general",
        }
        if options.site:
            body["include_domains"] = [options.site]
        if options.time_range:
            body["time_range"] = options.time_range  # day | week | month | year, as Tavily names them
        headers = api_headers()
        headers["Content-Type"] = "application/json"
        key = options.api_key or ""
        headers["Authorization"] = f"Bearer {key}"
        return Request("POST", URL, json=body, headers=headers, secrets=(key,) if key else ())

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = _load(response)
        failure = keyed_failure(response, data)
        if failure:
            return failure
        if not isinstance(data, dict):
            return not_understood("response is not a JSON object")
        results = data.get("results")
        if not isinstance(results, list):
            message = _error_message(data)
            return not_understood(f"no results array{': ' + message if message else ''}")
        if not results:
            # An `answer` alone is not a row.
            return Parsed("empty", detail="no results")
        items = []
        for result in results:
            if not isinstance(result, dict):
                continue
            url = result.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            title = result.get("title")
            content = result.get("content")
            published = result.get("published_date")
            items.append((
                clean(title) if isinstance(title, str) else "",
                unwrap(url),
                trim(clean(content)) if isinstance(content, str) else "",
                parse_date(published, options.now) if isinstance(published, str) else None,
            ))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        return not_understood("results without title and URL")


ENGINE = Tavily()
