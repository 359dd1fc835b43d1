"""Planning one search (plugin/pipeline/plan.py): what every engine of the search is asked, decided once."""

from __future__ import annotations

from datetime import datetime

from engines import ENGINES
from plugin.pipeline.plan import engine_options, make_plan
from plugin.settings import Settings

NOW = datetime(2026, 11, 30, 9, 0)


def test_a_long_cjk_query_gets_its_core_words_from_the_threshold_on():
    settings = Settings(core_word_min_chars=6)
    assert make_plan(settings, "做蛋糕的方法", now=NOW).core_query == "做蛋糕 方法"  # 6 CJK characters: at it
    assert make_plan(Settings(core_word_min_chars=7), "做蛋糕的方法", now=NOW).core_query is None
    assert make_plan(Settings(core_word_min_chars=6, core_word_retry=False), "做蛋糕的方法", now=NOW).core_query is None
    assert make_plan(settings, "成都 天气 预报", now=NOW).core_query is None  # already its core words: no variant


def test_the_plan_leads_with_the_query_region_and_gates_with_the_settings_units():
    cjk = make_plan(Settings(gate_min_units=3), "成都天气 site:weather.com.cn", now=NOW)
    assert cjk.lead_region == "cjk" and cjk.gate.kind == "cjk" and cjk.gate.required == 3
    assert cjk.gate.bigrams == frozenset({"成都", "都天", "天气"})  # the operator is not part of the gated text
    latin = make_plan(Settings(), "rust async", now=NOW)
    assert latin.lead_region == "global" and latin.gate.kind == "latin" and latin.now == NOW
    # The region follows the words searched for, not an operator's value: a Chinese site, an English query.
    assert make_plan(Settings(), "python site:例子.中国", now=NOW).lead_region == "global"


def test_a_user_location_outside_the_region_vocabulary_is_said_with_what_applies_instead():
    # Antarctica has no language-COUNTRY region among the engines' vocabulary
    plan = make_plan(Settings(region="de-DE"), "weather", now=NOW, user_location="AQ")
    assert plan.warnings == ["user_location AQ has no region in the vocabulary; region de-DE from the settings applies"]
    plan = make_plan(Settings(), "weather", now=NOW, user_location="AQ")
    assert plan.warnings == ["user_location AQ has no region in the vocabulary; engines use their own defaults"]
    assert make_plan(Settings(), "weather", now=NOW, user_location="DE").warnings == []


def test_each_engine_is_asked_the_request_over_the_settings(monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "k" * 24)
    settings = Settings(region="fr-FR", safesearch="strict", searxng_url="http://127.0.0.1:8888")
    plan = make_plan(settings, "rust async site:docs.rs", now=NOW, limit=15, page=2, category="news",
                     time_range="week", blocked_domains=["spam.example"])
    asked = engine_options(settings, ENGINES["brave-api"], plan)
    assert (asked.region, asked.safesearch, asked.site, asked.time_range) == ("fr-FR", "strict", "docs.rs", "week")
    assert (asked.category, asked.page, asked.count, asked.now) == ("news", 2, 15, NOW)
    assert asked.blocked_domains == ("spam.example",) and asked.api_key == "k" * 24 and asked.base_url is None
    assert engine_options(settings, ENGINES["searxng"], plan).base_url == "http://127.0.0.1:8888"
    own = make_plan(settings, "rust async", now=NOW, limit=3, region="ja-JP", safesearch="off")
    asked = engine_options(settings, ENGINES["bing"], own)
    assert (asked.region, asked.safesearch, asked.count, asked.api_key) == ("ja-JP", "off", 10, None)
    assert (asked.page, asked.category, asked.time_range, asked.site) == (1, "web", None, None)


def test_operators_are_read_at_the_plans_reference_time():
    """A replayed search (bench, recorded fixtures) plans at its recording time: "since 2021" asked in
    March 2021 is the past year, and the same words read today are too old for any native range."""
    then = datetime(2021, 3, 1)
    assert make_plan(Settings(), "rust news since 2021", now=then).operators.time_range == "year"
    assert make_plan(Settings(), "rust news since 2021", now=NOW).operators.time_range is None
