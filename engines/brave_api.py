"""Brave Search API (api.search.brave.com/res/v1/web/search): Brave's own index, keyed."""

from __future__ import annotations

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, not_understood, query_with_domains, rows_from
from engines.brave import COUNTRIES
from engines.dates import parse_date
from engines.regions import by_country
from engines.jsonapi import (
    MESSAGE_CHARS,
    KeyedEngine,
    host_name,
    country_of,
    header_retry_after,
    keyed_failure,
    keyed_request,
    language_of,
    linked,
    load_json,
)
from engines.markup import parse_html, text_of
from engines.redirects import unwrap

URL = "https://api.search.brave.com/res/v1/web/search"
# Brave's news endpoint: the same parameters, answered with {"type": "news", "results": [...]} whose items
# carry title, url, description, age/page_age and meta_url (hostname).
NEWS_URL = "https://api.search.brave.com/res/v1/news/search"
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
# Brave's search_lang codes where they differ from the plain language subtag.
_LANGS = {"zh-cn": "zh-hans", "zh-sg": "zh-hans", "zh-tw": "zh-hant", "zh-hk": "zh-hant",
          "zh-mo": "zh-hant", "zh": "zh-hans", "ja": "jp", "en-gb": "en-gb", "pt-br": "pt-br",
          "pt-pt": "pt-pt", "no": "nb"}
# Error codes Brave puts in {"type": "ErrorResponse", "error": {"code": ...}}.
_KEY_CODES = ("SUBSCRIPTION_TOKEN_INVALID", "SUBSCRIPTION_NOT_FOUND", "UNAUTHORIZED")
_QUOTA_CODES = ("QUOTA_LIMITED", "USAGE_LIMIT_EXCEEDED", "SUBSCRIPTION_EXPIRED", "PAYMENT_REQUIRED")


def search_lang(region: str) -> str:
    lang = language_of(region)
    country = (country_of(region) or "").lower()
    return _LANGS.get(f"{lang}-{country}") or _LANGS.get(lang, lang)


def html_text(fragment: str) -> str:
    """Brave's descriptions carry <strong> highlighting and HTML entities."""
    if "<" not in fragment and "&" not in fragment:
        return " ".join(fragment.split())
    return text_of(parse_html(f"<div>{fragment}</div>").css_first("div"))


def _error(data: object) -> tuple[str, str]:
    """(code, detail) of a Brave ErrorResponse, else empty strings."""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = data["error"]
        code = error.get("code") if isinstance(error.get("code"), str) else ""
        detail = error.get("detail") if isinstance(error.get("detail"), str) else ""
        return code, detail[:MESSAGE_CHARS]
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return "", data["message"][:MESSAGE_CHARS]
    return "", ""


def rate_limit_reset(response: Response) -> float | None:
    """Seconds until the exhausted window resets, from X-RateLimit-Remaining / -Reset.

    Brave sends one value per window ("1, 1419704": per second, per month); the
    window whose remaining count is 0 is the one that stopped us.
    """
    remaining = (response.headers.get("x-ratelimit-remaining") or "").split(",")
    reset = (response.headers.get("x-ratelimit-reset") or "").split(",")
    waits = []
    for left, wait in zip(remaining, reset):
        left, wait = left.strip(), wait.strip()
        if left == "0" and wait.isdigit():
            waits.append(float(wait))
    return max(waits) if waits else None


def retry_after(response: Response) -> float | None:
    """Retry-After when Brave sends one (and it is not 0), else the exhausted window's reset."""
    return header_retry_after(response) or rate_limit_reset(response)


def brave_failure(response: Response, data: object) -> Parsed | None:
    """Brave's errors are told by code more than by status; the detail names both code and text."""
    code, detail = _error(data)
    return keyed_failure(
        response, " ".join(part for part in (code, detail) if part), "Brave API",
        # Brave answers a bad token with 422 SUBSCRIPTION_TOKEN_INVALID.
        key_rejected=code in _KEY_CODES,
        quota_exhausted=code in _QUOTA_CODES,
        quota_words=(),  # the codes say it; words in the text do not
        wait=retry_after,
        rate_limit_detail="HTTP 429 rate limit",
    )


class BraveApi(KeyedEngine):
    facts = EngineFacts(
        name="brave-api",
        tier="primary",
        weight=1.0,
        region="global",
        index="brave",
        key_env="BRAVE_API_KEY",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=by_country(COUNTRIES, code=str.upper),
        default_region="all countries",
        native_domains=True,
        news=True,
        paging=True,
        max_page=10,  # offset 0..9
        description="Brave Search API (Brave's own index), keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_domains(query, options)  # Brave documents site:, -site: and OR
        params: list[tuple[str, str]] = [("q", text), ("count", str(_count(options)))]
        if options.page > 1:
            params.append(("offset", str(options.page - 1)))  # Brave's offset is a page index, 0..9
        if options.region:
            country = self.facts.region_code(options.region)
            if country:  # only the countries Brave lists; anything else is its default, ALL
                params.append(("country", country))
            params.append(("search_lang", search_lang(options.region)))
        if options.time_range:
            params.append(("freshness", _FRESHNESS[options.time_range]))
        params.append(("safesearch", options.safesearch))  # off | moderate | strict, Brave's own names
        # api_headers already asks for application/json, which Brave requires.
        url = NEWS_URL if options.category == "news" else URL
        return keyed_request("GET", url, options, "X-Subscription-Token", params=tuple(params))

    def classify_status(self, response: Response) -> Parsed | None:
        return brave_failure(response, load_json(response))

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        if not isinstance(data, dict):
            if response.body[:2] == b"\x1f\x8b":
                return not_understood("body is still gzip-compressed")
            return not_understood("response is not a JSON object")
        if options.category == "news":
            return self._news(data, query, options)
        web = data.get("web")
        if web is None:
            if data.get("type") == "search":
                # A well-formed answer with no web section: Brave found nothing
                # (query.bad_results is set for junk queries like a lone "\").
                return Parsed("empty", detail="no web results")
            return not_understood("no web section")
        results = web.get("results") if isinstance(web, dict) else None
        if not isinstance(results, list):
            return not_understood("web section without results")
        if not results:
            return Parsed("empty", detail="no web results")
        items = []
        for result, url in linked(results):
            title = result.get("title")
            description = result.get("description")
            items.append((
                html_text(title) if isinstance(title, str) else "",
                unwrap(url),
                html_text(description) if isinstance(description, str) else "",
                _date(result, options),
            ))
        rows = rows_from(items, offset=(max(options.page, 1) - 1) * _count(options))
        if rows:
            return Parsed("ok", rows, correction=_altered(data, query))
        return not_understood("web results without title and URL")

    def _news(self, data: dict, query: str, options: SearchOptions) -> Parsed:
        results = data.get("results")
        if not isinstance(results, list):
            return not_understood("no news results array")
        if not results:
            return Parsed("empty", detail="no news results")
        items = []
        for result, url in linked(results):
            title, description = result.get("title"), result.get("description")
            items.append((
                html_text(title) if isinstance(title, str) else "",
                unwrap(url),
                html_text(description) if isinstance(description, str) else "",
                _date(result, options),
                _publisher(result, url),
            ))
        rows = rows_from(items, offset=(max(options.page, 1) - 1) * _count(options))
        if rows:
            return Parsed("ok", rows, correction=_altered(data, query))
        return not_understood("news results without title and URL")


def _count(options: SearchOptions) -> int:
    return min(max(options.count, 1), 20)


def _publisher(result: dict, url: str) -> str | None:
    """A news item's `source` when Brave names one, else the site from meta_url (or the URL)."""
    source = result.get("source")
    if isinstance(source, str) and source.strip():
        return source.strip()
    meta = result.get("meta_url")
    host = meta.get("hostname") if isinstance(meta, dict) else None
    return host_name(host) if isinstance(host, str) and host else host_name(url)


def _altered(data: dict, query: str) -> str | None:
    """query.altered: "the altered query for which the search was performed" (Brave's spellcheck)."""
    block = data.get("query")
    altered = block.get("altered") if isinstance(block, dict) else None
    if isinstance(altered, str) and altered.strip() and altered.strip().casefold() != query.strip().casefold():
        return altered.strip()
    return None


def _date(result: dict, options: SearchOptions):
    # page_age is an absolute ISO timestamp; age is its display form ("4 days ago").
    for key in ("page_age", "age"):
        value = result.get(key)
        if isinstance(value, str) and value.strip():
            found = parse_date(value, options.now)
            if found:
                return found
    return None


ENGINE = BraveApi()
