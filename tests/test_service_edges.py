"""`metasearch serve` at its edges: a query string that is not UTF-8, and a request a page of another site
made without an Origin header (an <img>, a link, a GET form)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer
from yarl import URL

from plugin.settings import Settings
from plugin.surfaces.service import build_app
from standins import bing_page, page

ROWS = [("Python docs", "https://docs.python.org/3/", "python documentation")]


def settings(**overrides) -> Settings:
    return Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                    **overrides)


async def test_a_query_string_that_is_not_utf8_is_refused_not_searched_as_replacement_characters(standins):
    engine = await standins(page(bing_page(ROWS)))
    app = build_app(settings(endpoints={"bing": engine.url}, engines=["bing"]))
    async with TestClient(TestServer(app)) as client:
        for path, query, name in (("/search", "q=caf%E9", "q"), ("/search", "q=python&site=%FF.org", "site"),
                                  ("/fetch", "url=http%3A%2F%2F127.0.0.2%2F%E9", "url"),
                                  ("/verify", "url=http%3A%2F%2F127.0.0.2%2F&quote=%C3", "quote"),
                                  ("/search", "q=python&%FFx=1", "\ufffdx")):
            answer = await client.get(URL(f"{path}?{query}", encoded=True))
            error = (await answer.json())["error"]
            assert answer.status == 400 and error["code"] == "invalid_parameter", (query, error)
            assert error["parameter"] == name and "UTF-8" in error["message"], (query, error)
        assert engine.requests == []  # nothing was searched
        # The same text in UTF-8, and a + for a space, are searched.
        answer = await client.get(URL("/search?q=python+docs%20caf%C3%A9", encoded=True))
        assert answer.status == 200 and (await answer.json())["query"] == "python docs café"
        metrics = await (await client.get("/metrics")).text()
    assert 'metasearch_searches_total{outcome="bad_input"} 3' in metrics
    assert 'metasearch_fetches_total{outcome="bad_input"} 1' in metrics


async def test_a_page_of_another_site_cannot_drive_the_service_without_an_origin(standins):
    engine = await standins(page(bing_page(ROWS)))
    app = build_app(settings(endpoints={"bing": engine.url}, engines=["bing"]), host="127.0.0.1")
    async with TestClient(TestServer(app)) as client:
        host = f"127.0.0.1:{client.port}"
        # <img src="http://127.0.0.1:8080/search?q=..."> on another site: no Origin, Sec-Fetch-Site says so.
        for site in ("cross-site", "same-site", "Cross-Site"):
            for path in ("/search?q=python", "/fetch?url=http://127.0.0.2/", "/metrics"):
                answer = await client.get(path, headers={"Host": host, "Sec-Fetch-Site": site,
                                                         "Sec-Fetch-Mode": "no-cors"})
                assert answer.status == 403, (site, path)
                assert (await answer.json())["error"]["code"] == "origin_not_allowed"
        assert engine.requests == []
        # The address typed in the browser's bar (none), a page of the service's own origin, a program
        # (no Sec-Fetch-Site), and a page whose Origin is allowed, are answered.
        for headers in ({"Sec-Fetch-Site": "none"}, {"Sec-Fetch-Site": "same-origin"}, {},
                        {"Sec-Fetch-Site": "same-site", "Origin": f"http://localhost:{client.port}"}):
            answer = await client.get("/search?q=python", headers={"Host": host, **headers})
            assert answer.status == 200, headers
    # allowed_hosts '*' turns every check off, this one too.
    app = build_app(settings(endpoints={"bing": engine.url}, engines=["bing"], allowed_hosts=["*"]))
    async with TestClient(TestServer(app)) as client:
        answer = await client.get("/health", headers={"Sec-Fetch-Site": "cross-site"})
        assert answer.status == 200


def test_on_every_interface_an_ip_address_is_a_host_but_not_an_origin():
    from plugin.surfaces.service import HostGuard

    everywhere = HostGuard("0.0.0.0", [])
    assert everywhere.allows_host("203.0.113.5:8080")  # clients may connect by any of its addresses
    # A page served from an address (a site reached by IP, a LAN device's page) is another site.
    for origin in ("http://203.0.113.5", "http://192.168.1.20:3000", "https://[2001:db8::1]"):
        assert not everywhere.allows_origin(origin, "127.0.0.1:8080"), origin
        assert not everywhere.allows_origin(origin, "192.168.1.5:8080"), origin
    # The server's own origin, the loopback and the machine's names, and allowed_hosts stay allowed.
    assert everywhere.allows_origin("http://192.168.1.5:8080", "192.168.1.5:8080")
    assert everywhere.allows_origin("http://localhost:3000", "127.0.0.1:8080")
    assert HostGuard("0.0.0.0", ["192.168.1.20"]).allows_origin("http://192.168.1.20:3000", "127.0.0.1:8080")


async def test_serve_on_every_interface_refuses_a_page_served_from_an_address(standins):
    engine = await standins(page(bing_page(ROWS)))
    app = build_app(settings(endpoints={"bing": engine.url}, engines=["bing"]), host="0.0.0.0")
    async with TestClient(TestServer(app)) as client:  # the test server itself listens on 127.0.0.1
        host = f"127.0.0.1:{client.port}"
        answer = await client.get("/search?q=python", headers={"Host": host, "Origin": "http://203.0.113.5"})
        assert answer.status == 403 and (await answer.json())["error"]["code"] == "origin_not_allowed"
        assert engine.requests == []
        answer = await client.get("/search?q=python", headers={"Host": host, "Origin": f"http://{host}"})
        assert answer.status == 200


async def test_metrics_count_a_shared_execution_s_engine_outcomes_once(standins):
    import asyncio

    # Identical searches at once share one execution: one exchange with the engine, five answers.
    engine = await standins(page(bing_page(ROWS), delay=2.0))
    app = build_app(settings(endpoints={"bing": engine.url}, engines=["bing"]))
    async with TestClient(TestServer(app)) as client:
        answers = await asyncio.gather(*[client.get("/search", params={"q": "python docs"}) for _ in range(5)])
        assert [answer.status for answer in answers] == [200] * 5
        metrics = await (await client.get("/metrics")).text()
    assert len(engine.requests) == 1
    assert 'metasearch_searches_total{outcome="ok"} 5' in metrics  # five searches answered
    assert 'metasearch_engine_status_total{engine="bing",status="ok"} 1' in metrics  # one engine outcome
    assert 'metasearch_engine_latency_seconds_count{engine="bing"} 1' in metrics
