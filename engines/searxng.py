"""A self-hosted SearXNG instance (<base>/search?format=json): itself a metasearch engine."""

from __future__ import annotations

import dataclasses

from engines.base import (Engine, EngineFacts, Parsed, Request, Response, SearchOptions, generic_wall, not_understood,
                          query_with_domains, rows_from)
from engines.browser import api_headers
from engines.dates import leading_date, parse_date
from engines.jsonapi import country_of, host_name, language_of, load_json, plain_text
from engines.redirects import unwrap

_SAFE = {"off": "0", "moderate": "1", "strict": "2"}


def base_of(base_url: str) -> str:
    """The instance URL without a trailing slash; a bare host gets http://."""
    base = base_url.strip()
    if "://" not in base:
        base = "http://" + base
    return base.split("?", 1)[0].split("#", 1)[0].rstrip("/")


def language_for(region: str | None) -> str:
    if not region:
        return "auto"
    lang = language_of(region)
    country = country_of(region)
    return f"{lang}-{country}" if country else lang


def _correction(data: dict, query: str) -> str | None:
    """SearXNG relays its engines' spelling corrections in `corrections`; the first that is not the query."""
    corrections = data.get("corrections")
    for value in corrections if isinstance(corrections, list) else ():
        if isinstance(value, str) and value.strip() and value.strip().casefold() != query.strip().casefold():
            return value.strip()
    return None


def _unresponsive(data: dict) -> list[str]:
    # [["google", "CAPTCHA"], ["bing", "timeout"], ...]
    names = []
    entries = data.get("unresponsive_engines")
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, (list, tuple)) and entry:
                names.append(": ".join(str(part) for part in entry[:2]))
            elif isinstance(entry, str):
                names.append(entry)
    return names


class Searxng(Engine):
    facts = EngineFacts(
        name="searxng",
        tier="primary",
        weight=1.0,
        region="global",
        index="searxng",
        url_env="METASEARCH_SEARXNG_URL",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=None,  # language: any language-COUNTRY tag
        native_domains=True,
        news=True,
        paging=True,
        description="Self-hosted SearXNG instance (JSON API), set by URL",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        if not options.base_url:
            raise ValueError("searxng needs options.base_url (set METASEARCH_SEARXNG_URL)")
        text = query_with_domains(query, options)  # relayed to its engines, which honour site: operators
        params: list[tuple[str, str]] = [
            ("q", text),
            ("format", "json"),
            ("pageno", str(max(options.page, 1))),
            ("language", language_for(options.region)),
        ]
        if options.category == "news":
            params.append(("categories", "news"))  # SearXNG's search API parameter
        if options.time_range:
            params.append(("time_range", options.time_range))  # day | week | month | year
        params.append(("safesearch", _SAFE[options.safesearch]))
        return Request("GET", base_of(options.base_url) + "/search", params=tuple(params), headers=api_headers())

    def classify_status(self, response: Response) -> Parsed | None:
        if response.status == 403:
            # A bot wall in front of the instance (Cloudflare, a challenge proxy) is not SearXNG's own 403.
            wall = generic_wall(response)
            if wall is not None:
                return wall
            # SearXNG answers 403 when "json" is not in search.formats of settings.yml.
            return Parsed("error", detail="HTTP 403: format=json is disabled on the SearXNG instance "
                                          "(add json to search.formats in settings.yml)")
        failure = super().classify_status(response)
        if failure is not None and response.status == 429:
            return dataclasses.replace(failure, detail="HTTP 429 (SearXNG limiter)")
        return failure

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        if not isinstance(data, dict):
            if response.text.lstrip()[:1] == "<":
                return not_understood("HTML page instead of JSON (is base_url the SearXNG instance?)")
            return not_understood("response is not a JSON object")
        results = data.get("results")
        if not isinstance(results, list):
            return not_understood("no results array")
        items = []
        for result in results:
            if not isinstance(result, dict):
                continue
            url = result.get("url")
            if not isinstance(url, str):
                continue
            # Upstream engines' redirect wrappers can survive SearXNG; unwrap them.
            url = unwrap(url)
            if not url.startswith(("http://", "https://")):
                continue
            content = plain_text(result.get("content"))
            stamp = result.get("publishedDate")
            when = parse_date(stamp, options.now) if isinstance(stamp, str) and stamp else None
            if when is None:
                when = leading_date(content, options.now)  # "3 days ago · …" relayed from Bing
            source = result.get("source") if options.category == "news" else None
            items.append((plain_text(result.get("title")), url, content, when,
                          (plain_text(source) if isinstance(source, str) and source.strip() else host_name(url))
                          if options.category == "news" else None))
        rows = rows_from(items)
        if rows and options.page > 1:  # SearXNG pages are as long as its merge makes them: assume this one's
            rows = rows_from(items, offset=(options.page - 1) * len(rows))
        if rows:
            return Parsed("ok", rows, correction=_correction(data, query))
        if results:
            return not_understood("results without title and URL")
        failed = _unresponsive(data)
        if failed:
            # No results because every upstream engine failed, not because there are none.
            return Parsed("error", detail="no results; unresponsive engines: " + ", ".join(failed)[:200])
        return Parsed("empty", detail="no results")


ENGINE = Searxng()
