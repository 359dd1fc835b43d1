"""Dates as engines print them: absolute and relative, English and Chinese, and the Japanese, Arabic,
Persian, Hindi and Thai forms of both.

`parse_date("3 days ago", now)`, `parse_date("2026年11月3日", now)`,
`parse_date("Nov 3, 2025", now)`; `leading_date(snippet, now)` finds the
date an engine puts in front of a snippet ("Nov 3, 2025 · text").

Digits of any script read as their values (٢٠٢٤, ۲۰۲۴, २०२४, ２０２４ are 2024). Only Gregorian dates are
read: a Jalali (۱۴۰۳), Hijri (١٤٤٥) or Buddhist-era (2567) year is outside the years a web page can carry
(EARLIEST to a day after `now`), so it gives no date rather than a wrong one. Converted where nothing is in
doubt: the Buddhist era next to a Thai month name ("15 มีนาคม 2567" is 15 March 2024), and a year counted
from an era named before it (令和6年3月15日 and 民國113年3月15日 are 15 March 2024).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime, timedelta

# No web page is older; an absolute date before this is another calendar's year or no publication date.
EARLIEST = date(1990, 1, 1)

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH_RE = r"(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?"

_ISO = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:\b|T)")
_CN_FULL = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_MONTH_DAY = re.compile(r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_YEAR_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?!\s*\d)")
# Years counted from an era named before them: Japan's (令和6年 is 2024; 元年, an era's first year) and the
# Republic of China's (民國113年, Taiwan). A year with no era named ("113年") is no date.
_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925, "民國": 1911, "民国": 1911}
_ERA_DATE = re.compile(r"(令和|平成|昭和|民國|民国)\s*(\d{1,3}|元)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_US_NUMERIC = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")  # Bing's en-US "10/23/2015"
_EN_MDY = re.compile(_MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", re.I)
_EN_DMY = re.compile(r"\b(\d{1,2})\s+" + _MONTH_RE + r",?\s+(\d{4})", re.I)

_EN_UNITS = {
    "sec": "seconds", "second": "seconds", "min": "minutes", "minute": "minutes",
    "hr": "hours", "hour": "hours", "day": "days", "week": "weeks",
    "month": "months", "year": "years",
}
# Ages take at most nine digits: a longer number is no count of days (and int() refuses past 4300 digits).
_EN_REL = re.compile(
    r"\b(?<![\d,.])(\d{1,9}|an?|one)\s+(sec|second|min|minute|hr|hour|day|week|month|year)s?\.?\s+ago\b", re.I
)
_CN_UNITS = {"秒": "seconds", "分钟": "minutes", "小时": "hours", "天": "days", "日": "days",
             "周": "weeks", "星期": "weeks", "个月": "months", "月": "months", "年": "years",
             # Japanese: 5分前, 3時間前, 2週間前, 3ヶ月前 (ヶ, ケ, カ, ヵ, か and 箇 all write the counter)
             "分": "minutes", "時間": "hours", "週間": "weeks", "週": "weeks", "ヶ月": "months", "ケ月": "months",
             "カ月": "months", "ヵ月": "months", "か月": "months", "箇月": "months", "個月": "months"}
# An amount right after 年 or 月 is part of a date, not an amount: "2025年11月前" is before November
# 2025, "11月3日前" before 3 November, never "11 months ago" or "3 days ago".
_CN_REL = re.compile(r"(?<![\d年月])(?<![年月]\s)(\d{1,9})\s*("
                     + "|".join(sorted(map(re.escape, _CN_UNITS), key=len, reverse=True)) + r")\s*前")
# From this many years on, "N年前" is a calendar year followed by 前 ("2025年前三季度", the first three
# quarters of 2025; "1990年前后", around 1990), or an age older than any page ("3000年前"): no age.
_CN_YEAR_NOT_AGE = 1000
_CN_WORDS = {"今天": 0, "昨天": 1, "前天": 2}
_EN_WORDS = {"today": 0, "yesterday": 1}

# Other scripts. Text is folded first (`_folded`): every digit to ASCII, full-width forms to ASCII, Arabic
# vowel marks and tatweel off, Arabic and Persian letter variants (ي ی, ك ک, أ إ آ ا) to one; the words below
# are folded the same way when the patterns are built.
_ARABIC_MARKS = re.compile(r"[\u0640\u064b-\u065f\u0670]")
_ARABIC_LETTERS = str.maketrans({"\u064a": "\u06cc", "\u0649": "\u06cc", "\u0643": "\u06a9", "\u0623": "\u0627",
                                 "\u0625": "\u0627", "\u0622": "\u0627"})
# Separators these scripts write numbers and dates with: Arabic decimal and thousands marks, Arabic comma,
# hyphens that are not U+002D.
_SEPARATORS = str.maketrans({"\u066b": ".", "\u066c": ",", "\u060c": ",", "\u2010": "-", "\u2011": "-",
                             "\u2012": "-", "\u2212": "-"})
_NON_ASCII_DIGIT = re.compile(r"(?![0-9])\d")
_FULL_WIDTH = re.compile(r"[\uff01-\uff5e]")


def _folded(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    text = _NON_ASCII_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(0))), text)
    text = _FULL_WIDTH.sub(lambda m: chr(ord(m.group(0)) - 0xFEE0), text)
    return _ARABIC_MARKS.sub("", text.translate(_SEPARATORS)).translate(_ARABIC_LETTERS)


def _alternatives(words) -> str:
    """A regex alternation of `words` (folded, longest first; a space in a word is any run of spaces)."""
    folded = sorted({_folded(w) for w in words}, key=len, reverse=True)
    return "|".join(re.escape(w).replace("\\ ", r"\s+") for w in folded)


# Gregorian month names: Arabic (Egypt and the Gulf, the Levant and Iraq, the Maghreb), Persian, Hindi,
# Bengali, Thai (names and abbreviations). Jalali and Hijri month names are not here: no Gregorian date.
_OTHER_MONTH_NAMES = {
    1: "يناير كانون_الثاني جانفي ژانویه जनवरी জানুয়ারি มกราคม ม.ค.",
    2: "فبراير شباط فيفري فوریه फरवरी फ़रवरी ফেব্রুয়ারি กุมภาพันธ์ ก.พ.",
    3: "مارس آذار मार्च মার্চ มีนาคม มี.ค.",
    4: "أبريل إبريل نيسان أفريل آوریل अप्रैल এপ্রিল เมษายน เม.ย.",
    5: "مايو أيار ماي مه می मई মে พฤษภาคม พ.ค.",
    6: "يونيو يونيه حزيران جوان ژوئن जून জুন มิถุนายน มิ.ย.",
    7: "يوليو يوليه تموز جويلية ژوئیه جولای जुलाई জুলাই กรกฎาคม ก.ค.",
    8: "أغسطس آب أوت اوت آگوست अगस्त আগস্ট สิงหาคม ส.ค.",
    9: "سبتمبر أيلول سپتامبر सितंबर सितम्बर সেপ্টেম্বর กันยายน ก.ย.",
    10: "أكتوبر تشرين_الأول اکتبر अक्टूबर अक्तूबर অক্টোবর ตุลาคม ต.ค.",
    11: "نوفمبر تشرين_الثاني نوامبر नवंबर नवम्बर নভেম্বর พฤศจิกายน พ.ย.",
    12: "ديسمبر كانون_الأول دسامبر दिसंबर दिसम्बर ডিসেম্বর ธันวาคม ธ.ค.",
}
_OTHER_MONTHS = {_folded(name.replace("_", " ")): month for month, names in _OTHER_MONTH_NAMES.items()
                 for name in names.split()}
_THAI_MONTHS = {name for name, _ in _OTHER_MONTHS.items() if re.match(r"[\u0e00-\u0e7f]", name)}
_OTHER_DMY = re.compile(r"(?<!\d)(\d{1,2})\s*(" + _alternatives(_OTHER_MONTHS) + r")(?![^\W\d_])\s*[,،]?\s*"
                        r"(?:พ\.ศ\.|ค\.ศ\.)?\s*(\d{4})(?!\d)")
# A Thai month name's year of 2400 and more is of the Buddhist era (543 years ahead): no Gregorian page has it.
_BUDDHIST_ERA_FROM, _BUDDHIST_ERA_OFFSET = 2400, 543

# Relative ages: Arabic puts منذ/قبل ("since"/"before") in front, Persian, Hindi and Thai put "ago" after.
_AGO_UNITS = {
    "seconds": "ثانية ثوان ثواني ثانیه सेकंड วินาที",
    "minutes": "دقيقة دقائق دقیقه मिनट นาที",
    "hours": "ساعة ساعات ساعت घंटे घंटा ชั่วโมง",
    "days": "يوم أيام روز दिन วัน",
    "weeks": "أسبوع أسابيع هفته सप्ताह हफ़्ते हफ्ते हफ़्ता हफ्ता สัปดาห์",
    "months": "شهر أشهر شهور ماه महीने महीना เดือน",
    "years": "سنة سنوات سنين عام أعوام سال साल वर्ष ปี",
}
_UNIT_OF = {_folded(word): unit for unit, words in _AGO_UNITS.items() for word in words.split()}
# Arabic names one of a unit by the singular and two by the dual, with no number: منذ ساعة, منذ يومين.
_ARABIC_ONE = {_folded(w): u for w, u in (("ثانية", "seconds"), ("دقيقة", "minutes"), ("ساعة", "hours"),
                                          ("يوم", "days"), ("أسبوع", "weeks"), ("شهر", "months"),
                                          ("سنة", "years"), ("عام", "years"))}
_ARABIC_TWO = {_folded(w): u for w, u in (("ثانيتين", "seconds"), ("دقيقتين", "minutes"), ("ساعتين", "hours"),
                                          ("يومين", "days"), ("أسبوعين", "weeks"), ("شهرين", "months"),
                                          ("سنتين", "years"), ("عامين", "years"))}
# A number after the unit makes it a date, not an age: منذ عام 2010 is "since the year 2010".
_ARABIC_REL = re.compile(r"(?<![^\W\d_])(?:منذ|قبل)\s+(?:(\d{1,9})\s*)?("
                         + _alternatives(set(_UNIT_OF) | set(_ARABIC_TWO)) + r")(?![^\W\d_])(?!\s*\d)")
_SUFFIX_REL = re.compile(r"(?<![\d,.])(\d{1,9})\s*(" + _alternatives(_UNIT_OF) + r")\s*(?:"
                         + _alternatives(["پیش", "قبل", "पहले", "पूर्व", "ที่แล้ว", "ที่ผ่านมา", "ก่อน"]) + ")")
_OTHER_YESTERDAY = re.compile(r"(?<![^\W\d_])(?:(?:بال|ال)?" + _folded("أمس") + "|" + _folded("دیروز")
                              + r")(?![^\W\d_])|เมื่อวาน")


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


def _in_range(found: date | None, now: datetime) -> date | None:
    """`found` when a web page can carry it (from EARLIEST to a day after `now`), else None: a year out of
    that range is another calendar's (Jalali ۱۴۰۳, Hijri ١٤٤٥, Buddhist 2567) or no page's."""
    if found is None or not EARLIEST <= found <= (now + timedelta(days=1)).date():
        return None
    return found


def parse_date(text: str, now: datetime | None = None) -> date | None:
    """The first date in `text`, absolute or relative to `now`; None when there is none."""
    if not text:
        return None
    now = now or datetime.now()
    text = _folded(text)
    for pattern in (_ISO, _CN_FULL):
        m = pattern.search(text)
        if m:
            found = _in_range(_safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3))), now)
            if found:
                return found
    m = _ERA_DATE.search(text)
    if m:
        year = _ERAS[m.group(1)] + (1 if m.group(2) == "元" else int(m.group(2)))
        found = _in_range(_safe_date(year, int(m.group(3)), int(m.group(4))), now)
        if found:
            return found
    m = _US_NUMERIC.search(text)
    if m:
        found = _in_range(_safe_date(int(m.group(3)), int(m.group(1)), int(m.group(2))), now)
        if found:
            return found
    m = _EN_MDY.search(text)
    if m:
        found = _in_range(_safe_date(int(m.group(3)), _MONTHS[m.group(1).lower()[:3]], int(m.group(2))), now)
        if found:
            return found
    m = _EN_DMY.search(text)
    if m:
        found = _in_range(_safe_date(int(m.group(3)), _MONTHS[m.group(2).lower()[:3]], int(m.group(1))), now)
        if found:
            return found
    m = _OTHER_DMY.search(text)
    if m:
        year = int(m.group(3))
        if m.group(2) in _THAI_MONTHS and year >= _BUDDHIST_ERA_FROM:
            year -= _BUDDHIST_ERA_OFFSET
        found = _in_range(_safe_date(year, _OTHER_MONTHS[m.group(2)], int(m.group(1))), now)
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
    m = _ARABIC_REL.search(text)
    if m:
        if m.group(1):
            return _shift(now, int(m.group(1)), _UNIT_OF.get(m.group(2)) or _ARABIC_TWO[m.group(2)])
        if m.group(2) in _ARABIC_TWO:
            return _shift(now, 2, _ARABIC_TWO[m.group(2)])
        if m.group(2) in _ARABIC_ONE:
            return _shift(now, 1, _ARABIC_ONE[m.group(2)])
    m = _SUFFIX_REL.search(text)
    if m:
        return _shift(now, int(m.group(1)), _UNIT_OF[m.group(2)])
    for word, days in _CN_WORDS.items():
        if word in text:
            return (now - timedelta(days=days)).date()
    if _OTHER_YESTERDAY.search(text):
        return (now - timedelta(days=1)).date()
    lowered = text.lower()
    for word, days in _EN_WORDS.items():
        if re.search(rf"\b{word}\b", lowered):
            return (now - timedelta(days=days)).date()
    m = _CN_MONTH_DAY.search(text)
    if m:
        found = _safe_date(now.year, int(m.group(1)), int(m.group(2)))
        if found and found > now.date():  # "11月3日" seen in January means last year
            found = _safe_date(now.year - 1, int(m.group(1)), int(m.group(2)))
        found = _in_range(found, now)
        if found:
            return found
    m = _CN_YEAR_MONTH.search(text)
    if m:
        return _in_range(_safe_date(int(m.group(1)), int(m.group(2)), 1), now)
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
