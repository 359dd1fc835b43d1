"""Page reads hop by hop: cookies within one read, and the identity page reads send (User-Agent, extra
headers). Pages are served by loopback stand-ins on 127.0.0.1; made-up names resolve through a stand-in
DNS to 127.0.0.1 only."""

from __future__ import annotations

import pytest

from aiohttp import web

from pages import (ARTICLE_PARAGRAPHS, ROBOTS_OPEN, StandInDNS, article_html, loopback_is_public, paths,
                   reading_settings, redirect, routes)
from plugin.reading.reader import Reader
from plugin.settings import Settings
from standins import StandIn, page


def settings(**overrides) -> Settings:
    return reading_settings(**{"fetch_cache_ttl_s": 0, **overrides})


def cookie_gate(name: str = "consent", value: str = "yes", *, gate: str = "/consent",
                back: str = "/article") -> tuple:
    """A site that wants a cookie: `back` without it redirects to `gate`, which sets the cookie on a 302
    back to `back` (the consent or session hop many news and docs sites put in front of a page)."""

    async def article(request: web.Request, standin: StandIn) -> web.StreamResponse:
        if request.cookies.get(name) != value:
            return web.Response(status=302, headers={"Location": gate})
        return web.Response(text=article_html(), content_type="text/html")

    async def set_cookie(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.Response(status=302, headers={"Location": back})
        response.set_cookie(name, value, path="/", httponly=True)
        return response

    return article, set_cookie


def cookie_headers(site: StandIn) -> list[tuple[str, str | None]]:
    return [(seen.path, seen.headers.get("Cookie")) for seen in site.requests]


async def test_a_cookie_set_on_a_redirect_is_sent_on_the_following_hops_of_the_read(standins):
    article, set_cookie = cookie_gate()
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/article": article, "/consent": set_cookie}))
    async with Reader(settings()) as reader:
        response = await reader.fetch(site.url + "/article")
        assert response.status == 200 and ARTICLE_PARAGRAPHS[0] in response.content
        assert response.final_url == site.url + "/article"
        assert cookie_headers(site) == [("/robots.txt", None), ("/article", None), ("/consent", None),
                                        ("/article", "consent=yes")]
        # The next read starts without it: cookies belong to one read (the page cache is off here, and
        # the robots.txt verdict is cached).
        await reader.fetch(site.url + "/article")
        assert cookie_headers(site)[4:] == [("/article", None), ("/consent", None), ("/article", "consent=yes")]


async def test_read_cookies_stay_with_their_host(standins):
    site = await standins(page("routes are set once the port is known"))
    port = site.url.rsplit(":", 1)[1]
    other = f"http://other.example:{port}"

    async def set_and_leave(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.Response(status=302, headers={"Location": other + "/post"})
        response.set_cookie("session", "s3cr3t-session", path="/")
        return response

    site.behaviour = routes({"/robots.txt": ROBOTS_OPEN, "/go": set_and_leave, "/post": page(article_html())})
    reader = Reader(settings(allow_private_hosts=False), resolver=StandInDNS({"news.example": ["127.0.0.1"],
                                                                             "other.example": ["127.0.0.1"]}),
                    public=loopback_is_public)
    async with reader:
        response = await reader.fetch(f"http://news.example:{port}/go")
    assert response.final_url == other + "/post"
    assert [(seen.headers.get("Host", "").split(":")[0], seen.path, seen.headers.get("Cookie"))
            for seen in site.requests] == [("news.example", "/robots.txt", None), ("news.example", "/go", None),
                                           ("other.example", "/robots.txt", None), ("other.example", "/post", None)]


async def test_a_cookie_removed_by_a_hop_is_not_sent_again(standins):
    async def first(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.Response(status=302, headers={"Location": "/second"})
        response.set_cookie("a", "1", path="/")
        response.set_cookie("b", "2", path="/")
        return response

    async def second(request: web.Request, standin: StandIn) -> web.StreamResponse:
        response = web.Response(status=302, headers={"Location": "/post"})
        response.del_cookie("a", path="/")  # Max-Age=0
        response.set_cookie("b", "3", path="/")
        return response

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/first": first, "/second": second,
                                  "/post": page(article_html())}))
    async with Reader(settings()) as reader:
        await reader.fetch(site.url + "/first")
    assert cookie_headers(site)[1:] == [("/first", None), ("/second", "a=1; b=2"), ("/post", "b=3")]


# ----- identity -----
def user_agents(site: StandIn) -> list[str | None]:
    return [seen.headers.get("User-Agent") for seen in site.requests]


async def read_once(site: StandIn, reader_settings: Settings) -> None:
    async with Reader(reader_settings) as reader:
        await reader.fetch(site.url + "/post")


@pytest.mark.parametrize("transport", ["browser", "plain"])
async def test_fetch_user_agent_wins_over_the_global_user_agent_for_page_reads(standins, monkeypatch, transport):
    from engines.browser import CHROME
    from plugin.reading.hops import PLAIN_READER_AGENT

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    default = CHROME.user_agent if transport == "browser" else PLAIN_READER_AGENT

    await read_once(site, settings(transport=transport))
    assert user_agents(site) == [default, default]  # robots.txt and the page alike
    site.requests.clear()

    await read_once(site, settings(transport=transport, user_agent="GlobalAgent/1"))  # no fetch_user_agent
    assert user_agents(site) == ["GlobalAgent/1", "GlobalAgent/1"]
    site.requests.clear()

    await read_once(site, settings(transport=transport, user_agent="GlobalAgent/1", fetch_user_agent="ReaderAgent/2"))
    assert user_agents(site) == ["ReaderAgent/2", "ReaderAgent/2"]
    site.requests.clear()

    # Set in the environment counts as set.
    monkeypatch.setenv("METASEARCH_FETCH_USER_AGENT", "EnvReader/3")
    await read_once(site, settings(transport=transport, user_agent="GlobalAgent/1"))
    assert user_agents(site) == ["EnvReader/3", "EnvReader/3"]


async def test_page_reads_are_chrome_opening_the_page_on_the_browser_transport(standins):
    from engines.browser import CHROME

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    await read_once(site, settings())
    # Over HTTP/1.1 (a loopback http:// page) Chrome sends no Priority header, and Connection: keep-alive.
    expected = {k: v for k, v in CHROME.navigate(site.url + "/post").items() if k != "Priority"}
    for seen in site.requests:
        assert seen.method == "GET"
        sent = {name.lower(): value for name, value in seen.headers.items()}
        for name, value in expected.items():
            assert sent[name.lower()] == value, name
        assert "priority" not in sent and sent["connection"] == "keep-alive"
        # The headers go out in the order Chrome sends them (HTTP/1.1 here: Host first).
        order = [name.lower() for name in seen.headers if name.lower() in {k.lower() for k in expected}]
        assert order == [name.lower() for name in expected]


async def test_page_reads_say_what_they_accept_on_the_plain_transport(standins):
    from plugin.reading.hops import ACCEPT

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    await read_once(site, settings(transport="plain"))
    for seen in site.requests:
        assert seen.method == "GET" and seen.headers.get("Accept") == ACCEPT
        assert seen.headers.get("Accept-Encoding") == "gzip, deflate"
    assert "text/html" in ACCEPT and "application/pdf" in ACCEPT


async def test_engines_keep_the_global_user_agent(standins):
    from plugin.pipeline.searcher import Searcher
    from standins import bing_page

    pages = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    engine = await standins(page(bing_page([("How async Rust works", pages.url + "/post", "async rust")])))
    searcher = Searcher(settings(endpoints={"bing": engine.url}, engines=["bing"], user_agent="GlobalAgent/1",
                                 fetch_user_agent="ReaderAgent/2"))
    async with searcher:
        response = await searcher.search("async rust", read=1)
    assert response.results[0].content
    assert user_agents(engine) == ["GlobalAgent/1"]
    assert user_agents(pages) == ["ReaderAgent/2", "ReaderAgent/2"]


async def test_credential_extra_headers_are_not_sent_to_pages(standins):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    await read_once(site, settings(extra_headers={"X-Team": "search", "Authorization": "Bearer engine-key-1234",
                                                  "X-Api-Key": "k-5678", "Cookie": "sid=9999"}))
    assert paths(site) == ["/robots.txt", "/post"]
    for seen in site.requests:
        assert seen.headers.get("X-Team") == "search"
        assert "Authorization" not in seen.headers and "X-Api-Key" not in seen.headers
        assert "Cookie" not in seen.headers


async def test_redirect_hops_within_a_host_do_not_each_wait_the_politeness_interval(standins):
    # Issue 29, item 20: each same-host redirect used to wait fetch_host_interval_ms again (250 ms by default).
    # With a 5 s interval, three same-host hops took over 10 s of queue time; they are one read, one wait.
    site = await standins(routes({"/a": redirect("/b"), "/b": redirect("/c"), "/c": redirect("/post"),
                                  "/post": page(article_html())}))
    async with Reader(settings(fetch_host_interval_ms=5000, fetch_robots=False, fetch_timeout_ms=20000,
                               admission_wait_ms=60000)) as reader:
        answer = await reader.fetch(site.url + "/a")
        assert paths(site) == ["/a", "/b", "/c", "/post"] and answer.final_url == site.url + "/post"
        assert answer.queue_ms < 2500, answer.queue_ms
        # A second read of the host is a new read: it keeps the spacing after the first one's start.
        again = await reader.fetch(site.url + "/post")
    assert again.queue_ms >= 2500
