"""Bad input answers with an error code and a message on every surface, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from plugin.errors import SearchError
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_page, page

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("hello world program", "https://en.wikipedia.org/wiki/Hello_world", "hello world")]

# (arguments, expected code); None means accepted (after cleaning/clamping).
CASES = [
    ({"query": ""}, "query_required"),
    ({"query": "   \t\n "}, "query_required"),
    ({"query": "\x00\x01\x7f"}, "query_required"),  # only control characters: nothing left
    ({"query": "a" * 501}, "query_too_long"),
    ({"query": "  " + "a" * 500 + "  "}, None),
    ({"query": "a" * 100_000}, "query_too_long"),
    ({"query": "hello\x00 world\x1b[31m"}, None),  # NUL and escapes stripped, not fatal
    ({"query": "hello \ud800 world"}, None),  # an invalid surrogate is replaced, not fatal
    ({"query": None}, "query_required"),
    ({"query": 12345}, "invalid_parameter"),
    ({"query": "hello world", "limit": "ten"}, "invalid_parameter"),
    ({"query": "hello world", "limit": 3.5}, "invalid_parameter"),
    ({"query": "hello world", "limit": [1]}, "invalid_parameter"),
    ({"query": "hello world", "limit": -5}, None),  # clamped to 1
    ({"query": "hello world", "limit": 10**9}, None),  # clamped to 20
    ({"query": "hello world", "engines": ["bing", "altavista"]}, "unknown_engine"),
    ({"query": "hello world", "engines": "bing,,altavista"}, "unknown_engine"),
    ({"query": "hello world", "engines": 7}, "invalid_parameter"),
    ({"query": "hello world", "time_range": "fortnight"}, "invalid_parameter"),
    ({"query": "hello world", "region": "not a region!"}, "invalid_parameter"),
    ({"query": "hello world", "site": "javascript:alert(1)"}, "invalid_parameter"),
    ({"query": "hello world", "safesearch": "maximum"}, "invalid_parameter"),
]


@pytest.fixture
async def loopback_settings(standins):
    engine = await standins(page(bing_page(ROWS)))
    return Settings(endpoints={"bing": engine.url}, engines=["bing"])


@pytest.mark.parametrize(("arguments", "code"), CASES)
async def test_python_api(arguments, code, loopback_settings):
    searcher = Searcher(loopback_settings)
    try:
        if code is None:
            response = await searcher.search(**arguments)
            assert "\x00" not in response.query and "\x1b" not in response.query
            assert response.query == response.query.strip() and len(response.query) <= 500
            assert len(response.results) <= 20 and response.engines[0].status in ("ok", "irrelevant")
        else:
            with pytest.raises(SearchError) as caught:
                await searcher.search(**arguments)
            assert caught.value.code == code and caught.value.message
    finally:
        await searcher.close()


@pytest.mark.parametrize(("arguments", "code"), CASES)
async def test_mcp_tool(arguments, code, loopback_settings):
    pytest.importorskip("mcp")
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server

    searcher = Searcher(loopback_settings)
    async with Client(build_server(searcher=searcher)) as client:
        result = await client.call_tool("web_search", arguments)
    await searcher.close()
    if code is None:
        assert not result.is_error and result.structured_content["engines"][0]["status"] in ("ok", "irrelevant")
    else:
        assert result.is_error
        error = json.loads(result.content[0].text)["error"]
        assert error["code"] == code and error["message"]


def run_cli(args: list, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "plugin.surfaces.cli", *args], capture_output=True, cwd=ROOT, env=env,
                          timeout=60)


@pytest.mark.parametrize(("args", "code"), [
    (["search", "a" * 100_000, "--json"], "query_too_long"),
    (["search", b"\xff\xfe", "--json"], None),  # undecodable argv bytes: replaced, not fatal
    (["search", "hello world", "--limit", "-3", "--json"], None),
    (["search", "hello world", "--limit", "999", "--json"], None),
    (["search", "hello world", "--region", "xx_bad!", "--json"], "invalid_parameter"),
    (["search", "hello world", "--site", "not a domain", "--json"], "invalid_parameter"),
    (["search", "hello world", "--safesearch", "max", "--json"], "invalid_parameter"),
    (["search", "hello world", "--timeout-ms", "0", "--json"], "invalid_parameter"),
    (["search", "hello world", "--replay", "/nonexistent/dir", "--json"], "invalid_parameter"),
])
async def test_cli(args, code, standins):
    engine = await standins(page(bing_page(ROWS)))
    import asyncio

    env = {"METASEARCH_ENDPOINTS": json.dumps({"bing": engine.url}), "METASEARCH_ENGINES": '["bing"]'}
    result = await asyncio.to_thread(run_cli, args, env)
    stdout = result.stdout.decode()
    assert b"Traceback" not in result.stderr
    if code is None:
        assert result.returncode == 0, result.stderr
        assert "results" in json.loads(stdout)
    else:
        assert result.returncode == 2
        assert json.loads(stdout)["error"]["code"] == code


# ----- one rule for every integer argument -----
SPELLINGS_OF_THREE = [3, 3.0, "3", " 3 ", "+3", "003"]
NOT_INTEGERS = [True, 3.5, float("inf"), float("nan"), "3.5", "1_0", "0x3", "three", "3 4", [3], None.__class__, "",
                "  "]  # (an empty page had meant page 1 where an empty limit, read or offset was refused)


def _integer_readers():
    from plugin.errors import FetchError
    from plugin.pipeline.query import check_page, clamp_limit
    from plugin.reading.attach import check_read
    from plugin.reading.reader import _integer
    settings = Settings()
    return {
        "limit": (lambda raw: clamp_limit(raw, 8), SearchError),
        "page": (check_page, SearchError),
        "read": (lambda raw: check_read(raw, settings), SearchError),
        "offset": (lambda raw: _integer("offset", raw, 0), FetchError),
    }


@pytest.mark.parametrize("argument", ["limit", "page", "read", "offset"])
def test_every_integer_argument_reads_the_same_spellings(argument):
    """limit, page, read and a fetch's offset accept the same spellings of an integer and refuse the same
    non-integers, each with invalid_parameter naming the argument (they were four parsers that disagreed:
    read and offset took "1_0" as 10, page refused "-1" as not an integer rather than out of range)."""
    read, error = _integer_readers()[argument]
    for spelling in SPELLINGS_OF_THREE:
        assert read(spelling) == 3, spelling
    for bad in NOT_INTEGERS:
        with pytest.raises(error) as raised:
            read(bad)
        assert raised.value.code == "invalid_parameter" and raised.value.details.get("parameter") == argument, bad
    # A huge integer is still an integer: clamped where the argument clamps, refused where it does not.
    huge = "9" * 5000
    if argument == "page":
        with pytest.raises(error):
            read(huge)
    else:
        assert read(huge) >= 3


# ----- arguments that do not fit (issue 21, item 8) -----
def _api_calls():
    import plugin

    async def searcher_search(**arguments):
        async with Searcher(Settings(engines=["bing"])) as searcher:
            return await searcher.search(**arguments)

    return {"search": plugin.search, "search_sync": plugin.search_sync, "Searcher.search": searcher_search,
            "fetch": plugin.fetch, "fetch_sync": plugin.fetch_sync}


@pytest.mark.parametrize("entry", ["search", "search_sync", "Searcher.search", "fetch", "fetch_sync"])
async def test_every_python_entry_point_refuses_arguments_that_do_not_fit(entry, tmp_path, monkeypatch):
    """A model-invented argument, a misspelt one, a missing one and one too many by position are
    SearchError(invalid_parameter) naming them, never TypeError (which a harness's `except SearchError`
    does not catch), with the closest name the function takes; nothing is asked of any engine or page."""
    import asyncio
    import inspect

    monkeypatch.setenv("METASEARCH_STATE_DIR", str(tmp_path))
    call = _api_calls()[entry]
    first, misspelt, closest = ("url", "max_char", "max_chars") if "fetch" in entry else ("query", "limt", "limit")

    async def outcome(*args, **kwargs) -> SearchError:
        with pytest.raises(SearchError) as raised:
            result = call(*args, **kwargs)
            if inspect.isawaitable(result):
                await result
        return raised.value

    cases = [((), {first: "http://example.org/x", "lang": "en"}, "lang"),  # `parameter` is always a string
             ((), {first: "http://example.org/x", misspelt: 3}, misspelt),
             ((), {}, first if entry != "Searcher.search" else None)]
    if entry != "Searcher.search":
        cases.append((("http://example.org/x", 3), {}, None))
    for args, kwargs, named in cases:
        error = await outcome(*args, **kwargs) if not entry.endswith("_sync") else \
            await asyncio.to_thread(lambda: _sync_outcome(call, args, kwargs))
        assert error.code == "invalid_parameter", (args, kwargs, error.code)
        if named is not None:
            assert error.details["parameter"] == named and error.message
        if misspelt in kwargs:
            assert f"did you mean {closest}?" in error.message
        if "fetch" in entry:
            from plugin.errors import FetchError

            assert isinstance(error, FetchError) and error.bad_input  # CLI exit 2, HTTP 400 like a bad offset


def test_a_settings_argument_that_is_no_settings_is_refused():
    """`search_sync(**arguments)` in a tool loop passes whatever the model sent, `settings` included."""
    import plugin

    with pytest.raises(SearchError) as raised:
        plugin.search_sync(query="x", settings={"engines": ["bing"]})
    assert raised.value.code == "invalid_parameter" and raised.value.details["parameter"] == "settings"
    # and fetch and verify, which had failed with an AttributeError deep in the reader (127.0.0.2: never read)
    import asyncio

    from plugin.errors import FetchError

    for call in (lambda: plugin.fetch_sync("http://127.0.0.2/x", settings={"engines": ["bing"]}),
                 lambda: asyncio.run(plugin.fetch("http://127.0.0.2/x", settings=5)),
                 lambda: plugin.verify_sync("http://127.0.0.2/x", "a quote", settings={}),
                 lambda: asyncio.run(plugin.verify("http://127.0.0.2/x", "a quote", settings=5))):
        with pytest.raises(FetchError) as raised:
            call()
        assert raised.value.code == "invalid_parameter" and raised.value.details["parameter"] == "settings"


@pytest.mark.parametrize("name, value", [("now", "2024-01-01"), ("now", 5), ("now", date(2024, 1, 1)),
                                         ("cache", "false"), ("ignore_cooldowns", "yes"), ("explain", 1)])
async def test_search_refuses_a_clock_or_a_yes_no_of_the_wrong_type(name, value):
    # now="2024-01-01" failed deep in the plan (str.replace() takes no keyword arguments); cache="false"
    # is true to Python and used the cache. Refused before any engine is asked.
    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings

    own = Settings(state_backend="memory", engines=["bing"], endpoints={"bing": "http://127.0.0.2:9"})
    async with Searcher(own) as searcher:
        with pytest.raises(SearchError) as raised:
            await searcher.search("hello", **{name: value})
    assert raised.value.code == "invalid_parameter" and raised.value.details["parameter"] == name


def _sync_outcome(call, args, kwargs) -> SearchError:
    try:
        call(*args, **kwargs)
    except SearchError as exc:
        return exc
    raise AssertionError("no SearchError")


def test_search_sync_takes_exactly_the_arguments_of_search():
    """Both are spelt out for IDEs and type checkers; an argument added to one is added to the other."""
    import inspect

    from plugin.pipeline import searcher

    asynchronous, synchronous = (inspect.signature(f).parameters for f in (searcher.search, searcher.search_sync))
    assert [(p.name, p.kind, p.default) for p in asynchronous.values()] == \
        [(p.name, p.kind, p.default) for p in synchronous.values()]
    assert all(p.kind is not p.VAR_KEYWORD for p in synchronous.values())


async def test_the_mcp_tools_name_a_missing_or_misspelt_argument(loopback_settings):
    pytest.importorskip("mcp")
    from mcp import Client

    from plugin.surfaces.mcp_server import build_server

    searcher = Searcher(loopback_settings)
    async with Client(build_server(searcher=searcher)) as client:
        errors = [json.loads((await client.call_tool(tool, arguments)).content[0].text)["error"]
                  for tool, arguments in [("web_search", {"query": "x", "limt": 3}), ("web_search", {}),
                                          ("web_fetch", {"max_chars": 10})]]
    await searcher.close()
    assert [e["code"] for e in errors] == ["invalid_parameter"] * 3
    assert "did you mean limit?" in errors[0]["message"] and errors[0]["parameter"] == "limt"
    assert errors[1]["parameter"] == "query" and errors[2]["parameter"] == "url"


async def test_a_misspelt_engine_is_told_the_closest_wherever_it_is_named(loopback_settings, monkeypatch, capsys):
    # The `engines` argument, `--endpoint` and the `engines` setting say it alike (the setting alone did).
    searcher = Searcher(loopback_settings)
    try:
        with pytest.raises(SearchError) as caught:
            await searcher.search("hello world", engines=["bingo", "altavista"])
    finally:
        await searcher.close()
    assert caught.value.code == "unknown_engine" and caught.value.details["unknown"] == ["bingo", "altavista"]
    assert "bingo (did you mean bing or bing-cn?), altavista;" in caught.value.message
    from plugin.surfaces.cli import main

    monkeypatch.setenv("METASEARCH_STATE_BACKEND", "memory")
    assert main(["search", "hello", "--endpoint", "bingo=http://127.0.0.1:9", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "unknown_engine" and "bingo (did you mean bing or bing-cn?)" in error["message"]
    with pytest.raises(SearchError) as caught:
        Settings(engines=["bingo"])
    assert "bingo (did you mean bing or bing-cn?)" in caught.value.message
