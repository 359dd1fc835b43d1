"""Operators written into the query: `site:python.org`, `past week`, `最近一周`, `2025年以后`.

They are recognised, removed from the text handed to engines (which would
otherwise search for the words "past week"), passed natively to engines that
support them, and applied as hard filters to the rows of engines that do not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

_SITE = re.compile(r"(?<![\w-])site:([A-Za-z0-9.-]+\.[A-Za-z]{2,})(?=$|[\s)])", re.I)
_NEGATED_OR_GROUPED = re.compile(r"-site:|\bOR\b")

_EN_RANGES = [
    (re.compile(r"\b(?:in\s+the\s+)?(?:past|last)\s+(?:24\s*hours|day)\b", re.I), "day"),
    (re.compile(r"\b(?:in\s+the\s+)?(?:past|last)\s+(?:7\s*days|week)\b|\bthis\s+week\b", re.I), "week"),
    (re.compile(r"\b(?:in\s+the\s+)?(?:past|last)\s+(?:30\s*days|month)\b|\bthis\s+month\b", re.I), "month"),
    (re.compile(r"\b(?:in\s+the\s+)?(?:past|last)\s+(?:12\s*months|year)\b|\bthis\s+year\b", re.I), "year"),
]
_ZH_RANGES = [
    (re.compile(r"(?:最近|近|过去)\s*(?:一|1)?\s*(?:天|日)|(?:最近|近|过去)\s*24\s*小时|24\s*小时内|今天|今日"), "day"),
    (re.compile(r"(?:最近|近|过去)\s*(?:一|1)\s*(?:周|星期)|(?:最近|近|过去)\s*(?:7|七)\s*天|一周内|本周"), "week"),
    (re.compile(r"(?:最近|近|过去)\s*(?:一|1)\s*个?月|(?:最近|近|过去)\s*30\s*天|一个月内|本月"), "month"),
    (re.compile(r"(?:最近|近|过去)\s*(?:一|1)\s*年|一年内|今年"), "year"),
]
_SINCE = [
    re.compile(r"((?:19|20)\d{2})\s*年\s*(?:以后|以来|之后|后|至今)"),
    re.compile(r"\b(?:since|after)\s+((?:19|20)\d{2})\b", re.I),
]
_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Operators:
    text: str  # the query with recognised operators removed
    site: str | None = None
    time_range: str | None = None  # day | week | month | year, passed natively where supported
    since: date | None = None  # earliest acceptable date ("2025年以后" -> 2025-01-01)
    # True when a relative range was asked for (not derived from `since`): rows
    # without a date cannot be shown to be recent, so non-native engines lose them.
    range_asked: bool = False
    recognised: list[str] = field(default_factory=list)

    def window_start(self, now: datetime) -> date | None:
        """The earliest date a row may carry under the recognised time operators."""
        starts = []
        if self.time_range:
            starts.append((now - timedelta(days=_RANGE_DAYS[self.time_range])).date())
        if self.since:
            starts.append(self.since)
        return max(starts) if starts else None


def native_range_for(since: date, now: datetime) -> str | None:
    """The tightest engine time range that still contains `since`, if any does."""
    age = (now.date() - since).days
    for name in ("day", "week", "month", "year"):
        if age <= _RANGE_DAYS[name] - 1:
            return name
    return None


def parse_operators(query: str, *, site: str | None = None, time_range: str | None = None,
                    now: datetime | None = None) -> Operators:
    """Recognise operators in `query`; explicit `site` / `time_range` arguments take precedence."""
    now = now or datetime.now()
    text = query
    recognised: list[str] = []

    found_site = None
    if not _NEGATED_OR_GROUPED.search(text):
        sites = _SITE.findall(text)
        if len(sites) == 1:
            found_site = sites[0].lower()
            text = _SITE.sub(" ", text)
    site = site or found_site
    if site:
        recognised.append(f"site={site}")

    found_range = None
    for patterns in (_EN_RANGES, _ZH_RANGES):
        for pattern, name in patterns:
            if pattern.search(text):
                found_range = found_range or name
                text = pattern.sub(" ", text)
    since = None
    for pattern in _SINCE:
        m = pattern.search(text)
        if m:
            since = date(int(m.group(1)), 1, 1)
            # Keep the year in the text: engines match it, and it is not an instruction word.
            text = pattern.sub(lambda mm: f" {mm.group(1)} ", text)
            break
    time_range = time_range or found_range
    range_asked = bool(time_range)
    if time_range:
        recognised.append(f"time={time_range}")
    if since:
        recognised.append(f"time=since:{since.isoformat()}")
        if not time_range:
            time_range = native_range_for(since, now)

    text = _SPACE.sub(" ", text).strip(" ,，;；")
    if not text:
        # "site:python.org" alone: the operator is the whole query; keep it for the engines.
        text = query
    return Operators(text=text, site=site, time_range=time_range, since=since, range_asked=range_asked,
                     recognised=recognised)


# Words that make a query about what is new: there, a recent page is worth more than an old one.
_TIMELY = re.compile(
    r"\b(news|latest|today|tonight|yesterday|this week|breaking|recent|new release|released?|announce\w*|"
    r"update[sd]?|changelog|what'?s new|20[2-9]\d)\b|最新|新闻|今天|今日|近期|最近|发布|动态|更新|公告|新版",
    re.I,
)


def is_timely(query: str, operators: Operators) -> bool:
    """Whether freshness should count for this query (a time operator, or words asking for news)."""
    return bool(operators.time_range or operators.since or _TIMELY.search(query))
