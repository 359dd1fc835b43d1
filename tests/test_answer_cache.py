"""The per-engine answer cache (issue 10): what decides an engine's answer is in its key (issue 14's
mutants: region, safe search, site, time range), an engine enabled since is asked, and every engine
report says whether its answer came from the cache."""

from __future__ import annotations

import json

import pytest

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROWS = [("Rust async book", "https://rust-lang.github.io/async-book/", "rust async guide"),
        ("Tokio", "https://tokio.rs/", "rust async runtime")]
EXA = json.dumps({"results": [{"title": "Asynchronous Programming in Rust", "url": "https://rust-lang.github.io/async-book/",
                               "highlights": ["rust async book"]}]})


@pytest.fixture
def cached_settings(monkeypatch):
    monkeypatch.setenv("METASEARCH_CACHE_TTL_S", "300")
    monkeypatch.delenv("EXA_API_KEY", raising=False)


async def test_an_engine_enabled_since_is_asked_not_served_a_cached_disabled(standins, cached_settings):
    """`exa disabled` was cached with the whole answer; after EXA_API_KEY is set, the next search (another
    process sharing the store: a new Searcher on the same state file) must ask Exa."""
    bing = await standins(page(bing_page(ROWS)))
    exa = await standins(page(EXA, content_type="application/json"))
    endpoints = {"bing": bing.url, "exa": exa.url}
    async with Searcher(Settings(endpoints=endpoints, engines=["bing", "exa"])) as searcher:
        before = await searcher.search("rust async")
    assert {e.name: e.status for e in before.engines} == {"bing": "ok", "exa": "disabled"}
    async with Searcher(Settings(endpoints=endpoints, engines=["bing", "exa"], exa_api_key="test-key-1234")) as searcher:
        after = await searcher.search("rust async")
    reports = {e.name: e for e in after.engines}
    assert reports["exa"].status == "ok" and reports["exa"].cached is False and len(exa.requests) == 1
    assert reports["bing"].status == "ok" and reports["bing"].cached is True and len(bing.requests) == 1
    assert after.cached is False  # Exa's answer is fresh


@pytest.mark.parametrize("option, first, second", [
    ("region", "en-US", "de-DE"),
    ("safesearch", "moderate", "strict"),
    ("site", "rust-lang.github.io", "tokio.rs"),
    ("time_range", "week", "year"),
])
async def test_every_option_the_engine_is_asked_is_in_the_key(standins, cached_settings, option, first, second):
    bing = await standins(page(bing_page(ROWS)))
    async with Searcher(Settings(endpoints={"bing": bing.url}, engines=["bing"])) as searcher:
        one = await searcher.search("rust async", **{option: first})
        again = await searcher.search("rust async", **{option: first})
        other = await searcher.search("rust async", **{option: second})
    assert (one.cached, again.cached, other.cached) == (False, True, False)
    assert again.engines[0].cached is True and other.engines[0].cached is False
    assert len(bing.requests) == 2


# ----- the stored form of an answer -----
def test_an_answer_comes_back_from_its_stored_form_whole():
    """Everything a cached answer is used for survives the store: status, every row field (content, which
    row equality ignores, too), detail, the engine's correction and the core-word variant."""
    from datetime import date

    from engines.base import Parsed, Row
    from plugin.pipeline.answers import Answer, decode, encode

    rows = (Row("Rust 異步", "https://a.example/x", "snippet", 1, date(2026, 1, 2), "Reuters", "page text"),
            Row("Tokio", "https://b.example/", "", 2))
    answer = Answer(Parsed("ok", rows=rows, detail="kept: 2", correction="rust async"), core_query="rust")
    back = decode(encode(answer))
    assert back == answer
    assert [row.content for row in back.parsed.rows] == ["page text", None]
    assert back.parsed.rows[0].date == date(2026, 1, 2)
    empty = Answer(Parsed("empty"))
    assert decode(encode(empty)) == empty and decode(encode(empty)).core_query is None


@pytest.mark.parametrize("raw", ["not json", "[]", '{"rows": []}', '{"status": "ok"}',
                                 '{"status": "ok", "rows": [{"title": "t"}]}',
                                 '{"status": "ok", "rows": [{"title": "t", "url": "u", "snippet": "", '
                                 '"position": 1, "date": "yesterday"}]}'])
def test_a_stored_form_from_another_version_is_no_answer(raw):
    from plugin.pipeline.answers import decode

    assert decode(raw) is None


def test_the_answer_key_is_the_upstream_the_engine_the_query_as_words_and_the_options_without_the_key():
    from datetime import datetime

    from engines import ENGINES
    from engines.base import SearchOptions
    from plugin.pipeline.answers import answer_key

    settings = Settings()
    bing, brave = ENGINES["bing"], ENGINES["brave"]
    key = answer_key(settings, bing, "Rust  async", SearchOptions())
    assert key == answer_key(settings, bing, "rust async", SearchOptions())  # case and spacing
    assert key == answer_key(settings, bing, "rust async", SearchOptions(api_key="k", now=datetime(2026, 1, 1)))
    assert key != answer_key(settings, brave, "rust async", SearchOptions())
    assert key != answer_key(settings, bing, "rust async runtime", SearchOptions())
    assert key != answer_key(settings, bing, "rust async", SearchOptions(region="de-DE"))
    elsewhere = Settings(endpoints={"bing": "http://127.0.0.1:9"})
    assert key != answer_key(elsewhere, bing, "rust async", SearchOptions())  # another upstream


# ----- the identity of a whole search (identical searches in flight share one run; pages are kept under it)
def test_a_search_identity_counts_every_option_and_only_them():
    from datetime import datetime

    settings = Settings(safesearch="moderate", region="en-US")
    searcher = Searcher(settings)
    now = datetime(2026, 11, 30, 9, 0)

    def keys(query="rust async", **options):
        plan = searcher.plan(query, now=now, **options)
        return searcher.cache_key(plan), searcher.query_key(plan)

    base = keys()
    assert keys("  Rust   ASYNC ") == base  # spacing and case are not another query
    for options in ({"engines": ["bing"]}, {"engines": ["bing", "brave"]}, {"safesearch": "off"},
                    {"safesearch": "strict"}, {"region": "de-DE"}, {"time_range": "week"}, {"site": "docs.rs"},
                    {"allowed_domains": ["docs.rs"]}, {"blocked_domains": ["spam.example"]}, {"category": "news"}):
        other = keys(**options)
        assert other[0] != base[0] and other[1] != base[1], options
    assert keys(safesearch="off") != keys(safesearch="strict")
    assert keys(limit=3)[0] != base[0] and keys(limit=3)[1] == base[1]  # a page's rows, not another query
    assert keys(page=2)[0] != base[0] and keys(page=2)[1] == base[1]
