from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from hypothesis import given, strategies as st

from engines.dates import leading_date, parse_date
from plugin.pipeline.operators import native_range_for, parse_operators

NOW = datetime(2026, 11, 29, 12, 0)


@pytest.mark.parametrize(("text", "expected"), [
    ("3 days ago", date(2026, 11, 26)),
    ("1 day ago", date(2026, 11, 28)),
    ("2 weeks ago", date(2026, 11, 15)),
    ("an hour ago", date(2026, 11, 29)),
    ("3 天前", date(2026, 11, 26)),
    ("5小时前", date(2026, 11, 29)),
    ("昨天", date(2026, 11, 28)),
    ("2026年11月3日", date(2026, 11, 3)),
    ("2025年1月8日 发布", date(2025, 1, 8)),
    ("Nov 3, 2025", date(2025, 11, 3)),
    ("3 November 2025", date(2025, 11, 3)),
    ("2025-01-08T00:00:00Z", date(2025, 1, 8)),
    ("10/23/2015", date(2015, 10, 23)),
    ("12月31日", date(2025, 12, 31)),  # a month-day after today means last year
    ("no date here", None),
    ("2026年2月30日", None),
])
def test_parse_date(text, expected):
    assert parse_date(text, NOW) == expected


def test_leading_date_only_reads_the_front_of_a_snippet():
    assert leading_date("Nov 3, 2025 · Python 3.14 released", NOW) == date(2025, 11, 3)
    assert leading_date("3 天前 - 东数西算工程", NOW) == date(2026, 11, 26)
    assert leading_date("Python was released in 1991 and on 2025-01-01 it …", NOW) is None


@pytest.mark.parametrize("stamp", ["5000 years ago · the first cities", "10000 years ago · x", "3000年前 - 商朝",
                                   "99999999999 days ago · x"])
def test_a_relative_date_before_year_one_is_no_date_not_a_crash(stamp):
    """"5000 years ago" was `now - timedelta(days=365 * 5000)`: OverflowError, so the engine's parser crashed
    on that one snippet and its whole page was lost (parser failure at engines/dates.py)."""
    assert leading_date(stamp, NOW) is None and parse_date(stamp, NOW) is None


def test_a_number_with_thousands_separators_is_read_whole_or_not_at_all():
    # "12,000 years ago" was read as "000 years ago": today's date, a freshness boost for the ice age.
    assert leading_date("12,000 years ago · the last ice age", NOW) is None
    assert parse_date("2,500 years ago", NOW) is None and parse_date("1.5 years ago", NOW) is None
    assert parse_date("Updated 3 days ago", NOW) == date(2026, 11, 26)


@given(st.integers(min_value=0, max_value=10**12),
       st.sampled_from(["second", "minute", "hour", "day", "week", "month", "year", "秒", "分钟", "小时", "天",
                        "周", "个月", "年"]))
def test_any_relative_date_is_no_later_than_now_or_none(amount, unit):
    text = f"{amount}{unit}前" if not unit.isascii() else f"{amount} {unit}s ago"
    found = parse_date(text, NOW)
    assert found is None or found <= NOW.date()


@pytest.mark.parametrize(("query", "text", "site", "time_range", "recognised"), [
    ("asyncio site:python.org", "asyncio", "python.org", None, ["site=python.org"]),
    ("rust release past week", "rust release", None, "week", ["time=week"]),
    ("k8s news in the last 24 hours", "k8s news", None, "day", ["time=day"]),
    ("Kubernetes 新版本 最近一周", "Kubernetes 新版本", None, "week", ["time=week"]),
    ("site:gov.cn 数据要素 最近一个月", "数据要素", "gov.cn", "month", ["site=gov.cn", "time=month"]),
    ("python releases this year", "python releases", None, "year", ["time=year"]),
    ("plain query", "plain query", None, None, []),
])
def test_operators(query, text, site, time_range, recognised):
    ops = parse_operators(query, now=NOW)
    assert (ops.text, ops.site, ops.time_range, ops.recognised) == (text, site, time_range, recognised)


def test_since_year_keeps_the_year_and_filters_by_date():
    ops = parse_operators("大模型 政策 2025年以后", now=NOW)
    assert ops.since == date(2025, 1, 1) and ops.recognised == ["time=since:2025-01-01"]
    assert "2025" in ops.text and "以后" not in ops.text
    assert ops.time_range is None  # 23 months: wider than any native range
    assert ops.window_start(NOW) == date(2025, 1, 1)
    recent = parse_operators("AI policy since 2026", now=NOW)
    assert recent.time_range == "year" and recent.window_start(NOW) == date(2026, 1, 1)


def test_a_since_year_is_measured_from_the_searchs_own_now():
    # Three days into 2026, "since 2026" fits in the past week; read against another moment it would not.
    assert parse_operators("AI policy since 2026", now=datetime(2026, 1, 3, 12)).time_range == "week"
    assert parse_operators("AI policy since 2026", now=datetime(2027, 6, 1)).time_range is None


@pytest.mark.parametrize("query", ["climate predictions after 2050", "2030年以后 的 能源 规划"])
def test_a_year_still_to_come_is_no_since_filter(query):
    """"after 2050" is what the query is about: read as a publication window it asked the engines for the
    past day (native_range_for of a future date) and dropped every dated row."""
    ops = parse_operators(query, now=NOW)
    assert (ops.since, ops.time_range, ops.recognised) == (None, None, [])
    assert ops.text == query and ops.window_start(NOW) is None
    # A year that has come is still a filter, in the same query as a future one.
    both = parse_operators("energy since 2020 and after 2050", now=NOW)
    assert both.since == date(2020, 1, 1) and "after 2050" in both.text


@pytest.mark.parametrize("query", ["今日头条", "今日头条 官网", "今日美国 报道", "今日から俺は"])
def test_a_name_beginning_with_jinri_is_no_time_operator(query):
    """今日 begins names (Toutiao, USA Today, a TV drama): "今日头条" was searched as "头条" (headlines) from
    the past day. 今天 (today) is still the day operator, and 今日 still makes the query timely."""
    ops = parse_operators(query, now=NOW)
    assert (ops.text, ops.time_range, ops.recognised) == (query, None, [])
    assert parse_operators("今天 天气", now=NOW).time_range == "day"
    from plugin.pipeline.intent import is_timely

    assert is_timely(query, ops)


@pytest.mark.parametrize("query", ["last week tonight john oliver", "the last day of pompeii", "last day on earth",
                                   "last year's super bowl winner", "this week's top songs"])
def test_a_range_that_names_a_thing_is_no_time_operator(query):
    """"Last Week Tonight" was searched as "tonight john oliver" from the past week, "the last day of
    pompeii" as "the of pompeii" from the past day."""
    ops = parse_operators(query, now=NOW)
    assert (ops.text, ops.time_range, ops.recognised) == (query, None, [])


@pytest.mark.parametrize(("query", "allowed", "blocked"), [
    ("asyncio site:https://docs.python.org", ("docs.python.org",), ()),
    ("asyncio site:docs.python.org/", ("docs.python.org",), ()),
    ("asyncio -site:https://www.pinterest.com/", (), ("www.pinterest.com",)),
    ("(site:https://a.com OR site:b.org) asyncio", ("a.com", "b.org"), ()),
])
def test_a_site_operand_is_spelled_as_the_site_argument_may_be(query, allowed, blocked):
    """The `site` argument forgives a scheme and a trailing /; the operator left "site:https://docs.python.org"
    in the text, unrecognised, and filtered nothing."""
    ops = parse_operators(query, now=NOW)
    assert (ops.text, ops.allowed_domains, ops.blocked_domains) == ("asyncio", allowed, blocked)
    assert parse_operators("x site:python.org/3/library", now=NOW).allowed_domains == ()  # a path is no domain


def test_without_a_since_year_there_is_no_since_date():
    ops = parse_operators("rust release past week", now=NOW)
    assert ops.since is None and ops.window_start(NOW) == date(2026, 11, 22)


@pytest.mark.parametrize(("query", "text"), [
    ("rust news, past week", "rust news"),  # the separator the operator leaves behind goes with it
    ("最近一周，大模型 政策；", "大模型 政策"),
    ("past week; news about X", "news about X"),  # only separators and spaces are trimmed, not letters
    ("X news this month", "X news"),
])
def test_removing_an_operator_leaves_no_dangling_separator(query, text):
    assert parse_operators(query, now=NOW).text == text


def test_negated_and_or_grouped_sites_become_domain_lists():  # issue 15; more in test_domains.py
    ops = parse_operators("site:microsoft.com -site:www.microsoft.com", now=NOW)
    assert (ops.site, ops.blocked_domains) == ("microsoft.com", ("www.microsoft.com",))
    ops = parse_operators("(site:nasa.gov OR site:spacex.com) Voyager", now=NOW)
    assert (ops.site, ops.allowed_domains, ops.text) == (None, ("nasa.gov", "spacex.com"), "Voyager")


def test_explicit_arguments_win():
    ops = parse_operators("rust past week", site="rust-lang.org", time_range="month", now=NOW)
    assert ops.site == "rust-lang.org" and ops.time_range == "month"


@pytest.mark.parametrize(("query", "oldest_kept"), [
    ("rust news past 24 hours", date(2026, 11, 28)),
    ("rust news past week", date(2026, 11, 22)),
    ("rust news 最近一个月", date(2026, 10, 29)),  # 31 days: a calendar month back, whatever its length
    ("rust news this year", date(2025, 11, 28)),  # 366 days, so a leap year's day does not fall out
])
def test_a_time_range_keeps_rows_back_to_its_length_and_no_further(query, oldest_kept):
    from engines import ENGINES
    from engines.base import Row
    from plugin.pipeline.filters import survivors
    from plugin.pipeline.plan import make_plan
    from plugin.settings import Settings

    plan = make_plan(Settings(), query, now=NOW)
    assert plan.operators.window_start(NOW) == oldest_kept
    rows = [Row("rust news", f"https://news.example.com/{n}", "rust news", n, oldest_kept - timedelta(days=n))
            for n in range(3)]
    kept, _, _ = survivors(ENGINES["bing"], rows, plan)
    assert [row.date for row in kept] == [oldest_kept]


@pytest.mark.parametrize(("since", "native"), [
    (date(2026, 11, 29), "day"), (date(2026, 11, 28), "week"), (date(2026, 11, 23), "week"),
    (date(2026, 11, 22), "month"), (date(2026, 10, 30), "month"), (date(2026, 10, 29), "year"),
    (date(2025, 11, 29), "year"), (date(2025, 11, 28), None),
])
def test_a_since_year_is_passed_natively_as_the_tightest_range_that_holds_it(since, native):
    # An engine's "past week" is counted back from the moment of the search, so it may not reach the
    # whole of the 7th day back: the range passed natively must hold `since` with a day to spare.
    assert native_range_for(since, NOW) == native


def test_undated_rows_stand_when_the_engine_applied_the_time_range_itself():
    """Bing was asked for the past week natively: its undated rows were already filtered by Bing, so they
    stay; a dated row older than the window still goes."""
    from datetime import date, datetime

    from engines import ENGINES
    from engines.base import Row
    from plugin.pipeline.filters import in_filters
    from plugin.pipeline.plan import make_plan
    from plugin.settings import Settings

    plan = make_plan(Settings(), "rust async", now=datetime(2026, 11, 30), time_range="week")
    assert ENGINES["bing"].facts.applies_time("week")
    rows = [Row("Undated", "https://a.example/", "", 1), Row("Old", "https://b.example/", "", 2, date(2026, 10, 1)),
            Row("New", "https://c.example/", "", 3, date(2026, 11, 29))]
    _, kept = in_filters(ENGINES["bing"], rows, plan)
    assert [row.title for row in kept] == ["Undated", "New"]


@pytest.mark.parametrize(("text", "expected"), [
    ("2025年前三季度 GDP 同比增长", None),  # the first three quarters of 2025, not "2025 years ago"
    ("2024年前后", None),                  # around 2024
    ("1990年前出生的人", None),            # born before 1990
    ("2025年前三季度 · 3天前", date(2026, 11, 26)),  # the year is passed over, the stamp after it read
    ("2025年11月前", date(2025, 11, 1)),   # before November 2025, not "11 months ago"
    ("2025 年 11 月前", date(2025, 11, 1)),
    ("11月3日前报名", date(2026, 11, 3)),   # before 3 November, not "3 days ago"
    ("3年前", date(2023, 11, 30)),
    ("3日前", date(2026, 11, 26)),
    ("3000年前", None),
])
def test_a_year_before_nian_qian_is_a_year_not_an_age(text, expected):
    assert parse_date(text, NOW) == expected


@given(st.integers(min_value=1000, max_value=2100),
       st.text(alphabet="三季度后的政策出台发展经济半年上个月", max_size=8))
def test_a_calendar_year_followed_by_nian_qian_is_never_an_age(year, tail):
    assert parse_date(f"{year}年前{tail}", NOW) is None
    assert leading_date(f"{year}年前{tail} - 文章", NOW) is None


@given(st.integers(min_value=1, max_value=999))
def test_a_number_of_years_before_qian_is_still_an_age(years):
    assert parse_date(f"{years}年前", NOW) == (NOW - timedelta(days=365 * years)).date()


@given(st.integers(min_value=1990, max_value=2026), st.integers(min_value=1, max_value=12))
def test_a_month_of_a_year_before_qian_is_that_month_not_an_age(year, month):
    assert parse_date(f"{year}年{month}月前", NOW) == date(year, month, 1)
