"""Issue 15, engine side: domain lists passed on natively, the news vertical, further pages.

Requests are checked as built (pure); rows on real pages where the corpus has them (Bing, DuckDuckGo,
Baidu and its news vertical), else on bodies in each API's documented response format.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date

import pytest

from conftest import FIXED_NOW, corpus_path, response_from_bytes
from engines import ENGINES
from engines.base import SearchOptions

KEYED = {"api_key": "k", "base_url": "http://127.0.0.1:8888"}
ALLOWED = ("python.org", "docs.python.org")
BLOCKED = ("w3schools.com",)


def build(name: str, **options):
    return ENGINES[name].build("asyncio", SearchOptions(now=FIXED_NOW, **{**KEYED, **options}))


def query_of(request) -> str:
    fields = dict(request.params) | dict(request.form or ()) | dict(request.json or {})
    for key in ("q", "query", "wd", "p", "word", "srsearch"):
        if key in fields:
            return fields[key]
    raise AssertionError(fields)


# --- domain lists ------------------------------------------------------------

@pytest.mark.parametrize("name", ["bing", "bing-cn", "duckduckgo-html", "duckduckgo-lite", "brave", "yahoo",
                                  "serper", "brave-api", "searxng", "firecrawl"])
def test_engines_that_honour_operators_get_site_or_groups(name):
    assert ENGINES[name].facts.native_domains
    assert query_of(build(name, allowed_domains=ALLOWED)) == "asyncio (site:python.org OR site:docs.python.org)"
    assert query_of(build(name, blocked_domains=BLOCKED)) == "asyncio -site:w3schools.com"
    assert query_of(build(name, site="python.org", allowed_domains=("python.org",))) == "asyncio site:python.org"
    assert ENGINES[name].ignored_options(SearchOptions(allowed_domains=ALLOWED)) == []


def test_startpage_passes_the_lists_in_its_search_form():
    home = b'<html><body><form id="search"><input name="sc" value="t"></form></body></html>'
    parsed = ENGINES["startpage"].parse(response_from_bytes(home, url="https://www.startpage.com/"), "asyncio",
                                        SearchOptions(blocked_domains=BLOCKED, page=2))
    form = dict(parsed.follow_up.form)
    assert form["query"] == "asyncio -site:w3schools.com"
    assert (form["page"], form["segment"]) == ("2", "startpage.udog")


def test_exa_and_tavily_take_their_own_domain_lists():
    exa = build("exa", allowed_domains=ALLOWED).json
    assert exa["includeDomains"] == list(ALLOWED) and "excludeDomains" not in exa and exa["query"] == "asyncio"
    assert build("exa", blocked_domains=BLOCKED).json["excludeDomains"] == ["w3schools.com"]
    tavily = build("tavily", allowed_domains=ALLOWED).json
    assert tavily["include_domains"] == list(ALLOWED) and tavily["query"] == "asyncio"
    assert build("tavily", blocked_domains=BLOCKED).json["exclude_domains"] == ["w3schools.com"]


def test_engines_without_native_lists_say_so_and_leave_the_query_alone():
    for name in ("baidu", "mojeek", "wikipedia"):
        assert not ENGINES[name].facts.native_domains
        assert "site:" not in query_of(build(name, allowed_domains=ALLOWED))
        assert ENGINES[name].ignored_options(SearchOptions(allowed_domains=ALLOWED)) == [
            "domain lists not supported by the engine; rows filtered by URL"]
    # One allowed domain is a plain site: term, which Baidu and Mojeek do honour.
    assert query_of(build("baidu", site="gov.cn", allowed_domains=("gov.cn",))) == "asyncio site:gov.cn"


# --- news ----------------------------------------------------------------------

def test_news_requests():
    assert build("serper", category="news").url == "https://google.serper.dev/news"
    assert build("tavily", category="news").json["topic"] == "news"
    assert build("tavily").json["topic"] == "general"
    assert build("brave-api", category="news").url == "https://api.search.brave.com/res/v1/news/search"
    assert build("exa", category="news").json["category"] == "news"
    assert ("categories", "news") in build("searxng", category="news").params
    baidu = dict(build("baidu", category="news").params)
    assert (baidu["tn"], baidu["word"], baidu["cl"]) == ("news", "asyncio", "2") and "wd" not in baidu


def test_news_facts():
    assert sorted(name for name, engine in ENGINES.items() if engine.facts.news) == [
        "baidu", "brave-api", "exa", "searxng", "serper", "tavily"]


@pytest.mark.parametrize(("name", "first_source"), [
    ("govch__baidu-news__chengdu.html", "人民网四川频道"), ("govinfocheck__baidu-news__riben.html", "看看新闻Knews")])
def test_baidu_news_rows_carry_date_and_source(name, first_source):
    body = corpus_path("baidu", name).read_bytes()
    rows = ENGINES["baidu"].parse(response_from_bytes(body, url="https://www.baidu.com/s?tn=news"), "q",
                                  SearchOptions(now=FIXED_NOW, category="news")).rows
    assert rows[0].source == first_source
    assert all(row.source for row in rows)
    assert sum(row.date is not None for row in rows) >= 9  # one chengdu item shows no date


def test_baidu_web_rows_have_no_source():
    body = corpus_path("baidu", "freesearchmcp__model-context-protocol.html").read_bytes()
    rows = ENGINES["baidu"].parse(response_from_bytes(body), "q", SearchOptions(now=FIXED_NOW)).rows
    assert rows and all(row.source is None for row in rows)


def _parse(name: str, body: dict, **options):
    return ENGINES[name].parse(response_from_bytes(json.dumps(body).encode()), "q",
                               SearchOptions(now=FIXED_NOW, **{**KEYED, **options}))


def test_serper_news_rows():
    # Serper's /news answer: {"news": [{title, link, snippet, date, source, imageUrl, position}]}.
    body = {"searchParameters": {"q": "q", "type": "news"},
            "news": [{"title": "Rates held", "link": "https://www.reuters.com/markets/rates", "snippet": "s",
                      "date": "2 hours ago", "source": "Reuters", "position": 1}]}
    row = _parse("serper", body, category="news").rows[0]
    assert (row.source, row.date, row.url) == ("Reuters", date(2026, 11, 29), "https://www.reuters.com/markets/rates")
    assert _parse("serper", {"searchParameters": {}, "news": []}, category="news").status == "empty"


def test_brave_api_news_rows():
    body = {"type": "news", "results": [
        {"title": "Google lays off staff", "url": "https://techcrunch.com/2024/05/01/google/", "description": "d",
         "page_age": "2024-05-02T17:40:05", "age": "3 days ago", "meta_url": {"hostname": "techcrunch.com"}},
        {"title": "Other", "url": "https://www.example.org/a", "description": "d", "source": "Example Daily"}]}
    rows = _parse("brave-api", body, category="news").rows
    assert [(r.source, r.date) for r in rows] == [("techcrunch.com", date(2024, 5, 2)), ("Example Daily", None)]


def test_tavily_exa_searxng_news_rows_name_the_site():
    tavily = {"results": [{"title": "t", "url": "https://www.bbc.co.uk/news/1", "content": "c",
                           "published_date": "Wed, 26 Nov 2026 10:00:00 GMT"}]}
    row = _parse("tavily", tavily, category="news").rows[0]
    assert (row.source, row.date) == ("bbc.co.uk", date(2026, 11, 26))
    exa = {"results": [{"title": "t", "url": "https://apnews.com/a", "publishedDate": "2026-11-20T00:00:00.000Z"}]}
    assert _parse("exa", exa, category="news").rows[0].source == "apnews.com"
    searxng = {"results": [{"title": "t", "url": "https://www.lemonde.fr/x", "content": "c",
                            "publishedDate": "2026-11-28T08:00:00"}]}
    row = _parse("searxng", searxng, category="news").rows[0]
    assert (row.source, row.date) == ("lemonde.fr", date(2026, 11, 28))
    assert _parse("tavily", tavily).rows[0].source is None  # web rows name no source


# --- pages -----------------------------------------------------------------------

@pytest.mark.parametrize(("name", "field", "value"), [
    ("bing", "first", "11"), ("bing-cn", "first", "11"), ("brave", "offset", "1"), ("baidu", "pn", "10"),
    ("mojeek", "s", "11"), ("yahoo", "b", "8"), ("wikipedia", "sroffset", "10"), ("brave-api", "offset", "1"),
    ("searxng", "pageno", "2"),
])
def test_page_two_parameters(name, field, value):
    assert dict(build(name, page=2).params)[field] == value
    assert ENGINES[name].facts.paging


def test_page_two_in_forms_and_bodies():
    form = dict(build("duckduckgo-html", page=2).form)
    assert (form["s"], form["dc"], form["o"], form["api"], form["v"]) == ("10", "11", "json", "d.js", "l")
    assert "b" not in form
    assert dict(build("duckduckgo-lite", page=3).form)["s"] == "25"
    assert build("serper", page=2).json["page"] == 2
    assert build("exa", page=2).json["numResults"] == 20
    assert build("tavily", page=2).json["max_results"] == 20
    assert build("firecrawl", page=3).json["limit"] == 30


def test_first_page_sends_no_page_parameters():
    assert "first" not in dict(build("bing").params) and "pn" not in dict(build("baidu").params)
    assert "s" not in dict(build("duckduckgo-html").form) and "s" not in dict(build("mojeek").params)
    assert dict(build("yahoo").params)["b"] == "1" and "page" not in build("serper").json


@pytest.mark.parametrize(("engine", "page", "url", "page_two_first"), [
    ("bing", "websearchmcp__javascript-tutorial.html", "https://www.bing.com/search", 11),
    ("duckduckgo-html", "kaiz__onimai.html", "https://html.duckduckgo.com/html/", 11),
    ("baidu", "freesearchmcp__model-context-protocol.html", "https://www.baidu.com/s", 11),
    ("brave", "websearchmcp__javascript-tutorial.html", "https://search.brave.com/search", 21),
    ("yahoo", "websearchmcp__javascript-tutorial.html", "https://search.yahoo.com/search", 8),
])
def test_positions_continue_on_later_pages(engine, page, url, page_two_first):
    body = corpus_path(engine, page).read_bytes()
    first = ENGINES[engine].parse(response_from_bytes(body, url=url), "q", SearchOptions(now=FIXED_NOW)).rows
    second = ENGINES[engine].parse(response_from_bytes(body, url=url), "q", SearchOptions(now=FIXED_NOW, page=2)).rows
    assert first[0].position == 1
    assert [r.position for r in second] == list(range(page_two_first, page_two_first + len(first)))


def test_apis_without_offsets_skip_the_earlier_pages():
    results = [{"title": f"t{i}", "url": f"https://example.org/{i}", "content": "c"} for i in range(20)]
    rows = _parse("tavily", {"results": results}, page=2).rows
    assert [(r.position, r.url) for r in rows[:2]] == [(11, "https://example.org/10"), (12, "https://example.org/11")]
    assert len(rows) == 10
    assert _parse("tavily", {"results": results[:10]}, page=2).status == "empty"
    assert ENGINES["tavily"].facts.missing_page(2) is None
    assert ENGINES["tavily"].facts.missing_page(3) == "no page 3 (last page 2)"


def test_a_page_an_engine_cannot_serve_is_named():
    # The pipeline skips the engine with this detail (tests/test_news_pages.py); no page is missing on page 1.
    for name, engine in ENGINES.items():
        facts = engine.facts
        assert facts.missing_page(1) is None, name
        assert (facts.missing_page(2) == "no page 2") == (not facts.paging), name
        last = facts.max_page if facts.paging and facts.max_page else None
        assert (facts.missing_page(11) is None) == (facts.paging and last is None), name
        assert engine.ignored_options(SearchOptions(page=2)) == [], name  # skipped, not noted
    cannot = dataclasses.replace(ENGINES["bing"].facts, paging=False)
    assert [cannot.missing_page(n) for n in (1, 2, 3)] == [None, "no page 2", "no page 3"]


def test_serper_and_brave_api_positions_continue():
    body = {"searchParameters": {}, "organic": [{"title": "t", "link": "https://example.org/", "snippet": "s"}]}
    assert _parse("serper", body, page=3).rows[0].position == 21
    brave = {"type": "search", "web": {"results": [{"title": "t", "url": "https://example.org/", "description": "d"}]}}
    assert _parse("brave-api", brave, page=2).rows[0].position == 11
