"""One region vocabulary and `user_location` countries, on every surface; an engine that cannot serve the
asked region says so in its detail instead of silently serving another."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from engines import ENGINES
from plugin.errors import SearchError
from plugin.pipeline.locale import COUNTRIES, REGION_OF_COUNTRY, check_region, check_user_location
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROWS = [("Python asyncio docs", "https://docs.python.org/3/library/asyncio.html", "python asyncio event loop")]


def searcher(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


@pytest.mark.parametrize("raw, tag", [("en-US", "en-US"), ("en_us", "en-US"), ("ZH-cn", "zh-CN"),
                                      ("zh-Hans-CN", "zh-CN"), (" de-DE ", "de-DE"), (None, None), ("", None)])
def test_regions_are_read_in_the_vocabularys_spelling(raw, tag):
    assert check_region(raw) == tag


@pytest.mark.parametrize("raw", ["en", "xx-YY", "english", "en-USA", "wt-wt", 42, "de-XX"])
def test_a_region_outside_the_vocabulary_is_invalid_parameter(raw):
    with pytest.raises(SearchError) as caught:
        check_region(raw)
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "region"


@pytest.mark.parametrize("raw, country", [
    ("DE", "DE"), ("de", "DE"), ({"country": "JP"}, "JP"), ({"type": "approximate", "country": "ch", "city": "Bern"}, "CH"),
    ({"type": "approximate", "approximate": {"country": "BR", "city": "São Paulo"}}, "BR"),  # OpenAI's shape
    ("UK", "GB"), ("KE", "KE"), (None, None),
])
def test_user_location_countries(raw, country):
    assert check_user_location(raw) == country


@pytest.mark.parametrize("raw", ["Germany", "XX", "D", {"city": "Berlin"}, {"country": 49}, ["DE"]])
def test_a_bad_user_location_is_invalid_parameter(raw):
    with pytest.raises(SearchError) as caught:
        check_user_location(raw)
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "user_location"


def test_every_country_maps_into_the_vocabulary_and_bilingual_ones_to_their_main_language():
    assert len(COUNTRIES) == 249
    assert all(tag.endswith("-" + country) for country, tag in REGION_OF_COUNTRY.items())
    assert (REGION_OF_COUNTRY["DE"], REGION_OF_COUNTRY["CH"], REGION_OF_COUNTRY["CA"], REGION_OF_COUNTRY["US"],
            REGION_OF_COUNTRY["CN"], REGION_OF_COUNTRY["BE"]) == ("de-DE", "de-CH", "en-CA", "en-US", "zh-CN", "nl-BE")
    assert "KE" not in REGION_OF_COUNTRY


async def test_user_location_picks_the_region_the_engine_is_asked_for(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    await s.search("python asyncio", user_location={"type": "approximate", "country": "DE"})
    await s.search("python asyncio", user_location="DE", region="fr-FR")  # an explicit region wins
    await s.search("python asyncio")
    await s.close()
    markets = [seen.query.get("setmkt", [""])[0] for seen in bing.requests]
    assert markets[0] == "de-DE" and markets[1] == "fr-FR" and markets[2] != "de-DE"


async def test_a_country_outside_the_vocabulary_is_a_warning_not_a_guess(standins):
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing": bing.url})
    response = await s.search("python asyncio", user_location="KE")
    await s.close()
    assert response.engines[0].status == "ok"
    assert any("user_location KE has no region" in warning for warning in response.warnings)


async def test_an_engine_that_cannot_serve_the_region_says_so(standins):
    # Bing China serves Chinese markets only (its facts' table); Bing serves ja-JP.
    assert not ENGINES["bing-cn"].facts.honours_region("ja-JP") and ENGINES["bing"].facts.honours_region("ja-JP")
    cn = await standins(page(bing_page(ROWS)))
    bing = await standins(page(bing_page(ROWS)))
    s = searcher({"bing-cn": cn.url, "bing": bing.url})
    response = await s.search("python asyncio", region="ja-JP")
    japan = await s.search("python asyncio", user_location="JP", cache=False)
    await s.close()
    reports = {e.name: e for e in response.engines}
    assert reports["bing-cn"].status == "ok"
    assert f"region ja-JP not supported; used {ENGINES['bing-cn'].facts.default_region}" in reports["bing-cn"].detail
    assert "region" not in reports["bing"].detail
    assert "region ja-JP not supported" in {e.name: e for e in japan.engines}["bing-cn"].detail


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})})
    out, err = await process.communicate()
    return process.returncode, out.decode(), err.decode()


async def test_cli_http_mcp_and_settings_take_the_same_vocabulary(standins):
    pytest.importorskip("mcp")
    from aiohttp.test_utils import TestClient, TestServer
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server
    from plugin.surfaces.service import build_app

    bing = await standins(page(bing_page(ROWS)))
    common = ("python asyncio", "--engines", "bing", "--endpoint", f"bing={bing.url}", "--json")
    code, out, err = await run_cli("search", *common, "--user-location", "AT")
    assert code == 0, err
    code, out, _ = await run_cli("search", *common, "--user-location", "Austria")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    code, out, _ = await run_cli("search", *common, "--region", "en")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    code, out, _ = await run_cli("search", *common, env={"METASEARCH_REGION": "xx-XX"})
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"

    settings = Settings(endpoints={"bing": bing.url}, engines=["bing"])
    client = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        ok = await client.get("/search?q=python+asyncio&user_location=CH")
        bad = await client.get("/search?q=python+asyncio&user_location=XX")
        bad_body = await bad.json()
    finally:
        await client.close()
    assert ok.status == 200 and bad.status == 400 and bad_body["error"]["parameter"] == "user_location"

    s = Searcher(settings)
    async with Client(build_server(searcher=s)) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        located = await mcp.call_tool("web_search", {"query": "python asyncio",
                                                     "user_location": {"type": "approximate", "country": "JP"}})
    await s.close()
    assert not located.is_error and "user_location" in tools["web_search"].input_schema["properties"]
    markets = [seen.query.get("setmkt", [""])[0] for seen in bing.requests]
    assert markets == ["de-AT", "de-CH", "ja-JP"]
