"""Serper (google.serper.dev/search): Google results as JSON, keyed."""

from __future__ import annotations

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, not_understood, query_with_domains, rows_from
from engines.dates import parse_date
from engines.jsonapi import (
    KeyedEngine,
    country_of,
    error_message,
    linked,
    keyed_request,
    language_of,
    load_json,
    plain_text,
)
from engines.redirects import unwrap

URL = "https://google.serper.dev/search"
# Serper's news endpoint: the same body, answered with {"news": [{title, link, snippet, date, source}]}.
NEWS_URL = "https://google.serper.dev/news"
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
# Google's hl takes a script/region variant for Chinese and Portuguese only.
_HL_WITH_REGION = {"zh-cn": "zh-cn", "zh-sg": "zh-cn", "zh-tw": "zh-tw", "zh-hk": "zh-tw", "pt-br": "pt-br",
                   "pt-pt": "pt-pt"}


def _error_message(data: object) -> str:
    return error_message(data, ("message", "error"))


def _num(options: SearchOptions) -> int:
    return min(max(options.count, 1), 100)


def hl_for(region: str) -> str:
    lang = language_of(region)
    country = (country_of(region) or "").lower()
    return _HL_WITH_REGION.get(f"{lang}-{country}", lang)


class Serper(KeyedEngine):
    facts = EngineFacts(
        name="serper",
        tier="primary",
        weight=1.0,
        region="global",
        index="google",
        key_env="SERPER_API_KEY",
        native_site=True,
        native_time=True,
        regions=None,  # gl (country) and hl (language) from any region
        native_domains=True,
        news=True,
        paging=True,
        description="Serper Google search API, keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_domains(query, options)  # Google's site:, OR and -site:
        body: dict[str, object] = {"q": text, "num": _num(options)}
        if options.page > 1:
            body["page"] = options.page  # Serper's 1-based page
        if options.region:
            country = country_of(options.region)
            if country:
                body["gl"] = country.lower()
            body["hl"] = hl_for(options.region)
        if options.time_range:
            body["tbs"] = _TBS[options.time_range]
        # Serper has no safe-search switch: Google's default (moderate) applies.
        url = NEWS_URL if options.category == "news" else URL
        return keyed_request("POST", url, options, "X-API-KEY", body=body)

    # Serper: 403 "Unauthorized." for a bad key, 400 "Not enough credits", 429 rate limit.
    # It says "credits" (plural) and "quota"; the wording stays Serper's own.
    service = "Serper"
    quota_noun = "quota/credits"
    quota_words = ("credits", "quota")

    def error_message(self, data: object) -> str:
        return _error_message(data)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        if not isinstance(data, dict):
            return not_understood("response is not a JSON object")
        key = "news" if options.category == "news" else "organic"
        organic = data.get(key)
        if organic is None:
            if isinstance(data.get("searchParameters"), dict):
                # A well-formed answer without organic results (knowledge panels
                # or answer boxes alone are not rows).
                return Parsed("empty", detail=f"no {key} results")
            message = _error_message(data)
            return not_understood(f"no {key} array{': ' + message if message else ''}")
        if not isinstance(organic, list):
            return not_understood(f"{key} is not an array")
        if not organic:
            return Parsed("empty", detail=f"no {key} results")
        items = []
        for result, link in linked(organic, "link"):
            stamp = result.get("date")
            source = result.get("source")
            items.append((
                plain_text(result.get("title")),
                unwrap(link),
                plain_text(result.get("snippet")),
                parse_date(stamp, options.now) if isinstance(stamp, str) else None,
                plain_text(source) if isinstance(source, str) else None,
            ))
        rows = rows_from(items, offset=(max(options.page, 1) - 1) * _num(options))
        if rows:
            return Parsed("ok", rows)
        return not_understood(f"{key} results without title and link")


ENGINE = Serper()
