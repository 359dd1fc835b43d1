"""Firecrawl search (api.firecrawl.dev/v2/search): Google results relayed through a keyed API."""

from __future__ import annotations

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, not_understood, query_with_domains, rows_from
from engines.jsonapi import (
    KeyedEngine,
    country_of,
    error_message,
    is_web_url,
    keyed_request,
    load_json,
    page_window,
    plain_text,
    trim,
)
from engines.redirects import unwrap

URL = "https://api.firecrawl.dev/v2/search"
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}


def _error_message(data: object) -> str:
    return error_message(data, ("error", "message", "details"))


def _text(value: str) -> str:
    """A title or description as one line, entities decoded, capped like a snippet."""
    return trim(plain_text(value))


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


class Firecrawl(KeyedEngine):
    facts = EngineFacts(
        name="firecrawl",
        tier="fallback",
        weight=0.8,
        region="global",
        index="google",
        key_env="FIRECRAWL_API_KEY",
        native_site=True,
        native_time=True,
        regions=None,  # country: any two-letter country
        native_domains=True,
        paging=True,
        max_page=10,  # limit tops out at 100
        description="Firecrawl search API (relays Google), keyed; fallback",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_domains(query, options)  # relayed to Google: site:, OR and -site:
        ask, _ = page_window(options, 100)  # no offset: page N asks for N pages' results, 100 at most
        body: dict[str, object] = {
            "query": text,
            "limit": ask,
            "sources": ["web"],
        }
        if options.time_range:
            body["tbs"] = _TBS[options.time_range]
        country = country_of(options.region)
        if country:
            body["country"] = country
        # No scrapeOptions: only the result list, not page markdown (costs credits, bloats snippets).
        return keyed_request("POST", URL, options, "Authorization", "Bearer ", body=body)

    # Firecrawl's statuses: 401 bad key, 402 payment required (credits), 429 rate limit.
    service = "Firecrawl"
    quota_noun = "quota/credits"
    quota_words = ("insufficient credits",)

    def error_message(self, data: object) -> str:
        return _error_message(data)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
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
            if not is_web_url(url):
                continue
            # The description only: page markdown (when scraped) is not a snippet, but it is the page's
            # text, which search(read=N) uses instead of reading the page.
            markdown = result.get("markdown")
            items.append((_text(_field(result, "title")), unwrap(url), _text(_field(result, "description")), None,
                          None, markdown if isinstance(markdown, str) and markdown.strip() else None))
        _, skip = page_window(options, 100)
        rows = rows_from(items[skip:], offset=skip)
        if items and not rows and skip:
            return Parsed("empty", detail=f"no results beyond the first {skip}")
        if rows:
            return Parsed("ok", rows)
        return not_understood("results without title and URL")


ENGINE = Firecrawl()
