"""Serper (google.serper.dev/search): Google results as JSON, keyed."""

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

URL = "https://google.serper.dev/search"
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
_SPACE = re.compile(r"\s+")
# Google's hl takes a script/region variant for Chinese and Portuguese only.
_HL_WITH_REGION = {"zh-cn": "zh-cn", "zh-sg": "zh-cn", "zh-tw": "zh-tw", "zh-hk": "zh-tw", "pt-br": "pt-br",
                   "pt-pt": "pt-pt"}


def _text(value: object) -> str:
    return _SPACE.sub(" ", html.unescape(value)).strip() if isinstance(value, str) else ""


def _load(response: Response) -> object:
    try:
        return json.loads(response.text)
    except (ValueError, TypeError, RecursionError):
        return None


def _error_message(data: object) -> str:
    if isinstance(data, dict):
        for key in ("message", "error"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:160]
    return ""


def keyed_failure(response: Response, data: object) -> Parsed | None:
    """Serper: 403 "Unauthorized." for a bad key, 400 "Not enough credits", 429 rate limit."""
    status = response.status
    if 200 <= status < 300:
        return None
    message = _error_message(data)
    suffix = f": {message}" if message else ""
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if status in (401, 403):
        return Parsed("error", detail=f"API key rejected (HTTP {status}){suffix}")
    lowered = message.lower()
    if status == 402 or "credits" in lowered or "quota" in lowered:
        return Parsed("ratelimited", detail=f"Serper quota/credits exhausted (HTTP {status}){suffix}",
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


def hl_for(region: str) -> str:
    lang = region.replace("_", "-").split("-")[0].lower()
    country = (country_of(region) or "").lower()
    return _HL_WITH_REGION.get(f"{lang}-{country}", lang)


class Serper(Engine):
    facts = EngineFacts(
        name="serper",
        tier="primary",
        weight=1.0,
        region="global",
        index="google",
        key_env="SERPER_API_KEY",
        native_site=True,
        native_time=True,
        description="Serper Google search API, keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = f"{query} site:{options.site}" if options.site else query
        body: dict[str, object] = {"q": text, "num": min(max(options.count, 1), 100)}
        if options.region:
            country = country_of(options.region)
            if country:
                body["gl"] = country.lower()
            body["hl"] = hl_for(options.region)
        if options.time_range:
            body["tbs"] = _TBS[options.time_range]
        # Serper has no safe-search switch: Google's default (moderate) applies.
        headers = api_headers()
        headers["Content-Type"] = "application/json"
        key = options.api_key or ""
        headers["X-API-KEY"] = key
        return Request("POST", URL, json=body, headers=headers, secrets=(key,) if key else ())

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = _load(response)
        failure = keyed_failure(response, data)
        if failure:
            return failure
        if not isinstance(data, dict):
            return not_understood("response is not a JSON object")
        organic = data.get("organic")
        if organic is None:
            if isinstance(data.get("searchParameters"), dict):
                # A well-formed answer without organic results (knowledge panels
                # or answer boxes alone are not rows).
                return Parsed("empty", detail="no organic results")
            message = _error_message(data)
            return not_understood(f"no organic array{': ' + message if message else ''}")
        if not isinstance(organic, list):
            return not_understood("organic is not an array")
        if not organic:
            return Parsed("empty", detail="no organic results")
        items = []
        for result in organic:
            if not isinstance(result, dict):
                continue
            link = result.get("link")
            if not isinstance(link, str) or not link.startswith(("http://", "https://")):
                continue
            stamp = result.get("date")
            items.append((
                _text(result.get("title")),
                unwrap(link),
                _text(result.get("snippet")),
                parse_date(stamp, options.now) if isinstance(stamp, str) else None,
            ))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        return not_understood("organic results without title and link")


ENGINE = Serper()
