"""Domain lists: `allowed_domains` / `blocked_domains` (and `site`, and `site:` / `-site:` / OR in the
query) on every surface, as hard filters on loopback engines and as operators from real pages."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from conftest import corpus_path
from engines.base import SearchOptions
from plugin.errors import SearchError
from plugin.pipeline.domains import ascii_domain, check_domains, passes
from plugin.pipeline.operators import parse_operators
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROWS = [
    ("asyncio docs", "https://docs.python.org/3/library/asyncio.html", "python asyncio event loop"),
    ("python home", "https://python.org/about/", "python asyncio about"),
    ("not python", "https://notpython.org/asyncio", "python asyncio lookalike"),
    ("python asyncio on a blog", "https://blog.example.com/asyncio", "python asyncio tutorial"),
    ("Bücher über python asyncio", "https://www.bücher.de/python-asyncio", "python asyncio buch"),
    ("Bücher punycode python asyncio", "https://shop.xn--bcher-kva.de/asyncio", "python asyncio buch"),
]


def searcher(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


def urls(response) -> list[str]:
    return sorted(row.url for row in response.results)


# ----- checking and normalising -----
@pytest.mark.parametrize("raw", ["bücher.de", "BÜCHER.DE", "xn--bcher-kva.de", "https://bücher.de/", "*.bücher.de",
                                 "bücher.de."])
def test_idn_spellings_are_one_domain(raw):
    assert check_domains("allowed_domains", [raw]) == ("xn--bcher-kva.de",)


@pytest.mark.parametrize("raw", ["", "localhost", "not a domain", "python.org/docs", "127.0.0.1", "a..b.com",
                                 "user@host.com", "host.com:8080", "-bad.com", "xn--zz.de", "javascript:alert(1)"])
def test_a_bad_domain_is_invalid_parameter(raw):
    if raw == "":
        assert check_domains("allowed_domains", [raw]) == ()
        return
    with pytest.raises(SearchError) as caught:
        check_domains("allowed_domains", [raw])
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "allowed_domains"


def test_lists_come_as_lists_or_comma_separated_and_are_deduplicated():
    assert check_domains("blocked_domains", "a.com, B.org,a.com") == ("a.com", "b.org")
    assert check_domains("blocked_domains", ["a.com,b.org", "c.net"]) == ("a.com", "b.org", "c.net")
    for bad in (42, {"a.com": 1}, [None]):
        with pytest.raises(SearchError):
            check_domains("blocked_domains", bad)
    with pytest.raises(SearchError):
        check_domains("blocked_domains", [f"d{i}.com" for i in range(101)])


def test_a_domain_matches_itself_and_its_subdomains_only():
    allowed = ("python.org", "xn--bcher-kva.de")
    assert passes("https://python.org/x", allowed, ())
    assert passes("https://docs.python.org/x", allowed, ())
    assert passes("https://PYTHON.ORG./x", allowed, ())
    assert not passes("https://notpython.org/x", allowed, ())
    assert not passes("https://python.org.evil.com/x", allowed, ())
    assert passes("https://www.bücher.de/x", allowed, ())  # Unicode host, punycode list
    assert not passes("https://docs.python.org/x", (), ("python.org",))
    assert passes("https://python.com/x", (), ("python.org",))
    assert ascii_domain("例え.テスト") == "xn--r8jz45g.xn--zckzah"


# ----- operators in the query -----
@pytest.mark.parametrize("query, text, allowed, blocked, recognised", [
    ("asyncio site:python.org", "asyncio", ("python.org",), (), ["site=python.org"]),
    ("(site:nasa.gov OR site:spacex.com OR site:wikipedia.org) Voyager 1 launch date", "Voyager 1 launch date",
     ("nasa.gov", "spacex.com", "wikipedia.org"), (), ["allowed_domains=nasa.gov,spacex.com,wikipedia.org"]),
    ("site:a.com OR site:b.org rust", "rust", ("a.com", "b.org"), (), ["allowed_domains=a.com,b.org"]),
    ("site:a.com | site:b.org rust", "rust", ("a.com", "b.org"), (), ["allowed_domains=a.com,b.org"]),
    ("cats -site:pinterest.com -site:Pinterest.co.uk", "cats", (), ("pinterest.com", "pinterest.co.uk"),
     ["blocked_domains=pinterest.com,pinterest.co.uk"]),
    # The whole query is operators: the text stays as written for the engines.
    ("site:microsoft.com -site:www.microsoft.com", "site:microsoft.com -site:www.microsoft.com",
     ("microsoft.com",), ("www.microsoft.com",), ["site=microsoft.com", "blocked_domains=www.microsoft.com"]),
    # Two site: terms both hold: the narrower one.
    ("x site:microsoft.com site:learn.microsoft.com", "x", ("learn.microsoft.com",), (), ["site=learn.microsoft.com"]),
    ("romane site:bücher.de", "romane", ("xn--bcher-kva.de",), (), ["site=xn--bcher-kva.de"]),
    # Not filters: a wider OR, contradictory sites, a path, a longer word ending in "site".
    ("rust OR site:a.com", "rust OR site:a.com", (), (), []),
    ("rust OR (site:a.com OR site:b.org)", "rust OR (site:a.com OR site:b.org)", (), (), []),
    ("cats OR -site:pinterest.com", "cats OR -site:pinterest.com", (), (), []),
    ("x (site:a.com OR site:localhost)", "x (site:a.com OR site:localhost)", (), (), []),  # not every one a domain
    ("x site:a.com site:b.com", "x site:a.com site:b.com", (), (), []),
    ("x site:python.org/docs", "x site:python.org/docs", (), (), []),
    ("website:foo.com x", "website:foo.com x", (), (), []),
])
def test_domain_operators_become_the_same_lists(query, text, allowed, blocked, recognised):
    ops = parse_operators(query)
    assert (ops.text, ops.allowed_domains, ops.blocked_domains, ops.recognised) == (text, allowed, blocked, recognised)
    assert ops.site == (allowed[0] if len(allowed) == 1 else None)


def test_explicit_allow_list_replaces_the_querys_and_blocks_add_up():
    ops = parse_operators("rust site:a.com -site:x.com", allowed_domains=("b.org",))
    assert (ops.text, ops.allowed_domains, ops.blocked_domains) == ("rust", ("b.org",), ("x.com",))
    ops = parse_operators("rust -site:x.com", blocked_domains=("y.com",))
    assert ops.blocked_domains == ("y.com", "x.com")


# ----- loopback engines, the full pipeline -----
async def test_allowed_domains_keep_only_those_domains_and_their_subdomains(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio", allowed_domains=["python.org", "xn--bcher-kva.de"])
    await s.close()
    assert urls(response) == sorted(["https://docs.python.org/3/library/asyncio.html", "https://python.org/about/",
                                     "https://www.bücher.de/python-asyncio".replace("bücher", "xn--bcher-kva"),
                                     "https://shop.xn--bcher-kva.de/asyncio"])
    assert response.recognised == ["allowed_domains=python.org,xn--bcher-kva.de"]
    assert response.engines[0].kept == 4 and response.engines[0].rows == 6


async def test_blocked_domains_drop_those_domains_and_their_subdomains(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio", blocked_domains="python.org,bücher.de")
    await s.close()
    assert urls(response) == ["https://blog.example.com/asyncio", "https://notpython.org/asyncio"]
    assert response.recognised == ["blocked_domains=python.org,xn--bcher-kva.de"]


async def test_one_allowed_domain_is_passed_natively_as_site(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio", allowed_domains=["python.org"])
    await s.close()
    assert bing.queries()[0] == "python asyncio site:python.org"
    assert response.recognised == ["site=python.org"]
    assert all("python.org" in url for url in urls(response)) and len(response.results) == 2


async def test_engine_whose_rows_all_fall_outside_reports_empty_with_the_filter(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio", allowed_domains=["rust-lang.org"])
    await s.close()
    assert response.results == []
    report = response.engines[0]
    assert report.status == "empty" and "site=rust-lang.org" in report.detail


async def test_allowed_and_blocked_together_are_refused(standins):
    s = searcher({"bing": "http://127.0.0.1:9"})
    for options in ({"allowed_domains": ["a.com"], "blocked_domains": ["b.com"]},
                    {"site": "a.com", "blocked_domains": ["b.com"]}):
        with pytest.raises(SearchError) as caught:
            await s.search("python", **options)
        assert caught.value.code == "invalid_parameter"
    await s.close()


async def test_the_answer_cache_tells_domain_lists_apart(standins, monkeypatch):
    monkeypatch.setenv("METASEARCH_CACHE_TTL_S", "300")
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    first = await s.search("python asyncio", allowed_domains=["python.org"])
    second = await s.search("python asyncio", blocked_domains=["python.org"])
    await s.close()
    assert not second.cached and set(urls(first)).isdisjoint(urls(second))


# ----- real pages: the corpus's operator queries -----
def corpus_body(relative: str) -> bytes:
    return corpus_path(*relative.split("/")).read_bytes()


async def test_ored_site_operators_on_the_real_duckduckgo_lite_page(standins):
    body = corpus_body("duckduckgo-lite/spacey__site-nasa-spacex-wikipedia-voyager-1-launch.html")
    lite = await standins(page(body))
    s = searcher({"duckduckgo-lite": lite.url}, limit=20)
    query = "(site:nasa.gov OR site:spacex.com OR site:wikipedia.org) Voyager 1 launch date"
    response = await s.search(query)
    narrowed = await s.search(query, allowed_domains=["nasa.gov"], cache=False)
    await s.close()
    assert response.recognised == ["allowed_domains=nasa.gov,spacex.com,wikipedia.org"]
    assert len(response.results) == 10  # every row on the page is inside the allow list
    assert {row.domain for row in response.results} == {"nasa.gov", "wikipedia.org"}
    # An explicit allow list replaces the query's own.
    assert narrowed.recognised == ["site=nasa.gov"]
    assert {row.domain for row in narrowed.results} == {"nasa.gov"} and len(narrowed.results) == 5


async def test_site_and_negated_site_on_the_real_bing_page(standins):
    body = corpus_body("bing/deepthink__site-microsoft-com-not-www_2.html")
    bing = await standins(page(body))
    s = searcher({"bing": bing.url}, limit=20)
    response = await s.search("site:microsoft.com -site:www.microsoft.com")
    more = await s.search("site:microsoft.com -site:www.microsoft.com -site:support.microsoft.com")
    await s.close()
    assert response.recognised == ["site=microsoft.com", "blocked_domains=www.microsoft.com"]
    assert len(response.results) == 10
    assert more.recognised == ["site=microsoft.com", "blocked_domains=www.microsoft.com,support.microsoft.com"]
    hosts = [row.url.split("/")[2] for row in more.results]
    assert len(more.results) == 7 and "support.microsoft.com" not in hosts


# ----- every surface -----
def test_engine_options_carry_the_lists():
    from engines import ENGINES
    from plugin.pipeline.plan import engine_options, make_plan

    settings = Settings()
    plan = make_plan(settings, "rust (site:a.com OR site:b.org)")
    options = engine_options(settings, ENGINES["exa"], plan)
    assert isinstance(options, SearchOptions)
    assert (options.allowed_domains, options.blocked_domains, options.site) == (("a.com", "b.org"), (), None)
    plan = make_plan(settings, "rust", blocked_domains=["x.com"])
    assert engine_options(settings, ENGINES["exa"], plan).blocked_domains == ("x.com",)


async def run_cli(*args: str, env: dict | None = None) -> tuple[int, str, str]:
    import os

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})})
    out, err = await process.communicate()
    return process.returncode, out.decode(), err.decode()


async def test_cli_repeatable_allow_and_block_flags(standins):
    bing = await standins(page(bing_page(ROWS)))
    code, out, _ = await run_cli("search", "python asyncio", "--engines", "bing", "--endpoint", f"bing={bing.url}",
                                 "--allow-domain", "python.org", "--allow-domain", "bücher.de", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert result["recognised"] == ["allowed_domains=python.org,xn--bcher-kva.de"]
    assert len(result["results"]) == 4
    code, out, _ = await run_cli("search", "python asyncio", "--engines", "bing", "--endpoint", f"bing={bing.url}",
                                 "--block-domain", "python.org", "--block-domain", "example.com", "--json")
    assert [row["url"] for row in json.loads(out)["results"]][0:1] == ["https://notpython.org/asyncio"]
    code, out, _ = await run_cli("search", "python asyncio", "--allow-domain", "a.com", "--block-domain", "b.com",
                                 "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    code, out, _ = await run_cli("search", "python asyncio", "--allow-domain", "not a domain", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"


async def test_http_service_takes_comma_separated_or_repeated_lists(standins):
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.surfaces.service import build_app

    bing = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": bing.url}, engines=["bing"])
    client = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        repeated = await (await client.get("/search?q=python+asyncio&allowed_domains=python.org"
                                           "&allowed_domains=bücher.de")).json()
        commas = await (await client.get("/search?q=python+asyncio&allowed_domains=python.org,bücher.de")).json()
        blocked = await (await client.get("/search?q=python+asyncio&blocked_domains=python.org")).json()
        both = await client.get("/search?q=python+asyncio&allowed_domains=a.com&blocked_domains=b.com")
        both_body = await both.json()
        bad = await client.get("/search?q=python+asyncio&blocked_domains=not+a+domain")
        bad_body = await bad.json()
    finally:
        await client.close()
    assert repeated["recognised"] == commas["recognised"] == ["allowed_domains=python.org,xn--bcher-kva.de"]
    assert len(repeated["results"]) == 4
    assert blocked["results"] and all(row["domain"] != "python.org" for row in blocked["results"])
    assert both.status == 400 and both_body["error"]["code"] == "invalid_parameter"
    assert bad.status == 400 and bad_body["error"]["parameter"] == "blocked_domains"


async def test_mcp_web_search_takes_the_lists(standins):
    pytest.importorskip("mcp")
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server

    bing = await standins(page(bing_page(ROWS)))
    searcher_ = Searcher(Settings(endpoints={"bing": bing.url}, engines=["bing"]))
    async with Client(build_server(searcher=searcher_)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("web_search", {"query": "python asyncio", "blocked_domains": ["python.org"]})
        refused = await client.call_tool("web_search", {"query": "python asyncio", "allowed_domains": ["a.com"],
                                                        "blocked_domains": ["b.com"]})
    await searcher_.close()
    assert {"allowed_domains", "blocked_domains"} <= set(tools["web_search"].input_schema["properties"])
    structured = result.structured_content
    assert structured["recognised"] == ["blocked_domains=python.org"]
    assert structured["results"] and all(row["domain"] != "python.org" for row in structured["results"])
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "invalid_parameter"


def test_schema_export_lists_the_domain_parameters():
    from plugin.surfaces.schemas import tool_schema

    for fmt, key in (("openai", None), ("anthropic", "input_schema"), ("mcp", "inputSchema")):
        schema = tool_schema(fmt)
        properties = (schema["function"]["parameters"] if key is None else schema[key])["properties"]
        assert properties["allowed_domains"]["anyOf"][0]["type"] == "array"
        assert "blocked_domains" in properties


def test_a_mobile_row_is_filtered_by_the_desktop_host_it_is_shown_under():
    # en.m.wikipedia.org rows are shown as en.wikipedia.org (canonical.desktop_host): a block of the site
    # must not let them through, an allow list naming it must not drop them; the host the engine gave
    # names the row as well.
    mobile = "https://en.m.wikipedia.org/wiki/Python"
    assert not passes(mobile, (), ("en.wikipedia.org",))
    assert not passes(mobile, (), ("m.wikipedia.org",))
    assert passes(mobile, ("en.wikipedia.org",), ())
    assert passes(mobile, ("en.m.wikipedia.org",), ())
    assert not passes("https://en.wikipedia.org/wiki/Python", ("en.m.wikipedia.org",), ())
    assert passes("https://m.example.com/x", (), ("example.com",)) is False  # a subdomain, as ever
    assert passes("https://m.example.com/x", ("m.example.com",), ())
