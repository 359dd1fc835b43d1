"""Firecrawl search (api.firecrawl.dev/v2/search): Google results relayed through a keyed API."""

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
from engines.redirects import unwrap

URL = "https://api.firecrawl.dev/v2/search"
SNIPPET_CHARS = 400
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
_SPACE = re.compile(r"\s+")


def trim(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = _SPACE.sub(" ", html.unescape(text)).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—…") + "…"


def _load(response: Response) -> object:
    try:
        return json.loads(response.text)
    except (ValueError, TypeError, RecursionError):
        return None


def _error_message(data: object) -> str:
    if isinstance(data, dict):
        for key in ("error", "message", "details"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:160]
    return ""


def keyed_failure(response: Response, data: object) -> Parsed | None:
    """Firecrawl's statuses: 401 bad key, 402 payment required (credits), 429 rate limit."""
    status = response.status
    if 200 <= status < 300:
        return None
    message = _error_message(data)
    suffix = f": {message}" if message else ""
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if status in (401, 403):
        return Parsed("error", detail=f"API key rejected (HTTP {status}){suffix}")
    if status == 402 or "insufficient credits" in message.lower():
        return Parsed("ratelimited", detail=f"Firecrawl quota/credits exhausted (HTTP {status}){suffix}",
                      retry_after=retry_after)
    failure = http_failure(response) or Parsed("error", detail=f"HTTP {status}")
    return dataclasses.replace(failure, detail=failure.detail + suffix)


def country_of(region: str | None) -> str | None:
    """The two-letter country subtag of a region ("en-US" -> "US", "zh-Hans-CN" -> "CN"), else None."""
    parts = (region or "").replace("_", "-").split("-")[1:]
    for part in reversed(parts):
        if len(part) == 2 and part.isalpha():
            return part.upper()
    return None


def _web_results(data: dict) -> list | None:
    """v2: {"data": {"web": [...]}}; v1: {"data": [...]}; None when neither shape is there."""
    payload = data.get("data")
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        web = payload.get("web")
        if isinstance(web, list):
            return web
        if web is None and data.get("success") is True and all(isinstance(v, list) for v in payload.values()):
            # A successful answer with no web key (only news/images, or nothing): no web results.
            return []
    return None


def _field(result: dict, key: str) -> str:
    value = result.get(key)
    if isinstance(value, str) and value.strip():
        return value
    metadata = result.get("metadata")  # v1 results with scrapeOptions carry these in metadata
    if isinstance(metadata, dict):
        value = metadata.get({"url": "sourceURL"}.get(key, key))
        if isinstance(value, str):
            return value
    return ""


class Firecrawl(Engine):
    facts = EngineFacts(
        name="firecrawl",
        tier="fallback",
        weight=0.8,
        region="global",
        index="google",
        key_env="FIRECRAWL_API_KEY",
        native_site=True,
        native_time=True,
        description="Firecrawl search API (relays Google), keyed; fallback",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = f"{query} site:{options.site}" if options.site else query
        body: dict[str, object] = {
            "query": text,
            "limit": min(max(options.count, 1), 100),
            "sources": ["web"],
        }
        if options.time_range:
            body["tbs"] = _TBS[options.time_range]
        country = country_of(options.region)
        if country:
            body["country"] = country
        # No scrapeOptions: only the result list, not page markdown (costs credits, bloats snippets).
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
        if data.get("success") is False:
            message = _error_message(data) or "success: false"
            lowered = message.lower()
            if "credit" in lowered:
                return Parsed("ratelimited", detail=f"Firecrawl quota/credits exhausted: {message}")
            return Parsed("error", detail=f"Firecrawl error: {message}")
        results = _web_results(data)
        if results is None:
            return not_understood("no data.web (v2) or data (v1) results array")
        if not results:
            return Parsed("empty", detail="no results")
        items = []
        for result in results:
            if not isinstance(result, dict):
                continue
            url = _field(result, "url")
            if not url.startswith(("http://", "https://")):
                continue
            # The description only: page markdown (when scraped) is not a snippet.
            items.append((trim(_field(result, "title")), unwrap(url), trim(_field(result, "description")), None))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        return not_understood("results without title and URL")


ENGINE = Firecrawl()
