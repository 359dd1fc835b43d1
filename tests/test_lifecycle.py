"""Python API lifecycle (issue 10): cookies per exchange, sessions closed with their loop, search_sync
inside a running loop, the state store off the event loop, and warnings that describe the present."""

from __future__ import annotations

from aiohttp import web

from engines import ENGINES
from engines.base import SearchOptions
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page

ROWS = [("Python release notes", "https://docs.python.org/3/whatsnew/", "python release notes"),
        ("Python downloads", "https://www.python.org/downloads/", "python release notes downloads")]


async def test_engines_get_exactly_the_cookies_they_ask_for(standins):
    """A cookie a server set in one answer (`_EDGE_S=mkt=ja-jp`) must not ride on a later search for
    another market, nor override the engine's own `Cookie` header."""

    async def sets_market_cookie(request, standin):
        market = request.query.get("setmkt", "").lower()
        response = web.Response(text=bing_page(ROWS), content_type="text/html")
        response.set_cookie("_EDGE_S", f"mkt={market}", path="/")
        response.set_cookie("MUID", "tracker-from-an-earlier-answer", path="/")
        return response

    bing = await standins(sets_market_cookie)
    async with Searcher(Settings(endpoints={"bing": bing.url}, engines=["bing"])) as searcher:
        await searcher.search("python release notes", region="ja-JP")
        await searcher.search("python release notes", region="de-DE")
    asked = ENGINES["bing"].build("python release notes", SearchOptions(region="de-DE", count=10)).headers["Cookie"]
    assert "mkt=de-de" in asked
    assert bing.requests[1].headers.get("Cookie") == asked


STARTPAGE_HOME = ('<html><body><form id="search" action="/sp/search"><input type="hidden" name="sc" '
                  'value="TOKEN123"><input name="query"></form></body></html>')
STARTPAGE_RESULTS = ('<html><body><form id="search"><input name="query" value="python asyncio"></form>'
                     '<div class="w-gl"><div class="result"><a class="result-title result-link" '
                     'href="https://docs.python.org/3/library/asyncio.html"><h2>asyncio — Asynchronous I/O</h2></a>'
                     '<p class="description">python asyncio documentation</p></div></div></body></html>')


async def test_a_follow_up_carries_the_cookies_of_its_own_exchange_only(standins):
    """Startpage's token step: the session cookie its home page sets goes with that search's POST, and
    never with another search's requests."""
    issued = iter(range(1, 100))

    async def startpage(request, standin):
        if request.path == "/sp/search":
            return web.Response(text=STARTPAGE_RESULTS, content_type="text/html")
        response = web.Response(text=STARTPAGE_HOME, content_type="text/html")
        response.set_cookie("sp_session", f"s{next(issued)}", path="/")
        return response

    engine = await standins(startpage)
    async with Searcher(Settings(endpoints={"startpage": engine.url}, engines=["startpage"])) as searcher:
        first = await searcher.search("python asyncio")
        second = await searcher.search("python asyncio docs")
    assert first.engines[0].status == "ok" and second.engines[0].status == "ok"
    paths = [(seen.path, seen.headers.get("Cookie")) for seen in engine.requests]
    assert paths == [("/", None), ("/sp/search", "sp_session=s1"), ("/", None), ("/sp/search", "sp_session=s2")]
