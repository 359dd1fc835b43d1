"""Helpers shared by the engines that speak JSON (keyed APIs, SearXNG, Wikipedia).

Like the engines, these are pure. Where engines really differ (which statuses
or words mean a spent quota, where an API puts its error text) the difference
is a parameter the engine passes, so each keeps its own classification.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from typing import Callable, Iterator, Mapping

from engines.base import (Engine, Parsed, Request, Response, SearchOptions, generic_wall, http_failure, not_understood,
                          parse_retry_after)
from engines.browser import api_headers
from engines.hosts import display_host, host_of
from engines.regions import country_of, language_of  # noqa: F401  (re-exported: the APIs' region helpers)

# Longest snippet we keep; APIs hand back whole paragraphs or page text.
SNIPPET_CHARS = 400
# Longest error message from an API body that goes into a Parsed.detail.
MESSAGE_CHARS = 160

_SPACE = re.compile(r"\s+")
# Only complete entities (with their semicolon): HTML also decodes a few legacy names without one, which
# would turn plain text such as "&section" or "&notes" into "§ion" and "¬es".
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_WEB = ("http://", "https://")


# ----- reading the answer ----------------------------------------------------

def load_json(response: Response) -> object:
    """The decoded JSON body, or None when the body is not JSON.

    RecursionError too: a deeply nested body must not escape the parser.
    """
    try:
        return json.loads(response.text)
    except (ValueError, TypeError, RecursionError):
        return None


def error_message(data: object, keys: tuple[str, ...]) -> str:
    """The first non-blank string among `keys` of a JSON object, stripped and capped; else ""."""
    if isinstance(data, dict):
        for key in keys:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:MESSAGE_CHARS]
    return ""


def is_web_url(value: object) -> bool:
    """An absolute http(s) URL: anything else (javascript:, relative, non-string) is no row."""
    return isinstance(value, str) and value.startswith(_WEB)


def results_array(data: object, message: str) -> list | Parsed:
    """The non-empty `results` array of a JSON object, or the Parsed saying why there are no rows.

    `message` is the API's error text: worth naming when the array is missing.
    """
    if not isinstance(data, dict):
        return not_understood("response is not a JSON object")
    results = data.get("results")
    if not isinstance(results, list):
        return not_understood(f"no results array{': ' + message if message else ''}")
    if not results:
        return Parsed("empty", detail="no results")
    return results


def linked(results: list, url_key: str = "url") -> Iterator[tuple[dict, str]]:
    """(result, url) for each JSON object in `results` whose `url_key` is an http(s) URL.

    Anything else in the array (null, strings, objects without a usable link) is skipped.
    """
    for result in results:
        if isinstance(result, dict) and is_web_url(result.get(url_key)):
            yield result, result[url_key]


# ----- text ------------------------------------------------------------------

def plain_text(value: object) -> str:
    """A JSON string with complete HTML entities decoded and whitespace folded to one line; "" for non-strings."""
    if not isinstance(value, str):
        return ""
    return _SPACE.sub(" ", _ENTITY.sub(lambda m: html.unescape(m.group(0)), value)).strip()


def trim(text: str, limit: int = SNIPPET_CHARS) -> str:
    """`text` cut to `limit` characters, at a word boundary when one is near, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    # Back up to the last space only if that keeps most of the text: text with
    # no late space (a long URL, CJK) is cut mid-word rather than halved.
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—…") + "…"


# ----- pages and publishers ----------------------------------------------------

def page_window(options: SearchOptions, cap: int) -> tuple[int, int]:
    """(ask, skip) for an API without an offset: page N asks for N pages' worth of results (at most
    `cap`, the API's own maximum) and skips the rows of the pages before."""
    size = min(max(options.count, 1), cap)
    page = max(options.page, 1)
    return min(size * page, cap), size * (page - 1)


def host_name(url: str) -> str | None:
    """The site a news row comes from, when the API names no publisher: its host (engines.hosts), as a
    person reads it, without "www."."""
    host = display_host(host_of(url if "://" in url else f"https://{url}"))
    host = host[4:] if host.startswith("www.") else host
    return host or None


# ----- keyed APIs ------------------------------------------------------------

def keyed_request(method: str, url: str, options: SearchOptions, key_header: str, scheme: str = "", *,
                  body: Mapping[str, object] | None = None, params: tuple[tuple[str, str], ...] = ()) -> Request:
    """A request carrying the API key in `key_header` (as `scheme` + key), a JSON body if given.

    The key is listed in `secrets` so the transport and recorder scrub it.
    """
    headers = api_headers()
    if body is not None:
        headers["Content-Type"] = "application/json"
    key = options.api_key or ""
    headers[key_header] = scheme + key
    return Request(method, url, params=params, json=body, headers=headers, secrets=(key,) if key else ())


def header_retry_after(response: Response) -> float | None:
    """Seconds from the response's Retry-After header, if any."""
    return parse_retry_after(response.headers.get("retry-after"))


def keyed_failure(
    response: Response,
    message: str,
    service: str,
    *,
    quota_statuses: tuple[int, ...] = (402,),
    quota_words: tuple[str, ...] = ("credit", "quota"),
    quota_noun: str = "quota",
    key_rejected: bool = False,
    quota_exhausted: bool = False,
    wait: Callable[[Response], float | None] = header_retry_after,
    rate_limit_detail: str = "HTTP 429",
) -> Parsed | None:
    """What a non-2xx status means for a keyed API, or None for a 2xx answer.

    A rejected key is our configuration, not a block, so it is an error; a
    spent quota or credit balance is a rate limit. `message` is the API's own
    error text, appended to the detail.

    Engines differ in how they say "quota": `quota_statuses` and `quota_words`
    (matched in the lower-cased message) are theirs; `key_rejected` and
    `quota_exhausted` carry what an engine read from its own error codes.
    `wait` gives the retry delay for quota and 429 answers, `rate_limit_detail`
    the wording of a plain 429.
    """
    status = response.status
    if 200 <= status < 300:
        return None
    suffix = f": {message}" if message else ""
    if status in (401, 403) and not key_rejected:
        # A CDN's bot wall in front of the API (an HTML challenge page) turns us away, not the API our key.
        wall = generic_wall(response)
        if wall is not None:
            return wall
    if status in (401, 403) or key_rejected:
        return Parsed("error", detail=f"API key rejected (HTTP {status}){suffix}")
    lowered = message.lower()
    if status in quota_statuses or quota_exhausted or any(word in lowered for word in quota_words):
        return Parsed("ratelimited", detail=f"{service} {quota_noun} exhausted (HTTP {status}){suffix}",
                      retry_after=wait(response))
    if status == 429:
        # As http_failure would say it, but with the engine's wait and wording.
        return Parsed("ratelimited", detail=f"{rate_limit_detail}{suffix}", retry_after=wait(response))
    failure = http_failure(response) or Parsed("error", detail=f"HTTP {status}")
    return dataclasses.replace(failure, detail=failure.detail + suffix)


class KeyedEngine(Engine):
    """A keyed JSON API: its statuses are classified by `keyed_failure` with the engine's own quota rules
    (which statuses and words mean a spent quota) and its own error text."""

    service: str = ""
    quota_statuses: tuple[int, ...] = (402,)
    quota_words: tuple[str, ...] = ("credit", "quota")
    quota_noun: str = "quota"

    def error_message(self, data: object) -> str:
        """The API's error text in a JSON body ("" when there is none)."""
        return error_message(data, ("error", "message"))

    def classify_status(self, response: Response) -> Parsed | None:
        return keyed_failure(response, self.error_message(load_json(response)), self.service,
                             quota_statuses=self.quota_statuses, quota_words=self.quota_words,
                             quota_noun=self.quota_noun)
