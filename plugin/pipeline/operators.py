"""Operators written into the query: `site:python.org`, `(site:a.com OR site:b.org)`, `-site:x.com`,
`past week`, `最近一周`, `2025年以后`.

They are recognised, removed from the text handed to engines (which would
otherwise search for the words "past week"), passed natively to engines that
support them, and applied as hard filters to every engine's rows. Domain operators become the same
allow and block lists as the `allowed_domains` / `blocked_domains` parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from plugin.pipeline.domains import ascii_domain, within

# A domain operand runs to the next space, parenthesis or quote; ascii_domain decides whether it is one.
_OPERAND = r"[^\s()\"']+"
_OR = r"(?:OR|\|)"
# `(site:a OR site:b)`, `(site:a)` or a bare `site:a OR site:b` chain.
_SITE_GROUP = re.compile(
    rf"(?<![\w-])\(\s*site:{_OPERAND}(?:\s+{_OR}\s+site:{_OPERAND})*\s*\)(?=$|[\s)])"
    rf"|(?<![\w(-])site:{_OPERAND}(?:\s+{_OR}\s+site:{_OPERAND})+(?=$|[\s)])", re.I)
_NEGATED_SITE = re.compile(rf"(?<![\w-])-site:({_OPERAND})(?=$|[\s)])", re.I)
_SITE = re.compile(rf"(?<![\w(-])site:({_OPERAND})(?=$|[\s)])", re.I)
_SITE_OPERAND = re.compile(rf"site:({_OPERAND})", re.I)
# An OR right before or after a group makes it one branch of a wider OR: not a filter.
_OR_BEFORE = re.compile(rf"(?:^|\s){_OR}\s*$")
_OR_AFTER = re.compile(rf"^\s*{_OR}(?:\s|$)")

# A range followed by "of", "on", "tonight" or "'s" names a thing, not a time: "the last day of Pompeii",
# "Last Week Tonight", "last year's winner" were searched as "of Pompeii", "Tonight", "'s winner".
_NAMED = r"(?!\s*['’]s\b|\s+(?:of|on|tonight)\b)"
_EN_RANGES = [
    (re.compile(rf"\b(?:in\s+the\s+)?(?:past|last)\s+(?:24\s*hours|day)\b{_NAMED}", re.I), "day"),
    (re.compile(rf"\b(?:in\s+the\s+)?(?:past|last)\s+(?:7\s*days|week)\b{_NAMED}|\bthis\s+week\b{_NAMED}", re.I),
     "week"),
    (re.compile(rf"\b(?:in\s+the\s+)?(?:past|last)\s+(?:30\s*days|month)\b{_NAMED}|\bthis\s+month\b{_NAMED}", re.I),
     "month"),
    (re.compile(rf"\b(?:in\s+the\s+)?(?:past|last)\s+(?:12\s*months|year)\b{_NAMED}|\bthis\s+year\b{_NAMED}", re.I),
     "year"),
]


def _digits(number: str) -> str:
    """`number` as a pattern of its ASCII or full-width digits (a Chinese IME writes 最近７天 as often as 最近7天)."""
    return "".join(f"[{d}{chr(ord(d) + 0xFEE0)}]" for d in number)


_ZH_RANGES = [
    # 今天 (today), not 今日: 今日 begins names (今日头条 Toutiao, 今日美国 USA Today, 今日说法, 今日から俺は!!), and
    # "今日头条" became "头条" from the past day. 今日 still makes a query timely (intent.py).
    (re.compile(rf"(?:最近|近|过去)\s*(?:一|{_digits('1')})?\s*(?:天|日)|(?:最近|近|过去)\s*{_digits('24')}\s*小时|"
                rf"{_digits('24')}\s*小时内|今天"), "day"),
    (re.compile(rf"(?:最近|近|过去)\s*(?:一|{_digits('1')})\s*(?:周|星期)|(?:最近|近|过去)\s*(?:{_digits('7')}|七)\s*天|"
                r"一周内|本周"), "week"),
    (re.compile(rf"(?:最近|近|过去)\s*(?:一|{_digits('1')})\s*个?月|(?:最近|近|过去)\s*{_digits('30')}\s*天|一个月内|本月"),
     "month"),
    (re.compile(rf"(?:最近|近|过去)\s*(?:一|{_digits('1')})\s*年|一年内|今年"), "year"),
]

# A year of four digits in any script (２０２５, ٢٠٢٥); only one from 1900 on counts (_FIRST_SINCE_YEAR), so a Jalali or
# Hijri year (۱۴۰۰) is left alone.
_SINCE = [
    re.compile(r"(?<!\d)(\d{4})\s*年\s*(?:以后|以来|之后|后|至今)"),
    re.compile(r"\b(?:since|after)\s+(\d{4})\b", re.I),
]
_FIRST_SINCE_YEAR = 1900
_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Operators:
    text: str  # the query with recognised operators removed
    site: str | None = None  # the one allowed domain, when the allow list has exactly one
    allowed_domains: tuple[str, ...] = ()  # rows must come from one of these (or their subdomains)
    blocked_domains: tuple[str, ...] = ()  # rows must not come from any of these
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


def parse_operators(query: str, *, site: str | None = None, allowed_domains: tuple[str, ...] = (),
                    blocked_domains: tuple[str, ...] = (), time_range: str | None = None,
                    now: datetime | None = None) -> Operators:
    """Recognise operators in `query`. The caller's allow list (`site` included) replaces the query's
    own; blocked domains from both apply; an explicit `time_range` takes precedence."""
    now = now or datetime.now()
    recognised: list[str] = []
    text, found_allowed, found_blocked = _domain_operators(query)
    explicit_allowed = tuple(dict.fromkeys(((site,) if site else ()) + tuple(allowed_domains)))
    allowed = explicit_allowed or found_allowed
    blocked = tuple(dict.fromkeys(tuple(blocked_domains) + found_blocked))
    if len(allowed) == 1:
        recognised.append(f"site={allowed[0]}")
    elif allowed:
        recognised.append(f"allowed_domains={','.join(allowed)}")
    if blocked:
        recognised.append(f"blocked_domains={','.join(blocked)}")

    found_range = None
    for patterns in (_EN_RANGES, _ZH_RANGES):
        for pattern, name in patterns:
            if pattern.search(text):
                found_range = found_range or name
                text = pattern.sub(" ", text)
    since = None
    for pattern in _SINCE:
        # A year still to come is what the query is about ("climate after 2050", "2030年以后的能源"), not a
        # publication window: no page can be from then, and it would ask the engines for the past day.
        found = [m for m in pattern.finditer(text) if _FIRST_SINCE_YEAR <= int(m.group(1)) <= now.year]
        if found:
            since = date(int(found[0].group(1)), 1, 1)
            # Keep the year in the text: engines match it, and it is not an instruction word.
            text = pattern.sub(lambda mm: f" {mm.group(1)} " if _FIRST_SINCE_YEAR <= int(mm.group(1)) <= now.year
                               else mm.group(0), text)
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
    return Operators(text=text, site=allowed[0] if len(allowed) == 1 else None, allowed_domains=allowed,
                     blocked_domains=blocked, time_range=time_range, since=since, range_asked=range_asked,
                     recognised=recognised)


def _operand_domain(operand: str) -> str | None:
    """The domain a `site:` operand names, spelled as the `site` argument may be (domains.check_domain): a
    scheme, a leading `*.` and a trailing `/` forgiven (`site:https://docs.python.org/`, as agents write
    it, was left in the text unrecognised and filtered nothing); a path is no domain."""
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", operand, flags=re.I).rstrip("/")
    return ascii_domain(re.sub(r"^\*?\.", "", text)) if "/" not in text else None


def _domain_operators(query: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(text without the recognised domain operators, allowed domains, blocked domains).

    Each `site:` term or OR-group of `site:` terms is one constraint; several constraints all hold, so
    the allow list is their intersection (`site:microsoft.com site:learn.microsoft.com` is
    learn.microsoft.com). Terms that are not domains, groups that are one branch of a wider OR
    (`rust OR site:a.com`) and constraints no row could meet are left in the text, unrecognised.
    """
    constraints: list[tuple[str, ...]] = []
    allow_spans: list[tuple[int, int]] = []
    block_spans: list[tuple[int, int]] = []
    blocked: list[str] = []

    def free(start: int, end: int) -> bool:
        """Not inside a span already taken, and not a branch of a wider OR."""
        if any(start < e and s < end for s, e in allow_spans + block_spans):
            return False
        return not (_OR_BEFORE.search(query[:start]) or _OR_AFTER.search(query[end:]))

    for match in _SITE_GROUP.finditer(query):
        domains = [_operand_domain(d) for d in _SITE_OPERAND.findall(match.group(0))]
        if all(domains) and free(*match.span()):
            constraints.append(tuple(dict.fromkeys(domains)))  # type: ignore[arg-type]
            allow_spans.append(match.span())
    for match in _SITE.finditer(query):
        domain = _operand_domain(match.group(1))
        if domain and free(*match.span()):
            constraints.append((domain,))
            allow_spans.append(match.span())
    for match in _NEGATED_SITE.finditer(query):
        domain = _operand_domain(match.group(1))
        if domain and free(*match.span()):
            blocked.append(domain)
            block_spans.append(match.span())
    allowed: tuple[str, ...] = constraints[0] if constraints else ()
    for other in constraints[1:]:
        allowed = tuple(dict.fromkeys([d for d in allowed if within(d, other)] +
                                      [d for d in other if within(d, allowed)]))
    if constraints and not allowed:  # contradictory site: terms: left to the engines, as written
        allow_spans = []
    text = query
    for start, end in sorted(allow_spans + block_spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return text, allowed, tuple(dict.fromkeys(blocked))
