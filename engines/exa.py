"""Exa (api.exa.ai/search): a keyed neural/keyword web search API with its own index."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, allowed_of, not_understood, rows_from
from engines.dates import parse_date
from engines.jsonapi import (
    SNIPPET_CHARS,
    KeyedEngine,
    country_of,
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

URL = "https://api.exa.ai/search"
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


def clean_markdown(text: str) -> str:
    """Markdown made into one line of plain text (links keep their words, images go)."""
    text = _MD_IMAGE.sub(" ", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_HEADING.sub(" ", text)
    text = _MD_BULLET.sub("", text)
    text = _MD_EMPHASIS.sub("", text)
    return plain_text(text)


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


def _error_message(data: object) -> str:
    return error_message(data, ("error", "message", "detail"))


def start_date(time_range: str, now: datetime | None) -> str:
    """ISO-8601 UTC instant `time_range` before `now` (naive `now` is taken as UTC)."""
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is not None:
        now = now.astimezone(timezone.utc).replace(tzinfo=None)
    start = now - timedelta(days=_DAYS[time_range])
    return start.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Exa(KeyedEngine):
    facts = EngineFacts(
        name="exa",
        tier="primary",
        weight=1.0,
        region="global",
        index="exa",
        key_env="EXA_API_KEY",
        native_site=True,
        native_time=True,
        regions=None,  # userLocation: any two-letter country
        native_domains=True,
        news=True,
        paging=True,
        max_page=10,  # numResults tops out at 100
        description="Exa search API (own neural/keyword index), keyed",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        ask, _ = page_window(options, 100)  # Exa has no offset: page N asks for N pages' results
        body: dict[str, object] = {
            "query": query,
            "numResults": ask,
            "type": "auto",
            # Query-relevant excerpts: short, and what a snippet should be.
            "contents": {"highlights": {"maxCharacters": SNIPPET_CHARS * 2}},
        }
        allowed = allowed_of(options)
        if allowed:
            body["includeDomains"] = list(allowed)
        if options.blocked_domains:
            body["excludeDomains"] = list(options.blocked_domains)
        if options.category == "news":
            body["category"] = "news"  # Exa's documented category for news articles
        if options.time_range:
            body["startPublishedDate"] = start_date(options.time_range, options.now)
        country = country_of(options.region)
        if country:
            body["userLocation"] = country
        return keyed_request("POST", URL, options, "x-api-key", body=body)

    # A 402 or a message about credits or quota: the plan is spent.
    service = "Exa"

    def error_message(self, data: object) -> str:
        return _error_message(data)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        data = load_json(response)
        results = results_array(data, _error_message(data))
        if isinstance(results, Parsed):
            return results
        news = options.category == "news"
        items = [(plain_text(result.get("title")), unwrap(url), _snippet(result), _date(result, options),
                  host_name(url) if news else None, _page_text(result))
                 for result, url in linked(results)]
        _, skip = page_window(options, 100)
        rows = rows_from(items[skip:], offset=skip)
        if items and not rows and skip:
            return Parsed("empty", detail=f"no results beyond the first {skip}")
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


def _page_text(result: dict) -> str | None:
    """The page text Exa sends when the request asks for `contents.text` (cut at its maxCharacters)."""
    text = result.get("text")
    return text if isinstance(text, str) and text.strip() else None


def _date(result: dict, options: SearchOptions):
    value = result.get("publishedDate")
    return parse_date(value, options.now) if isinstance(value, str) else None


ENGINE = Exa()
