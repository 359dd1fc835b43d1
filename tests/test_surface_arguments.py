"""Arguments refused alike on every surface (issue 29): the Python API, the CLI, the MCP tools (a real
MCP client against the real server, in process) and the HTTP service say `invalid_parameter`, naming
the parameter, for the same mistake; nothing is silently ignored on one surface and refused on another.
Every refusal here comes before any request: the addresses are never read."""

from __future__ import annotations

import json

import pytest

from plugin.errors import FetchError, SearchError
from plugin.settings import Settings
from test_fetch_surfaces import run_cli

# Refused before any read; and were it ever read, 127.0.0.2 is a loopback address outside the allowed set.
PAGE = "http://127.0.0.2/page"


def quiet_settings(**overrides) -> Settings:
    return Settings(state_backend="memory", engines=["bing"], endpoints={"bing": "http://127.0.0.2:9"}, **overrides)


# ----- verify and verify_sync: invalid_parameter with the closest name, never TypeError -----
def test_verify_sync_refuses_a_missing_or_misspelt_argument():
    import plugin

    with pytest.raises(SearchError) as caught:
        plugin.verify_sync(PAGE)
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "quote"
    with pytest.raises(SearchError) as caught:
        plugin.verify_sync(PAGE, "a quote", fromat="text")
    assert caught.value.code == "invalid_parameter" and "did you mean format?" in caught.value.message
    assert caught.value.details["parameter"] == "fromat"
    with pytest.raises(plugin.FetchError):  # what a loop's `except FetchError` catches, as for fetch_sync
        plugin.verify_sync(url=PAGE, qoute="a quote")


def test_the_read_functions_imported_from_their_modules_refuse_alike():
    """Not only through `plugin`: `from plugin.reading.verify import verify_sync` is checked too."""
    from plugin.reading.reader import fetch_sync
    from plugin.reading.verify import verify_sync

    for call in (lambda: verify_sync(url=PAGE, qoute="a quote"), lambda: verify_sync(PAGE),
                 lambda: fetch_sync(PAGE, max_char=10)):
        with pytest.raises(FetchError) as caught:
            call()
        assert caught.value.code == "invalid_parameter", caught.value


async def test_verify_refuses_a_missing_or_misspelt_argument():
    import plugin

    with pytest.raises(SearchError) as caught:
        await plugin.verify(PAGE, qoute="x")
    assert caught.value.code == "invalid_parameter" and "qoute (did you mean quote?)" in caught.value.message
    with pytest.raises(SearchError) as caught:
        await plugin.verify(quote="x")
    assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "url"


# ----- passages=0, and passages without a query, on every surface -----
async def test_python_refuses_passages_zero_and_passages_without_a_query():
    from plugin.pipeline.searcher import Searcher
    from plugin.reading.reader import Reader

    async with Reader(quiet_settings()) as reader:
        for arguments in ({"query": "x", "passages": 0}, {"passages": 2}, {"passages": 0}):
            with pytest.raises(SearchError) as caught:
                await reader.fetch(PAGE, **arguments)
            assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "passages"
    async with Searcher(quiet_settings()) as searcher:
        for arguments in ({"read": 1, "passages": 0}, {"passages": 0}):
            with pytest.raises(SearchError) as caught:
                await searcher.search("rust", **arguments)
            assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "passages"


async def test_cli_refuses_passages_zero_and_passages_without_a_query():
    for args in (("fetch", PAGE, "--passages", "2"), ("fetch", PAGE, "--query", "x", "--passages", "0"),
                 ("search", "rust", "--read", "1", "--passages", "0"), ("search", "rust", "--passages", "0")):
        code, out, _ = await run_cli(*args, "--json", METASEARCH_ALLOW_PRIVATE_HOSTS="0", METASEARCH_ENGINES="bing",
                                     METASEARCH_ENDPOINTS=json.dumps({"bing": "http://127.0.0.2:9"}))
        error = json.loads(out)["error"]
        assert code == 2 and error["code"] == "invalid_parameter" and error["parameter"] == "passages", (args, out)


async def test_http_refuses_passages_zero_and_passages_without_a_query():
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.surfaces.service import build_app

    async with TestClient(TestServer(build_app(quiet_settings()))) as client:
        for path, params in (("/fetch", {"url": PAGE, "passages": "2"}),
                             ("/fetch", {"url": PAGE, "query": "x", "passages": "0"}),
                             ("/search", {"q": "rust", "read": "1", "passages": "0"}),
                             ("/search", {"q": "rust", "passages": "0"})):
            answer = await client.get(path, params=params)
            error = (await answer.json())["error"]
            assert answer.status == 400 and error["code"] == "invalid_parameter", (path, params, error)
            assert error["parameter"] == "passages"


async def test_mcp_refuses_passages_zero_and_passages_without_a_query():
    pytest.importorskip("mcp")
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server

    async with Client(build_server(quiet_settings())) as client:
        for tool, arguments in (("web_fetch", {"url": PAGE, "passages": 2}),
                                ("web_fetch", {"url": PAGE, "query": "x", "passages": 0}),
                                ("web_search", {"query": "rust", "read": 1, "passages": 0}),
                                ("web_search", {"query": "rust", "passages": 0})):
            result = await client.call_tool(tool, arguments)
            error = json.loads(result.content[0].text)["error"]
            assert result.is_error and error["code"] == "invalid_parameter", (tool, arguments, error)
            assert error["parameter"] == "passages"
