"""Exa (api.exa.ai/search): a keyed neural/keyword web search API with its own index."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from datetime import datetime, timedelta, timezone

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

URL = "https://api.exa.ai/search"
SNIPPET_CHARS = 400
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_SPACE = re.compile(r"\s+")
_MD_IMAGE = re.compile(r"!\[[^\]]*\](?:\([^)]*\))?")
_MD_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\))?")
_MD_BRACKETED = re.compile(r"\[[^\]]*\](?:\([^)]*\))?")
_MD_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s*|#{2,6}\s*|\s#\s")
# A link whose text spans lines is a navigation card ("[### HealthCare\n]").
_MD_CARD = re.compile(r"\[[^\]\n]*\n[^\]]*\](?:\([^)]*\))?")
_MD_BULLET = re.compile(r"(?m)^\s*[*+-]\s+")
_MD_EMPHASIS = re.compile(r"(\*\*|__|`+|\\(?=[>#*_\[\]]))")
# Exa joins the pieces of one highlight with a line of three dots.
_ELISION = re.compile(r"\s*\n\.\.\.\n\s*")


def trim(text: str, limit: int = SNIPPET_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—…") + "…"


def clean_markdown(text: str) -> str:
    """Markdown made into one line of plain text (links keep their words, images go)."""
    text = _MD_IMAGE.sub(" ", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_HEADING.sub(" ", text)
    text = _MD_BULLET.sub("", text)
    text = _MD_EMPHASIS.sub("", text)
    return _SPACE.sub(" ", html.unescape(text)).strip()


def highlight_snippet(parts: list[str]) -> str:
    return trim(clean_markdown(_ELISION.sub(" … ", " … ".join(parts))))


def _is_prose(line: str) -> bool:
    words = _SPACE.sub(" ", _MD_BRACKETED.sub(" ", line)).strip()
    if len(words) < 60:
        return False
    count = len(words.split())
    return count >= 8 and len(words) / count <= 10  # run-together menus have long "words"


def page_snippet(text: str, title: str = "") -> str:
    """A snippet from page text: its prose lines, skipping navigation (lines of bare links)."""
    text = _MD_CARD.sub(" ", text[:SNIPPET_CHARS * 20])  # a snippet never needs more; bounds regex work
    heading = clean_markdown(title).lower()
    prose = []
    for line in text.splitlines():
        if not _is_prose(line):
            continue
        cleaned = clean_markdown(line)
        if heading and cleaned.lower().startswith(heading) and len(cleaned) - len(heading) < 12:
            continue  # the page repeating its own title
        prose.append(cleaned)
        if sum(len(p) for p in prose) > SNIPPET_CHARS:
            break
    return trim(" ".join(prose) if prose else clean_markdown(text[:SNIPPET_CHARS * 4]))


def _load(response: Response) -> object:
    try:
        return json.loads(response.text)
    except (ValueError, TypeError, RecursionError):
        return None


def _error_message(data: object) -> str:
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:160]
    return ""


def country_of(region: str | None) -> str | None:
    """The two-letter country subtag of a region ("en-US" -> "US", "zh-Hans-CN" -> "CN"), else None."""
    parts = (region or "").replace("_", "-").split("-")[1:]
    for part in reversed(parts):
        if len(part) == 2 and part.isalpha():
            return part.upper()
    return None


def keyed_failure(response: Response, data: object, service: str) -> Parsed | None:
    """What a non-2xx status means for a keyed API: a bad key is our configuration, not a block."""
    status = response.status
    if 200 <= status < 300:
        return None
    message = _error_message(data)
    suffix = f": {message}" if message else ""
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if status in (401, 403):
        return Parsed("error", detail=f"API key rejected (HTTP {status}){suffix}")
    lowered = message.lower()
    if status == 402 or "credit" in lowered or "quota" in lowered:
        return Parsed("ratelimited", detail=f"{service} quota exhausted (HTTP {status}){suffix}",
                      retry_after=retry_after)
    failure = http_failure(response) or Parsed("error", detail=f"HTTP {status}")
    return dataclasses.replace(failure, detail=failure.detail + suffix)


def start_date(time_range: str, now: datetime | None) -> str:
    """ISO-8601 UTC instant `time_range` before `now` (naive `now` is taken as UTC)."""
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is not None:
        now = now.astimezone(timezone.utc).replace(tzinfo=None)
    start = now - timedelta(days=_DAYS[time_range])
    return start.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Exa(Engine):
    facts = EngineFacts(
        name="exa",
        tier="primary",
        weight=1.0,
        region="global",
        index="exa",
        key_env="EXA_API_KEY",
        native_site=True,
        native_time=True,
        description="Exa search API (own neural/keyword index), keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        body: dict[str, object] = {
            "query": query,
            "numResults": min(max(options.count, 1), 100),
            "type": "auto",
            # Query-relevant excerpts: short, and what a snippet should be.
            "contents": {"highlights": {"maxCharacters": SNIPPET_CHARS * 2}},
        }
        if options.site:
            body["includeDomains"] = [options.site]
        if options.time_range:
            body["startPublishedDate"] = start_date(options.time_range, options.now)
        country = country_of(options.region)
        if country:
            body["userLocation"] = country
        headers = api_headers()
        headers["Content-Type"] = "application/json"
        key = options.api_key or ""
        headers["x-api-key"] = key
        return Request("POST", URL, json=body, headers=headers, secrets=(key,) if key else ())

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = _load(response)
        failure = keyed_failure(response, data, "Exa")
        if failure:
            return failure
        if not isinstance(data, dict):
            return not_understood("response is not a JSON object")
        results = data.get("results")
        if not isinstance(results, list):
            message = _error_message(data)
            return not_understood(f"no results array{': ' + message if message else ''}")
        if not results:
            return Parsed("empty", detail="no results")
        items = []
        for result in results:
            if not isinstance(result, dict):
                continue
            title = result.get("title")
            url = result.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            title = _SPACE.sub(" ", html.unescape(title)).strip() if isinstance(title, str) else ""
            items.append((title, unwrap(url), _snippet(result), _date(result, options)))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        return not_understood("results without title and URL")


def _snippet(result: dict) -> str:
    highlights = result.get("highlights")
    if isinstance(highlights, list):
        parts = [h for h in highlights if isinstance(h, str) and h.strip()]
        if parts:
            return highlight_snippet(parts)
    summary = result.get("summary")
    if isinstance(summary, str) and summary.strip():
        return trim(clean_markdown(summary))
    text = result.get("text")
    if isinstance(text, str) and text.strip():
        return page_snippet(text)
    return ""


def _date(result: dict, options: SearchOptions):
    value = result.get("publishedDate")
    return parse_date(value, options.now) if isinstance(value, str) else None


ENGINE = Exa()
