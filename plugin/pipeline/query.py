"""Checking what a caller asked for: one place, so CLI, API and MCP agree on codes."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Iterable

from engines import ENGINES
from engines.base import SAFESEARCH_LEVELS, TIME_RANGES
from plugin.errors import (INVALID_PARAMETER, QUERY_REQUIRED, QUERY_TOO_LONG, UNKNOWN_ENGINE, SearchError,
                           engine_names_with_hints)
from plugin.pipeline.domains import check_domain, check_domains
from plugin.pipeline.locale import check_region, check_user_location, region_for_country
from plugin.pipeline.sanitize import QUERY_TEXT, normalise

MAX_QUERY_CHARS = 500
MIN_LIMIT, MAX_LIMIT = 1, 20
CATEGORIES: tuple[str, ...] = ("web", "news")
MAX_PAGE = 10  # engines rarely serve deeper pages, and each page costs every engine a request


def clean_argument(raw: object) -> str:
    """A caller's text argument on one line (see `sanitize.QUERY_TEXT`); "" for None, non-strings refused."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise SearchError(INVALID_PARAMETER, "query must be a string")
    return normalise(raw, QUERY_TEXT)


def clean_query(raw: object) -> str:
    query = clean_argument(raw)
    if not query:
        raise SearchError(QUERY_REQUIRED, "query is required (it was empty or blank)")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(
            QUERY_TOO_LONG,
            f"query is {len(query)} characters after trimming; the limit is {MAX_QUERY_CHARS}",
            limit=MAX_QUERY_CHARS,
        )
    return query


def whole_number(raw: object) -> int | None:
    """The integer a caller's argument spells, or None when it is not one: an int (not a bool), a float
    with no fraction, or a string of an optional sign and digits, spaces around allowed. Every integer
    argument (limit, page, read, offset, max_chars) is read by this one rule. Past nine digits only the
    sign matters (every range here is far smaller, and int() of a ten-thousand-digit string is not free)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    if isinstance(raw, str) and (digits := re.fullmatch(r"\s*([+-]?)(\d+)\s*", raw)):
        sign, number = digits.groups()
        return int(sign + number) if len(number) <= 9 else (-1 if sign == "-" else 1) * 10**9
    return None


def clamp_limit(raw: object, default: int) -> int:
    """An integer limit clamped to 1..20; a non-integer is refused, out-of-range is clamped."""
    value = default if raw is None else whole_number(raw)
    if value is None:
        raise SearchError(INVALID_PARAMETER, f"limit must be an integer, got {str(raw)[:40]!r}", parameter="limit")
    return max(MIN_LIMIT, min(MAX_LIMIT, value))


def check_engines(raw: str | Iterable[str] | None) -> list[str] | None:
    """Engine names from a list or a comma-separated string; unknown names are refused."""
    if raw is None:
        return None
    if isinstance(raw, str):
        names = [part.strip() for part in raw.split(",")]
    else:
        try:
            names = [str(part).strip() for part in raw]
        except TypeError:
            raise SearchError(INVALID_PARAMETER, "engines must be a list of names", parameter="engines") from None
    names = [clean_argument(name).lower() for name in names if name and name.strip()]
    if not names:
        return None
    unknown = [name for name in names if name not in ENGINES]
    if unknown:
        raise SearchError(
            UNKNOWN_ENGINE,
            f"unknown engine(s): {engine_names_with_hints(unknown, ENGINES)}; known engines: "
            f"{', '.join(sorted(ENGINES))}",
            unknown=unknown,
            known=sorted(ENGINES),
        )
    return list(dict.fromkeys(names))


def check_choice(name: str, raw: object, choices: tuple[str, ...]) -> str | None:
    if raw is None or raw == "":
        return None
    value = clean_argument(raw).lower() if isinstance(raw, str) else raw
    if value not in choices:
        raise SearchError(
            INVALID_PARAMETER, f"{name} must be one of {', '.join(choices)}, got {str(raw)[:40]!r}", parameter=name
        )
    return value  # type: ignore[return-value]


def check_site(raw: object) -> str | None:
    """`site`: the shorthand for a one-domain allow list."""
    if raw is None or raw == "":
        return None
    return check_domain("site", raw)


def check_page(raw: object) -> int:
    """A 1-based page number; not an integer, or outside 1..MAX_PAGE, is refused (a page past the
    last is not clamped: that would silently repeat rows the caller already has). An empty string is refused
    as it is for limit, read and offset (it had meant page 1)."""
    if raw is None:
        return 1
    value = whole_number(raw)
    if value is None or not 1 <= value <= MAX_PAGE:
        raise SearchError(INVALID_PARAMETER, f"page must be an integer from 1 to {MAX_PAGE}, got {str(raw)[:40]!r}",
                          parameter="page")
    return value


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int
    engines: list[str] | None
    region: str | None
    time_range: str | None
    site: str | None
    safesearch: str | None
    allowed_domains: tuple[str, ...] = ()  # `site` included
    blocked_domains: tuple[str, ...] = ()
    category: str = "web"
    page: int = 1
    user_location: str | None = None  # ISO 3166-1 alpha-2 country; `region` is derived from it when not given


def check_request(query: object, *, limit: object = None, default_limit: int = 8, engines: object = None,
                  region: object = None, time_range: object = None, site: object = None,
                  safesearch: object = None, allowed_domains: object = None, blocked_domains: object = None,
                  category: object = None, page: object = None, user_location: object = None) -> SearchRequest:
    text = clean_query(query)
    checked_limit = clamp_limit(limit, default_limit)
    site_domain = check_site(site)
    allowed = check_domains("allowed_domains", allowed_domains)
    blocked = check_domains("blocked_domains", blocked_domains)
    if site_domain:
        allowed = tuple(dict.fromkeys((site_domain,) + allowed))
    if allowed and blocked:
        # As in Anthropic's web_search: one list or the other, so the outcome never depends on precedence.
        raise SearchError(INVALID_PARAMETER, "allowed_domains (or site) and blocked_domains cannot both be given; "
                                             "use one list", parameter="blocked_domains")
    country = check_user_location(user_location)
    return SearchRequest(
        query=text,
        limit=checked_limit,
        engines=check_engines(engines),  # type: ignore[arg-type]
        region=check_region(region) or region_for_country(country),
        time_range=check_choice("time_range", time_range, TIME_RANGES),
        site=site_domain,
        safesearch=check_choice("safesearch", safesearch, SAFESEARCH_LEVELS),
        allowed_domains=allowed,
        blocked_domains=blocked,
        category=check_choice("category", category, CATEGORIES) or "web",
        page=check_page(page),
        user_location=country,
    )


# The caller's options `check_request` takes, read off its signature so that one added there is accepted by
# `Searcher.search`, which refuses any other name (an invented `lang=`) as invalid_parameter.
REQUEST_OPTIONS = tuple(name for name, parameter in inspect.signature(check_request).parameters.items()
                        if parameter.kind is parameter.KEYWORD_ONLY and name != "default_limit")
