"""`metasearch serve` (issue 29): /verify refuses what /search and /fetch refuse; the 404 and `serve --help`
name /verify; /metrics counts fetches and verifies by outcome; `parameter` in an error is always a
string; Host (and Origin) are checked as the MCP HTTP transport does, so a DNS-rebinding page cannot use
a local `serve` as a relay; and the answer cache is on by default."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from pages import ROBOTS_OPEN, article_html, routes
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.surfaces.service import build_app
from standins import bing_page, page

ROWS = [("Python docs", "https://docs.python.org/3/", "python documentation")]


def reading_settings(**overrides) -> Settings:
    return Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0, **overrides)


# ----- item 16 -----
async def test_verify_refuses_a_repeated_parameter_like_search_and_fetch():
    async with TestClient(TestServer(build_app(Settings(state_backend="memory")))) as client:
        for path, params in (("/verify", [("url", "http://127.0.0.2/a"), ("quote", "x"), ("quote", "y")]),
                             ("/verify", [("url", "http://127.0.0.2/a"), ("url", "http://127.0.0.2/b"), ("quote", "x")]),
                             ("/fetch", [("url", "http://127.0.0.2/a"), ("url", "http://127.0.0.2/b")])):
            answer = await client.get(path, params=params)
            error = (await answer.json())["error"]
            assert answer.status == 400 and error["code"] == "invalid_parameter", (path, error)
            assert "more than once" in error["message"] and isinstance(error["parameter"], str)
        answer = await client.get("/verify", params={"url": "http://127.0.0.2/a", "quote": "x", "qoute": "y"})
        error = (await answer.json())["error"]
        assert answer.status == 400 and "qoute (did you mean quote?)" in error["message"]


async def test_the_404_and_serve_help_name_every_path():
    from plugin.surfaces.cli import build_parser

    async with TestClient(TestServer(build_app(reading_settings()))) as client:
        answer = await client.get("/nope")
        message = (await answer.json())["error"]["message"]
    for path in ("/search", "/fetch", "/verify", "/health", "/metrics"):
        assert path in message, message
    commands = next(a for a in build_parser()._actions if a.dest == "command")
    help_line = next(c.help for c in commands._choices_actions if c.dest == "serve")
    for path in ("/search", "/fetch", "/verify", "/health", "/metrics"):
        assert path in help_line, help_line


def test_parameter_is_always_a_string():
    from plugin.errors import SearchError, missing_arguments, unknown_arguments

    assert unknown_arguments("search()", ["lang", "limt"], ["limit", "query"]).details["parameter"] == "lang, limt"
    assert missing_arguments("verify()", ["url", "quote"]).details["parameter"] == "url, quote"
    assert SearchError("invalid_parameter", "x", parameter=["a"]).to_dict()["error"]["parameter"] == "a"


async def test_metrics_count_fetches_and_verifies_by_outcome(standins):
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html())}))
    async with TestClient(TestServer(build_app(reading_settings()))) as client:
        await client.get("/fetch", params={"url": site.url + "/post"})
        await client.get("/fetch", params={"url": site.url + "/post"})  # from the page cache
        await client.get("/fetch", params={"url": site.url + "/missing"})
        await client.get("/fetch", params={"url": "gopher://x"})
        await client.get("/verify", params={"url": site.url + "/post", "quote": "How async Rust works"})
        await client.get("/verify", params={"url": site.url + "/post", "quote": "nowhere in the page at all"})
        await client.get("/verify", params={"url": site.url + "/post"})
        text = await (await client.get("/metrics")).text()
    for line in ('metasearch_fetches_total{outcome="ok"} 1', 'metasearch_fetches_total{outcome="cached"} 1',
                 'metasearch_fetches_total{outcome="http_error"} 1',
                 'metasearch_fetches_total{outcome="bad_input"} 1',
                 'metasearch_verifies_total{outcome="found"} 1', 'metasearch_verifies_total{outcome="not_found"} 1',
                 'metasearch_verifies_total{outcome="bad_input"} 1',
                 "metasearch_fetch_duration_seconds_count 3", "metasearch_verify_duration_seconds_count 2"):
        assert line in text, line


def test_metrics_of_workers_add_up_fetches_and_verifies():
    from plugin.infra.metrics import Metrics

    one, two = Metrics(), Metrics()
    one.fetched("ok", 0.2)
    two.fetched("ok", 0.3)
    two.verified("found", 0.1)
    merged = one.merged([two.snapshot(), {"searches": {}, "engine_status": [], "search_seconds":
                                          Metrics().snapshot()["search_seconds"], "engine_seconds": {},
                                          "queue_seconds": {}}])  # a worker of an older version
    text = merged.render()
    assert 'metasearch_fetches_total{outcome="ok"} 2' in text and 'metasearch_verifies_total{outcome="found"} 1' in text


# ----- item 17: Host and Origin -----
async def get_with(client: TestClient, path: str, **headers: str):
    return await client.get(path, headers=headers)


async def test_a_foreign_host_or_origin_is_refused():
    async with TestClient(TestServer(build_app(reading_settings(), host="127.0.0.1"))) as client:
        port = client.port
        ok = await get_with(client, "/health", Host=f"127.0.0.1:{port}")
        assert ok.status == 200
        ok = await get_with(client, "/health", Host=f"localhost:{port}", Origin=f"http://localhost:{port}")
        assert ok.status == 200
        rebound = await get_with(client, "/health", Host=f"evil.example:{port}")
        body = await rebound.json()
        assert rebound.status == 421 and body["error"]["code"] == "host_not_allowed"
        assert "METASEARCH_ALLOWED_HOSTS" in body["error"]["message"]
        for origin in ("http://evil.example", "null", f"http://evil.example:{port}"):
            foreign = await get_with(client, "/search?q=x", Host=f"127.0.0.1:{port}", Origin=origin)
            assert foreign.status == 403 and (await foreign.json())["error"]["code"] == "origin_not_allowed", origin


async def test_allowed_hosts_adds_names():
    settings = reading_settings(allowed_hosts=["search.internal", "proxy.example:8443"])
    async with TestClient(TestServer(build_app(settings, host="127.0.0.1"))) as client:
        assert (await get_with(client, "/health", Host="search.internal")).status == 200
        assert (await get_with(client, "/health", Host="search.internal:9000",
                               Origin="https://search.internal")).status == 200
        assert (await get_with(client, "/health", Host="proxy.example:8443")).status == 200
        assert (await get_with(client, "/health", Host="proxy.example:9999")).status == 421
        assert (await get_with(client, "/health", Host="evil.example")).status == 421


def test_allowed_hosts_from_the_environment(monkeypatch):
    monkeypatch.setenv("METASEARCH_ALLOWED_HOSTS", "search.internal, Other.Example")
    assert Settings().allowed_hosts == ["search.internal", "other.example"]
    monkeypatch.setenv("METASEARCH_ALLOWED_HOSTS", '["a.example"]')
    assert Settings().allowed_hosts == ["a.example"]


def test_the_names_a_server_listens_on():
    from plugin.surfaces.service import HostGuard

    loopback = HostGuard("127.0.0.1", [])
    assert loopback.allows_host("127.0.0.1:8080") and loopback.allows_host("localhost") and \
        loopback.allows_host("[::1]:8080")
    assert not loopback.allows_host("evil.example") and not loopback.allows_host("192.168.1.5:8080")
    assert not loopback.allows_host(None) and not loopback.allows_host("")
    everywhere = HostGuard("0.0.0.0", [])  # every interface: its addresses and the machine's names
    assert everywhere.allows_host("192.168.1.5:8080") and everywhere.allows_host("[2001:db8::1]:80")
    assert not everywhere.allows_host("evil.example:8080")  # a rebinding page always comes by name
    named = HostGuard("search.lan", [])
    assert named.allows_host("search.lan:8080") and named.allows_host("SEARCH.LAN.") and \
        not named.allows_host("evil.example")
    assert HostGuard("127.0.0.1", ["*"]).allows_host("anything.example")


# ----- item 14, one part: the answer cache is on by default -----
async def test_serve_uses_the_answer_cache_by_default(standins, monkeypatch):
    monkeypatch.delenv("METASEARCH_CACHE_TTL_S")  # the test suite turns it off; serve's default is on
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], state_backend="memory")
    assert settings.cache_ttl_s > 0
    async with TestClient(TestServer(build_app(settings))) as client:
        first = await (await client.get("/search", params={"q": "python documentation"})).json()
        second = await (await client.get("/search", params={"q": "python documentation"})).json()
        assert first["cached"] is False and second["cached"] is True and len(engine.requests) == 1
        again = await (await client.get("/search", params={"q": "python documentation", "no_cache": "1"})).json()
        assert again["cached"] is False and len(engine.requests) == 2


async def test_head_answers_the_headers_get_would_without_searching_or_reading(standins):
    """HEAD /search ran a full search (aiohttp answers HEAD with the GET handler): every uptime probe or
    `curl -I` asked every engine. HEAD now answers GET's status and Content-Type and asks nothing; the
    parameters GET would refuse, it refuses alike; the other paths still answer HEAD."""
    engine = await standins(page(bing_page(ROWS)))
    site = await standins(page("<html><body><p>hello</p></body></html>"))
    settings = reading_settings(endpoints={"bing": engine.url}, engines=["bing"])
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        for path, params in (("/search", {"q": "python documentation"}), ("/fetch", {"url": site.url + "/a"}),
                             ("/verify", {"url": site.url + "/a", "quote": "hello"})):
            answer = await client.head(path, params=params)
            assert answer.status == 200 and answer.content_type == "application/json", path
            assert (await answer.read()) == b""
            refused = await client.head(path, params={**params, "lmit": "3"})
            assert refused.status == 400, path
        assert engine.requests == [] and site.requests == []  # nothing was asked
        assert (await client.head("/health")).status == 200
        metrics = await (await client.get("/metrics")).text()
        assert 'metasearch_searches_total{outcome="ok"}' not in metrics  # no search was run, none counted
        answer = await client.get("/search", params={"q": "python documentation"})  # GET still searches
        assert answer.status == 200 and len(engine.requests) == 1


async def test_verify_without_url_or_quote_names_every_missing_parameter():
    """GET /verify with neither url nor quote named only quote; the MCP tool and the Python API share it."""
    from plugin.errors import FetchError
    from plugin.reading.verify import verify

    async with TestClient(TestServer(build_app(Settings(state_backend="memory")))) as client:
        answer = await client.get("/verify")
        error = (await answer.json())["error"]
        assert answer.status == 400 and error["code"] == "invalid_parameter", error
        assert error["parameter"] == "url, quote" and "url and quote are required" in error["message"]
        # One missing: that one is named, as before.
        error = (await (await client.get("/verify", params={"url": "http://127.0.0.2/a"})).json())["error"]
        assert error["parameter"] == "quote"
        error = (await (await client.get("/verify", params={"quote": "x"})).json())["error"]
        assert error["code"] == "invalid_url" and "url is required" in error["message"]
    with pytest.raises(FetchError, match="url and quote are required"):
        await verify(None, None, settings=Settings(state_backend="memory"))
