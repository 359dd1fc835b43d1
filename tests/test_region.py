"""One region vocabulary and `user_location` countries, on every surface; an engine that cannot serve the
asked region says so in its detail instead of silently serving another."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys

import pytest
from examples import scaled
from hypothesis import given, settings as hypothesis_settings, strategies as st

from engines import ENGINES
from engines.regions import REGIONS
from plugin.errors import SearchError
from plugin.pipeline.locale import (COUNTRIES, REGION_OF_COUNTRY, REGION_PATTERN, check_region,
                                    check_user_location)
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROWS = [("Python asyncio docs", "https://docs.python.org/3/library/asyncio.html", "python asyncio event loop")]


def searcher(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


@pytest.mark.parametrize("raw, tag", [("en-US", "en-US"), ("en_us", "en-US"), ("ZH-cn", "zh-CN"),
                                      ("zh-Hans-CN", "zh-CN"), ("sr_latn_RS", None), (None, None), ("", None)])
def test_regions_are_read_in_the_vocabularys_spelling(raw, tag):
    if tag is None and raw:  # well-formed, outside the vocabulary
        with pytest.raises(SearchError):
            check_region(raw)
    else:
        assert check_region(raw) == tag


@pytest.mark.parametrize("raw", ["en", "xx-YY", "english", "en-USA", "wt-wt", 42, "de-XX", " de-DE ", "en-US\n",
                                 "zh-Hans", "zh-Hans-CN-x", "en--US", "en-US-GB"])
def test_a_region_outside_the_vocabulary_is_invalid_parameter(raw):
    with pytest.raises(SearchError) as caught:
        check_region(raw)
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "region"


@functools.cache
def schema_validators():
    """The region as the tool schemas advertise it: the pydantic model (Rust regex, as pydantic serves it)
    and every exported format's JSON Schema, checked by jsonschema (Python's re, `$` aside)."""
    import jsonschema

    from plugin.surfaces.schemas import WebSearchArgs, tool_schema

    def by_model(value: str) -> bool:
        try:
            WebSearchArgs(query="q", region=value)
        except ValueError:
            return False
        return True

    exported = [tool_schema("openai")["function"]["parameters"], tool_schema("anthropic")["input_schema"],
                tool_schema("mcp")["inputSchema"]]

    def by_export(value: str) -> bool:
        verdicts = {jsonschema.Draft202012Validator(schema).is_valid({"query": "q", "region": value})
                    for schema in exported}
        assert len(verdicts) == 1  # every format says the same
        return verdicts.pop()

    return by_model, by_export


def accepted_by_code(value: str) -> bool:
    try:
        return check_region(value) is not None
    except SearchError:
        return False


def test_the_schema_accepts_every_spelling_the_code_reads_and_refuses_what_it_refuses():
    by_model, by_export = schema_validators()
    for tag in sorted(REGIONS):
        language, country = tag.split("-")
        for spelling in (tag, tag.lower(), tag.upper(), f"{language}_{country.lower()}", f"{language}-Hans-{country}",
                         f"{language.upper()}_latn_{country}"):
            assert check_region(spelling) == tag, spelling
            assert by_model(spelling) and by_export(spelling), spelling
    for bad in ("en", "english", "en-USA", "e-US", "zh-Hans", "zh-Hans-CN-x", "en--US", "en-US-GB", " de-DE ",
                "de-DE ", "en US", "zh-汉-CN", "en-U5"):
        assert not accepted_by_code(bad), bad
        assert not by_model(bad) and not by_export(bad), bad
    assert not accepted_by_code("en-US\n") and not by_model("en-US\n")  # (jsonschema's Python `$` lets it by)
    # What the schema lets through and the code still refuses: well-formed tags outside the vocabulary only.
    for outside in ("xx-YY", "de-XX", "wt-wt", "tlh-Latn-QO"):
        assert by_model(outside) and by_export(outside) and not accepted_by_code(outside), outside


def _spelled(tag: str, separators: list[str], script: str | None, upper: list[bool]) -> str:
    language, country = tag.split("-")
    parts = [language, *([script] if script else []), country]
    parts = [part.upper() if up else part.lower() for part, up in zip(parts, upper + [False] * 3)]
    return parts[0] + "".join(sep + part for sep, part in zip(separators + ["-"] * 2, parts[1:]))


SPELLINGS = st.builds(_spelled, st.sampled_from(sorted(REGIONS)), st.lists(st.sampled_from("-_"), min_size=2),
                      st.none() | st.from_regex(r"[A-Za-z]{4}", fullmatch=True) | st.sampled_from(["Hans", "Hant"]),
                      st.lists(st.booleans(), min_size=3))


@hypothesis_settings(max_examples=scaled(300), deadline=None)
@given(SPELLINGS | st.text(alphabet="aeDHnszUSCN-_ \t4", max_size=12) | st.from_regex(REGION_PATTERN, fullmatch=True))
def test_anything_the_code_reads_passes_the_schema(value):
    by_model, _ = schema_validators()
    if accepted_by_code(value):
        assert by_model(value)
    if not by_model(value):
        assert not accepted_by_code(value)


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
        scripted = await mcp.call_tool("web_search", {"query": "python asyncio", "region": "zh-Hans-CN"})
    await s.close()
    assert not located.is_error and "user_location" in tools["web_search"].input_schema["properties"]
    # The advertised schema's own pattern lets the spelling through, and the code reads it.
    assert tools["web_search"].input_schema["properties"]["region"]["anyOf"][0]["pattern"] == REGION_PATTERN
    assert not scripted.is_error
    markets = [seen.query.get("setmkt", [""])[0] for seen in bing.requests]
    assert markets == ["de-AT", "de-CH", "ja-JP", "zh-CN"]
    # A setting read from a file or the environment may carry stray spaces; a tool argument may not.
    assert Settings(region=" de-DE ").region == "de-DE"
