"""Dates as engines print them: absolute and relative, English and Chinese.

`parse_date("3 days ago", now)`, `parse_date("2026年11月3日", now)`,
`parse_date("Nov 3, 2025", now)`; `leading_date(snippet, now)` finds the
date an engine puts in front of a snippet ("Nov 3, 2025 · text").
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH_RE = r"(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?"

_ISO = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:\b|T)")
_CN_FULL = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_MONTH_DAY = re.compile(r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_YEAR_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?!\s*\d)")
_US_NUMERIC = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")  # Bing's en-US "10/23/2015"
_EN_MDY = re.compile(_MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", re.I)
_EN_DMY = re.compile(r"\b(\d{1,2})\s+" + _MONTH_RE + r",?\s+(\d{4})", re.I)

_EN_UNITS = {
    "sec": "seconds", "second": "seconds", "min": "minutes", "minute": "minutes",
    "hr": "hours", "hour": "hours", "day": "days", "week": "weeks",
    "month": "months", "year": "years",
}
_EN_REL = re.compile(
    r"\b(?<![\d,.])(\d+|an?|one)\s+(sec|second|min|minute|hr|hour|day|week|month|year)s?\.?\s+ago\b", re.I
)
_CN_UNITS = {"秒": "seconds", "分钟": "minutes", "小时": "hours", "天": "days", "日": "days",
             "周": "weeks", "星期": "weeks", "个月": "months", "月": "months", "年": "years"}
# An amount right after 年 or 月 is part of a date, not an amount: "2025年11月前" is before November
# 2025, "11月3日前" before 3 November, never "11 months ago" or "3 days ago".
_CN_REL = re.compile(r"(?<![\d年月])(?<![年月]\s)(\d+)\s*(秒|分钟|小时|天|日|周|星期|个月|月|年)\s*前")
# From this many years on, "N年前" is a calendar year followed by 前 ("2025年前三季度", the first three
# quarters of 2025; "1990年前后", around 1990), or an age older than any page ("3000年前"): no age.
_CN_YEAR_NOT_AGE = 1000
_CN_WORDS = {"今天": 0, "昨天": 1, "前天": 2}
_EN_WORDS = {"today": 0, "yesterday": 1}


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _shift(now: datetime, amount: int, unit: str) -> date | None:
    """`amount` units before `now`; None before year 1 ("5000 years ago", "3000年前"): no publication date."""
    try:
        if unit == "months":
            return (now - timedelta(days=30 * amount)).date()
        if unit == "years":
            return (now - timedelta(days=365 * amount)).date()
        return (now - timedelta(**{unit: amount})).date()
    except OverflowError:
        return None


def parse_date(text: str, now: datetime | None = None) -> date | None:
    """The first date in `text`, absolute or relative to `now`; None when there is none."""
    if not text:
        return None
    now = now or datetime.now()
    for pattern in (_ISO, _CN_FULL):
        m = pattern.search(text)
        if m:
            found = _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if found:
                return found
    m = _US_NUMERIC.search(text)
    if m:
        found = _safe_date(int(m.group(3)), int(m.group(1)), int(m.group(2)))
        if found:
            return found
    m = _EN_MDY.search(text)
    if m:
        found = _safe_date(int(m.group(3)), _MONTHS[m.group(1).lower()[:3]], int(m.group(2)))
        if found:
            return found
    m = _EN_DMY.search(text)
    if m:
        found = _safe_date(int(m.group(3)), _MONTHS[m.group(2).lower()[:3]], int(m.group(1)))
        if found:
            return found
    m = _EN_REL.search(text)
    if m:
        amount = m.group(1).lower()
        count = 1 if amount in ("a", "an", "one") else int(amount)
        return _shift(now, count, _EN_UNITS[m.group(2).lower()])
    for m in _CN_REL.finditer(text):
        amount, unit = int(m.group(1)), _CN_UNITS[m.group(2)]
        if unit == "years" and amount >= _CN_YEAR_NOT_AGE:
            continue
        return _shift(now, amount, unit)
    for word, days in _CN_WORDS.items():
        if word in text:
            return (now - timedelta(days=days)).date()
    lowered = text.lower()
    for word, days in _EN_WORDS.items():
        if re.search(rf"\b{word}\b", lowered):
            return (now - timedelta(days=days)).date()
    m = _CN_MONTH_DAY.search(text)
    if m:
        found = _safe_date(now.year, int(m.group(1)), int(m.group(2)))
        if found and found > now.date():  # "11月3日" seen in January means last year
            found = _safe_date(now.year - 1, int(m.group(1)), int(m.group(2)))
        if found:
            return found
    m = _CN_YEAR_MONTH.search(text)
    if m:
        return _safe_date(int(m.group(1)), int(m.group(2)), 1)
    return None


# Engines print a date before the snippet text, separated by a dot or dash.
# The stamp is short ("September 30, 2025", "3 days ago", "2024 年 11 月 25 日"): a longer opening
# is a sentence that happens to contain a date ("MCP 起源于 2024 年 11 月 25 日 Anthropic 发布的文章：").
_LEADING = re.compile(r"^\s*(.{4,24}?)\s*(?:·|—|–|-|\.\.\.|…|:|：)\s")


def leading_date(snippet: str, now: datetime | None = None) -> date | None:
    """The date at the very start of a snippet ("3 days ago · …", "2026年11月3日 — …")."""
    if not snippet:
        return None
    m = _LEADING.match(snippet)
    if not m:
        return None
    return parse_date(m.group(1), now)
