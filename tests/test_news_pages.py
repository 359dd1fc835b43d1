"""`category="news"` and `page` on every surface: engines without a news vertical are skipped and say so,
news rows keep their source and freshness counts for them; page n never repeats a URL shown on pages
1..n-1 of the same query, also across processes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from datetime import date, datetime

import pytest

from engines import ENGINES
from engines.base import Row
from plugin.errors import SearchError
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, ddg_page, page, sequence

NOW = datetime(2026, 11, 29, 12, 0, 0)
ROWS = [(f"Python asyncio guide {i}", f"https://site{i}.example.org/asyncio", f"python asyncio part {i}")
        for i in range(1, 9)]
DDG_ROWS = [(f"Python asyncio tips {i}", f"https://tips{i}.example.com/asyncio", f"python asyncio tip {i}")
            for i in range(1, 5)]


def searcher(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


def urls(response) -> list[str]:
    return [row.url for row in response.results]


# ----- news -----
async def test_news_skips_every_engine_without_a_news_vertical(standins):
    stand_in = await standins(page(bing_page(ROWS)))
    names = ["bing", "duckduckgo-html", "wikipedia", "mojeek"]
    s = searcher({name: stand_in.url for name in names})
    response = await s.search("python asyncio", category="news")
    await s.close()
    assert response.category == "news"
    for report in response.engines:
        if getattr(ENGINES[report.name].facts, "news", False):
            assert report.status != "skipped" or report.detail != "no news vertical"
        else:
            assert (report.status, report.detail) == ("skipped", "no news vertical")
    asked = [name for name in names if getattr(ENGINES[name].facts, "news", False)]
    assert len(stand_in.requests) == len(asked)  # no request for an engine that has no news vertical


async def test_a_news_search_no_engine_of_its_region_can_serve_says_so(standins, monkeypatch):
    """Without keys only Baidu has a news vertical: an English news search says so in `warnings`, naming
    what to set, instead of coming back empty or Chinese without a word (issue 21, item 15); a Chinese
    one, which Baidu serves, does not."""
    for variable in [*(e.facts.key_env for e in ENGINES.values() if e.facts.key_env), "METASEARCH_SEARXNG_URL"]:
        monkeypatch.delenv(variable, raising=False)
    bing = await standins(page(bing_page(ROWS)))
    async with searcher({"bing": bing.url}, engines=["bing", "baidu"]) as s:
        response = await s.search("python asyncio", category="news", engines=["bing"])
    [warning] = [w for w in response.warnings if "news" in w]
    assert "none of the engines asked has a news vertical, so each was skipped (no news vertical)" in warning
    assert "not asked, though it has one: baidu" not in warning  # baidu serves cjk queries, not this one
    for engine in ("exa", "tavily", "brave-api", "serper", "searxng"):
        assert f"{engine} ({ENGINES[engine].facts.key_env or ENGINES[engine].facts.url_env})" in warning
    assert not bing.requests  # bing has no news vertical: skipped, not asked

    from plugin.pipeline.plan import make_plan

    assert not [w for w in make_plan(Settings(), "成都 新闻", category="news").warnings if "news" in w]
    assert "only baidu has a news vertical, for cjk queries, not global ones" in make_plan(
        Settings(), "python", category="news").warnings[0]
    assert "not asked, though it has one: baidu" in make_plan(Settings(), "成都", category="news",
                                                              engines=["bing"]).warnings[0]
    assert not make_plan(Settings(exa_api_key="e" * 24), "python", category="news").warnings
    assert not make_plan(Settings(), "python").warnings  # web searches are not concerned


def test_which_engines_have_news_is_shown_by_engines_and_the_readme(capsys):
    """`metasearch engines` (table and JSON) and the README's engine table say which engines have a news
    vertical, as the engines' own facts say."""
    import re
    from pathlib import Path

    from plugin.surfaces.cli import main

    assert main(["engines", "--json"]) == 0
    listed = {row["name"]: row["news"] for row in json.loads(capsys.readouterr().out)}
    assert listed == {name: engine.facts.news for name, engine in ENGINES.items()}
    assert main(["engines"]) == 0
    table = capsys.readouterr().out.splitlines()
    header = table[0].split()
    assert "news" in header
    for line in table[1:len(ENGINES) + 1]:
        cells = line.split()
        assert cells[header.index("news")] == ("yes" if ENGINES[cells[0]].facts.news else "no"), line
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|(.*)\|$", readme[readme.index("\n## Engines\n"):], flags=re.M)
    heading = re.search(r"^\| engine \|(.*)\|$", readme, flags=re.M).group(1).split("|")
    column = [cell.strip() for cell in heading].index("news")
    documented = {name: cells.split("|")[column].strip() == "yes" for name, cells in rows if name in ENGINES}
    assert documented == {name: engine.facts.news for name, engine in ENGINES.items()}


async def test_web_is_the_default_category(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio")
    await s.close()
    assert response.category == "web" and response.engines[0].status == "ok"


@pytest.mark.parametrize("bad", ["images", "NEWS!", 3])
async def test_an_unknown_category_is_invalid_parameter(bad):
    s = Searcher(Settings())
    with pytest.raises(SearchError) as caught:
        await s.search("python", category=bad)
    await s.close()
    assert caught.value.code == "invalid_parameter"


def run_of(name: str, rows: list[Row]):
    from plugin.pipeline.runner import EngineRun

    return EngineRun(ENGINES[name], "primary", "ok", rows=len(rows), kept=rows)


def test_news_rows_keep_their_source_and_freshness_counts_for_news(monkeypatch):
    old = Row("Asyncio in 2019", "https://old.example.org/a", "python asyncio", 1, date(2019, 1, 1), "Old Times")
    new = Row("Asyncio this week", "https://new.example.org/a", "python asyncio", 2, date(2026, 11, 28), "Reuters")
    # Freshness only for time-sensitive queries: a plain query ranks by position, news by freshness.
    s = Searcher(Settings(freshness_scope="timely", engines=["bing"]))
    web = s.rank(s.plan("python asyncio", now=NOW), [run_of("bing", [old, new])])
    news = s.rank(s.plan("python asyncio", now=NOW, category="news"), [run_of("bing", [old, new])])
    assert [r.url for r in web] == ["https://old.example.org/a", "https://new.example.org/a"]
    assert [r.url for r in news] == ["https://new.example.org/a", "https://old.example.org/a"]
    assert [(r.source, r.date) for r in news] == [("Reuters", date(2026, 11, 28)), ("Old Times", date(2019, 1, 1))]


def test_a_merged_row_takes_the_first_source_any_engine_names():
    first = Row("Asyncio news", "https://news.example.org/a", "python asyncio", 1, None, None)
    second = Row("Asyncio news", "https://news.example.org/a", "python asyncio", 1, None, "新华网")
    s = Searcher(Settings(engines=["bing", "baidu"]))
    [row] = s.rank(s.plan("python asyncio", now=NOW, category="news"),
                   [run_of("bing", [first]), run_of("baidu", [second])])
    assert row.source == "新华网" and sorted(row.engines) == ["baidu", "bing"]


# ----- pages -----
async def test_page_two_never_repeats_a_url_of_page_one(standins):
    # The engine's second page overlaps its first (engines do that); the overlap must not come back.
    first, second = ROWS[:6], ROWS[2:8]
    bing = await standins(sequence(page(bing_page(first)), page(bing_page(second))))
    s = searcher({"bing": bing.url}, limit=4)
    one = await s.search("python asyncio")
    two = await s.search("python asyncio", page=2)
    await s.close()
    assert (one.page, two.page) == (1, 2)
    assert len(urls(one)) == 4 and urls(two)
    assert set(urls(one)).isdisjoint(urls(two))
    assert set(urls(two)) <= {url for _, url, _ in second}
    assert len(bing.requests) == 2  # page 1 was remembered, not asked again


async def test_page_three_asked_first_works_out_the_earlier_pages(standins):
    bing = await standins(page(bing_page(ROWS)))  # an engine that serves the same rows for every page
    s = searcher({"bing": bing.url}, limit=3)
    three = await s.search("python asyncio", page=3)
    assert len(bing.requests) == 3  # pages 1 and 2 were run once on the way to page 3...
    one = await s.search("python asyncio", page=1)  # (the answer cache is off: asked again)
    two = await s.search("python asyncio", page=2)
    await s.close()
    assert len(bing.requests) == 5  # ...and remembered: page 2 did not run page 1 again
    assert [len(urls(r)) for r in (one, two, three)] == [3, 3, 2]
    everything = urls(one) + urls(two) + urls(three)
    assert len(set(everything)) == len(everything) == 8  # ...and the three pages share no URL


def tavily_body(count: int) -> bytes:
    return json.dumps({"results": [{"title": f"Python asyncio notes {i}", "url": f"https://notes{i}.example.net/",
                                    "content": f"python asyncio note {i}"} for i in range(1, count + 1)]}).encode()


async def test_an_engine_is_not_asked_for_a_page_beyond_its_last(standins):
    # Tavily has no offset and at most 20 results: its last page is 2. Asked for page 3 it would only
    # repeat what it has, so it is not asked and says why, like an engine without a news vertical.
    bing = await standins(page(bing_page(ROWS)))
    tavily = await standins(page(tavily_body(20), content_type="application/json"))
    s = searcher({"bing": bing.url, "tavily": tavily.url}, limit=3, tavily_api_key="tavily-key-123456")
    three = await s.search("python asyncio", page=3)  # pages 1 and 2 are run on the way
    asked = (len(tavily.requests), len(bing.requests))
    two = await s.search("python asyncio", page=2)  # (the answer cache is off: asked again)
    await s.close()
    status = {report.name: (report.status, report.detail) for report in three.engines}
    assert status["tavily"] == ("skipped", "no page 3 (last page 2)")
    assert status["bing"][0] == "ok"
    assert {report.name: report.status for report in two.engines} == {"bing": "ok", "tavily": "ok"}
    assert asked == (2, 3)  # Tavily was asked for pages 1 and 2 only
    assert not three.partial and urls(three)
    assert set(urls(three)).isdisjoint(urls(two))


async def test_page_two_skips_an_engine_that_cannot_page(standins, monkeypatch):
    # Every built-in scraped engine pages; one that did not (paging=False) would serve its page 1 again.
    ddg = ENGINES["duckduckgo-html"]
    monkeypatch.setattr(ddg, "facts", dataclasses.replace(ddg.facts, paging=False))
    bing = await standins(sequence(page(bing_page(ROWS[:4])), page(bing_page(ROWS[4:8]))))
    duck = await standins(page(ddg_page(DDG_ROWS)))
    s = searcher({"bing": bing.url, "duckduckgo-html": duck.url}, limit=4)
    one = await s.search("python asyncio")
    two = await s.search("python asyncio", page=2)
    await s.close()
    assert {report.name: (report.status, report.detail) for report in two.engines}["duckduckgo-html"] == (
        "skipped", "no page 2")
    assert len(duck.requests) == 1 and len(bing.requests) == 2  # DuckDuckGo asked for page 1 only
    assert not two.partial and urls(two)
    assert set(urls(one)).isdisjoint(urls(two))


async def test_another_query_or_filter_has_pages_of_its_own(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url}, limit=3)
    await s.search("python asyncio")
    other = await s.search("python asyncio", page=2, blocked_domains=["site1.example.org"])
    await s.close()
    # The blocked variant is another query: its page 1 was worked out (site2..site4), not the plain one's.
    assert urls(other) == [f"https://site{i}.example.org/asyncio" for i in (5, 6, 7)]


async def run_cli(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
    out, err = await process.communicate()
    return process.returncode, out.decode(), err.decode()


async def test_page_two_in_a_fresh_process_after_page_one_in_another(standins):
    bing = await standins(page(bing_page(ROWS)))
    common = ("python asyncio", "--engines", "bing", "--endpoint", f"bing={bing.url}", "--limit", "3", "--json")
    code, out, err = await run_cli("search", *common)
    assert code == 0, err
    one = [row["url"] for row in json.loads(out)["results"]]
    code, out, err = await run_cli("search", *common, "--page", "2")
    assert code == 0, err
    result = json.loads(out)
    two = [row["url"] for row in result["results"]]
    assert result["page"] == 2 and len(two) == 3 and set(one).isdisjoint(two)
    assert len(bing.requests) == 2  # the second process read page 1 from the shared store
    for bad in ("0", "11", "two"):
        code, out, _ = await run_cli("search", *common, "--page", bad)
        assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    code, out, _ = await run_cli("search", *common, "--category", "news")
    # Bing has no news vertical here, so no engine could answer: exit status 3, the answer still printed.
    assert code == 3 and json.loads(out)["category"] == "news"


async def test_http_service_and_mcp_take_category_and_page(standins):
    pytest.importorskip("mcp")
    from aiohttp.test_utils import TestClient, TestServer
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server
    from plugin.surfaces.service import build_app

    bing = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": bing.url}, engines=["bing"], limit=3)
    client = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        one = await (await client.get("/search?q=python+asyncio")).json()
        two = await (await client.get("/search?q=python+asyncio&page=2")).json()
        news = await (await client.get("/search?q=python+asyncio&category=news")).json()
        bad = await client.get("/search?q=python+asyncio&page=0")
        bad_body = await bad.json()
    finally:
        await client.close()
    assert two["page"] == 2 and {r["url"] for r in one["results"]}.isdisjoint(r["url"] for r in two["results"])
    assert news["category"] == "news"
    assert bad.status == 400 and bad_body["error"]["parameter"] == "page"

    s = Searcher(settings)
    async with Client(build_server(searcher=s)) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        page_two = await mcp.call_tool("web_search", {"query": "python asyncio", "page": 2})
        news = await mcp.call_tool("web_search", {"query": "python asyncio", "category": "news"})
    await s.close()
    properties = tools["web_search"].input_schema["properties"]
    assert properties["category"]["enum"] == ["web", "news"] and properties["page"]["maximum"] == 10
    assert page_two.structured_content["page"] == 2 and news.structured_content["category"] == "news"


async def test_news_rows_from_the_real_baidu_news_page_carry_date_and_source(standins):
    from conftest import corpus_path

    body = corpus_path("baidu", "govinfocheck__baidu-news__riben.html").read_bytes()
    baidu = await standins(page(body))
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"baidu": baidu.url, "bing": bing.url}, limit=10)
    response = await s.search("日本", category="news", now=datetime(2026, 11, 30, 8, 0, 0))
    await s.close()
    reports = {e.name: e for e in response.engines}
    assert reports["baidu"].status == "ok" and reports["bing"].status == "skipped"
    assert baidu.requests[0].query["tn"] == ["news"] and not bing.requests  # the news vertical was asked
    assert len(response.results) == 10
    assert all(row.date and row.source for row in response.results)
    assert {"看看新闻Knews", "新京报官微", "环球时报"} <= {row.source for row in response.results}


async def test_rows_that_just_missed_page_one_lead_page_two(standins):
    # The engine's pages are disjoint; page 1 showed 4 of its first 6 rows. The other 2 are not lost
    # behind its second page: they lead page 2, and page 2 in a fresh searcher (another process) agrees.
    first, second = ROWS[:6], [(f"Python asyncio more {i}", f"https://more{i}.example.net/asyncio",
                                f"python asyncio more {i}") for i in range(1, 7)]
    bing = await standins(sequence(page(bing_page(first)), page(bing_page(second))))
    s = searcher({"bing": bing.url}, limit=4)
    one = await s.search("python asyncio")
    await s.close()
    s = searcher({"bing": bing.url}, limit=4)
    two = await s.search("python asyncio", page=2)
    await s.close()
    assert urls(one) == [url for _, url, _ in first[:4]]
    assert urls(two)[:2] == [url for _, url, _ in first[4:6]]
    assert urls(two)[2:] == [url for _, url, _ in second[:2]]
    assert len(bing.requests) == 2
