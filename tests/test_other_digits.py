"""Dates and numbers written with other scripts' digits (Arabic-Indic ٢٠٢٤, Persian ۱۴۰۳, Devanagari २०२४,
Bengali ২০২৪, Thai ๒๐๒๔, full-width ２０２４) and the calendars behind them.

A Gregorian date is read whatever digits write it; a Jalali (۱۴۰۳), Hijri (١٤٤٥) or Buddhist-era (๒๕๖๗) year is
no Gregorian year: no date rather than a wrong one. No input makes a date parser raise, and none gives a date
more than a day after `now`, or an absolute date before 1990 (no web page is older)."""

from __future__ import annotations

import datetime as dt
from datetime import date, datetime, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engines.dates import leading_date, parse_date
EARLIEST = date(1990, 1, 1)
from plugin.pipeline.intent import is_timely
from plugin.pipeline.operators import parse_operators
from plugin.reading.extract import extract_html
from plugin.reading.published import absolute_date

NOW = datetime(2026, 11, 29, 12, 0)

# The zero of every script whose digits a page may write a date with (Unicode category Nd).
ZEROS = {
    "ascii": "0", "arabic-indic": "\u0660", "persian": "\u06f0", "nko": "\u07c0", "devanagari": "\u0966",
    "bengali": "\u09e6", "gurmukhi": "\u0a66", "gujarati": "\u0ae6", "tamil": "\u0be6", "thai": "\u0e50",
    "lao": "\u0ed0", "tibetan": "\u0f20", "myanmar": "\u1040", "khmer": "\u17e0", "fullwidth": "\uff10",
    "math-bold": "\U0001d7ce",
}


def written(number: int | str, script: str, width: int = 0) -> str:
    return "".join(chr(ord(ZEROS[script]) + int(d)) for d in str(number).zfill(width))


@pytest.mark.parametrize(("text", "expected"), [
    ("٢٠٢٤/٠٣/١٥", date(2024, 3, 15)),                  # Arabic-Indic
    ("۲۰۲۴-۰۳-۱۵", date(2024, 3, 15)),                  # Persian digits, Gregorian year
    ("२०२४-०३-१५", date(2024, 3, 15)),                  # Devanagari
    ("২০২৪-০৩-১৫", date(2024, 3, 15)),                  # Bengali
    ("２０２４年３月１５日", date(2024, 3, 15)),           # full-width
    ("２０２４／０３／１５", date(2024, 3, 15)),           # full-width separators too
    ("٢٠٢٤-03-١٥", date(2024, 3, 15)),                  # a mix of scripts
    ("2024‐03‐15", date(2024, 3, 15)),                  # U+2010 hyphens
    ("١٥ مارس ٢٠٢٤", date(2024, 3, 15)),                # Arabic month name
    ("15 آذار 2024", date(2024, 3, 15)),                # Levantine month name
    ("۱۵ مارس ۲۰۲۴", date(2024, 3, 15)),                # Persian, Gregorian month
    ("१५ मार्च २०२४", date(2024, 3, 15)),               # Hindi
    ("15 มีนาคม 2567", date(2024, 3, 15)),              # Thai month, Buddhist-era year
    ("๑๕ มี.ค. ๒๕๖๗", date(2024, 3, 15)),              # Thai digits, abbreviated month
    ("منذ ٣ ساعات", date(2026, 11, 29)),                # Arabic: 3 hours ago
    ("منذ ٣ أيام", date(2026, 11, 26)),
    ("قبل يومين", date(2026, 11, 27)),                  # two days ago (dual)
    ("منذ أسبوع", date(2026, 11, 22)),
    ("۳ روز پیش", date(2026, 11, 26)),                  # Persian: 3 days ago
    ("३ दिन पहले", date(2026, 11, 26)),                 # Hindi
    ("3 วันที่แล้ว", date(2026, 11, 26)),                 # Thai
    ("３時間前", date(2026, 11, 29)),                    # Japanese
    ("3日前", date(2026, 11, 26)),
    ("2週間前", date(2026, 11, 15)),
    ("3ヶ月前", date(2026, 8, 31)),
    ("５分前", date(2026, 11, 29)),
    ("３天前", date(2026, 11, 26)),
])
def test_a_date_in_another_script_is_read(text, expected):
    assert parse_date(text, NOW) == expected


@pytest.mark.parametrize("text", [
    "۱۴۰۳/۰۱/۱۵",            # Jalali (Solar Hijri): 1403 is 2024, not the year 1403
    "1403/01/15",            # the same in ASCII digits, as Iranian sites often write it
    "١٤٤٥-٠٩-٠١",            # Hijri
    "١ رمضان ١٤٤٥",          # a Hijri month: not a Gregorian one
    "۱۵ فروردین ۱۴۰۳",        # a Jalali month
    "๒๕๖๗-๐๓-๑๕",            # a Buddhist-era year in a numeric date: no month name says it is one
    "2567-03-15",
    "9999-01-01",            # years ahead are no page's date
    "0003-01-01",
    "٣ ساعات",               # "3 hours": a duration, not an age
    "منذ عام 2010",          # "since the year 2010", not a year ago
])
def test_a_year_of_another_calendar_or_out_of_range_is_no_date(text):
    assert parse_date(text, NOW) is None


def test_a_stamp_in_another_script_leads_a_snippet():
    assert leading_date("منذ ٣ أيام — نص الخبر", NOW) == date(2026, 11, 26)
    assert leading_date("２０２４年３月１５日 — 記事", NOW) == date(2024, 3, 15)
    assert leading_date("۱۴۰۳/۰۱/۱۵ — خبر", NOW) is None


@pytest.mark.parametrize("text", ["9" * 5000 + " days ago", "9" * 5000 + "天前", "منذ " + "٩" * 5000 + " ساعات",
                                  "٩" * 5000 + "-01-01", "1" * 10000])
def test_a_huge_number_is_no_date_not_a_crash(text):
    """int() refuses a string of more than 4300 digits (ValueError): "99…9 days ago" crashed the parser."""
    assert parse_date(text, NOW) is None and leading_date(text + " · x", NOW) is None


scripts = st.sampled_from(sorted(ZEROS))


@st.composite
def digit_runs(draw, numbers):
    """A number written with digits each from any script (mixes included), at times zero-padded."""
    number = str(draw(numbers)).zfill(draw(st.integers(0, 4)))
    return "".join(chr(ord(ZEROS[draw(scripts)]) + int(d)) for d in number)


years = st.one_of(st.integers(1300, 2700), st.integers(0, 10**7))
small = st.integers(0, 32)


SHAPES = ["{a}-{b}-{c}", "{a}/{b}/{c}", "{a}.{b}.{c}", "{a}年{b}月{c}日", "{b}月{c}日", "{a}年{b}月", "{b}/{c}/{a}",
          "{c} March {a}", "March {c}, {a}", "{c} مارس {a}", "{c} มีนาคม {a}", "{c} मार्च {a}",
          "{a} days ago", "{a}天前", "{a}時間前", "منذ {a} ساعات", "{a} روز پیش", "{a} दिन पहले", "{a} ปีที่แล้ว"]
RELATIVE = {"{a} days ago", "{a}天前", "{a}時間前", "منذ {a} ساعات", "{a} روز پیش", "{a} दिन पहले", "{a} ปีที่แล้ว",
            "{b}月{c}日"}


@given(shape=st.sampled_from(SHAPES), a=digit_runs(years), b=digit_runs(small), c=digit_runs(small),
       noise=st.text(max_size=6))
@example(shape="{a}/{b}/{c}", a="۱۴۰۳", b="۰۱", c="۱۵", noise="")      # Jalali
@example(shape="{a}-{b}-{c}", a="๒๕๖๗", b="๐๓", c="๑๕", noise="")      # Buddhist era
@example(shape="{a}年{b}月{c}日", a="２６００", b="３", c="１", noise="")  # years ahead
@example(shape="{a} days ago", a="٩" * 5000, b="1", c="1", noise="")  # past int()'s 4300 digits
def test_no_digits_of_any_script_make_a_parser_raise_or_a_date_out_of_range(shape, a, b, c, noise):
    text = noise + shape.format(a=a, b=b, c=c) + noise
    found = parse_date(text, NOW)
    assert found is None or found <= NOW.date() + timedelta(days=1)
    if found is not None and shape not in RELATIVE and not noise.strip():
        assert found >= EARLIEST
    leading_date(text + " · x", NOW)
    page_date = absolute_date(text)
    assert page_date is None or EARLIEST <= page_date <= dt.date.today() + timedelta(days=1)


@given(st.text(alphabet=st.characters(categories=["Nd", "Zs", "Pd", "Po", "Lo"]), max_size=40))
def test_no_text_makes_a_date_parser_raise(text):
    found = parse_date(text, NOW)
    assert found is None or found <= NOW.date() + timedelta(days=1)
    absolute_date(text)


@given(year=st.integers(1990, 2026), month=st.integers(1, 12), day=st.integers(1, 28), script=scripts,
       shape=st.sampled_from(["{y}-{m}-{d}", "{y}/{m}/{d}", "{y}年{m}月{d}日"]))
def test_a_gregorian_date_reads_the_same_in_every_script(year, month, day, script, shape):
    text = shape.format(y=written(year, script), m=written(month, script, 2), d=written(day, script, 2))
    assert parse_date(text, NOW) == date(year, month, day)


@given(year=st.integers(1300, 1499), month=st.integers(1, 12), day=st.integers(1, 28), script=scripts)
def test_a_jalali_or_hijri_year_is_never_a_gregorian_one(year, month, day, script):
    text = f"{written(year, script)}/{written(month, script, 2)}/{written(day, script, 2)}"
    assert parse_date(text, NOW) is None and absolute_date(f"Published {text}") is None


# A page's own date, from a byline in its language.
BODY = "".join(f"<p>هذه فقرة رقم {n} من مقال طويل عن الاقتصاد والسياسة في المنطقة العربية.</p>" for n in range(8))


def page(byline: str, language: str) -> str:
    return (f'<html lang="{language}"><head><title>خبر</title></head><body><article><h1>خبر</h1>'
            f"<p>{byline}</p>{BODY}</article></body></html>")


@pytest.mark.parametrize(("byline", "language", "expected"), [
    ("نُشر في ١٥ مارس ٢٠٢٤", "ar", "2024-03-15"),
    ("تاريخ النشر: ٢٠٢٤/٠٣/١٥", "ar", "2024-03-15"),
    ("آخر تحديث ١٥/٠٣/٢٠٢٤", "ar", "2024-03-15"),            # day first in Arabic
    ("تاریخ انتشار: ۱۵ مارس ۲۰۲۴", "fa", "2024-03-15"),
    ("تاریخ انتشار: ۱۴۰۳/۰۱/۲۶", "fa", None),                # Jalali: no Gregorian date said
    ("प्रकाशित: १५ मार्च २०२४", "hi", "2024-03-15"),
    ("公開日：２０２４年３月１５日", "ja", "2024-03-15"),
    ("เผยแพร่ 15 มีนาคม 2567", "th", "2024-03-15"),
])
def test_a_byline_in_another_script_dates_the_page(byline, language, expected):
    found = extract_html(page(byline, language), url="https://news.example/item").published
    assert found == (dt.date.fromisoformat(expected) if expected else None)


# The query's own time operators and years.
@pytest.mark.parametrize(("query", "since"), [
    ("新能源 ２０２４年以后", date(2024, 1, 1)),
    ("electric cars since ２０２４", date(2024, 1, 1)),
    ("خبر since ۱۴۰۰", None),                               # a Jalali year is no Gregorian one
])
def test_a_since_year_in_other_digits(query, since):
    assert parse_operators(query, now=NOW).since == since


def test_a_year_in_full_width_digits_makes_a_query_timely():
    assert is_timely("春晚 ２０２６", now=NOW)
    assert not is_timely("春晚 ２０１０", now=NOW)


# A passage's answer typing: a number the question already holds is no answer, in whatever digits either writes it.
def test_a_number_the_question_holds_is_no_answer_in_other_digits():
    from plugin.reading.passages import fits, question_words
    asked = question_words("How many people lived in the city in 2024?")
    assert not fits("number", "بلغ عدد السكان في عام ٢٠٢٤ كثيرا", asked)
    assert not fits("number", "In ２０２４ the city grew.", asked)
    assert fits("number", "بلغ عدد السكان ٣٥٠٠ نسمة في ٢٠٢٤", asked)
    assert not fits("number", "In 2024 the city grew.", question_words("How many lived there in ２０２４?"))


@pytest.mark.parametrize(("query", "time_range"), [
    ("新闻 最近７天", "week"), ("新闻 最近２４小时", "day"), ("新闻 ２４小时内", "day"), ("新闻 过去３０天", "month"),
    ("新闻 最近１年", "year"), ("新闻 最近１个月", "month"), ("新闻 最近７天", "week"),
])
def test_a_chinese_time_range_in_full_width_digits(query, time_range):
    ops = parse_operators(query, now=NOW)
    assert ops.time_range == time_range and ops.text == "新闻"


@pytest.mark.parametrize(("text", "expected"), [
    ("令和6年3月15日", date(2024, 3, 15)),       # Japanese eras: Reiwa 6 is 2024
    ("令和元年５月１日", date(2019, 5, 1)),       # 元年, an era's first year
    ("平成３１年４月３０日", date(2019, 4, 30)),
    ("平成2年1月5日", date(1990, 1, 5)),
    ("民國113年3月15日", date(2024, 3, 15)),      # the Republic of China's years (Taiwan): 113 is 2024
    ("民国113年3月15日", date(2024, 3, 15)),
    ("昭和60年1月1日", None),                    # 1985: before any web page
    ("113年3月15日", None),                      # no era named: no guess
    ("令和99年1月1日", None),                    # years ahead
])
def test_an_era_year_named_before_it_is_read(text, expected):
    assert parse_date(text, NOW) == expected
