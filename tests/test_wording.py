"""What a new user reads (issue 29 item 21): read=-1 refused; the user_location hint shows forms that are
accepted; the news warning agrees with the engine report; MCP search_engines returns the fields of
`engines --json`; --check-floors says that the floors hold; singular and plural; url errors that say
what was wrong."""

from __future__ import annotations

import json

import pytest

from engines import ENGINES
from plugin.errors import SearchError
from plugin.settings import Settings

UNREACHABLE = {name: "http://127.0.0.2:9" for name in ENGINES if name != "searxng"}


def quiet(**overrides) -> Settings:
    return Settings(endpoints=UNREACHABLE, state_backend="memory", timeout_ms=300, deadline_ms=600, **overrides)


# ----- read=-1 -----
async def test_a_negative_read_is_refused_on_every_surface():
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.pipeline.searcher import Searcher
    from plugin.surfaces.service import build_app

    async with Searcher(quiet()) as searcher:
        for value in (-1, "-3"):
            with pytest.raises(SearchError) as caught:
                await searcher.search("rust", read=value)
            assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "read"
            assert "0" in caught.value.message
    async with TestClient(TestServer(build_app(quiet()))) as client:
        answer = await client.get("/search", params={"q": "rust", "read": "-1"})
        assert answer.status == 400 and (await answer.json())["error"]["parameter"] == "read"


# ----- user_location: every form the hint shows is accepted, on every surface -----
def test_every_form_the_user_location_hint_shows_is_accepted():
    import re

    from plugin.pipeline.locale import check_user_location

    with pytest.raises(SearchError) as caught:
        check_user_location("Germany")
    hint = caught.value.message
    forms = re.findall(r'(\{[^}]*\}|"[A-Z]{2}")', hint)
    assert len(forms) >= 2, hint
    for form in forms:  # as a Python or MCP caller passes it, and as text (HTTP, the CLI)
        assert check_user_location(json.loads(form)) == "DE", form
        assert check_user_location(form if form.startswith("{") else json.loads(form)) == "DE", form


async def test_a_json_user_location_works_over_http():
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.surfaces.service import build_app

    async with TestClient(TestServer(build_app(quiet()))) as client:
        answer = await client.get("/search", params={"q": "rust", "user_location": '{"country": "DE"}'})
        assert answer.status == 200, await answer.text()


# ----- the news warning and the engine report tell one story -----
async def test_the_news_warning_agrees_with_the_engine_report():
    from plugin.pipeline.searcher import Searcher

    async with Searcher(quiet(cache_ttl_s=0)) as searcher:
        response = await searcher.search("election results", category="news")
    (warning,) = [w for w in response.warnings if w.startswith("category news")]
    statuses = {report.name: (report.status, report.detail) for report in response.engines}
    asked_with_news = [name for name, (status, detail) in statuses.items()
                       if status not in ("disabled",) and detail != "no news vertical"]
    assert asked_with_news == ["baidu"]
    # The warning names the engine that was asked for news, and does not deny that one was.
    assert "baidu" in warning and "no engine asked has a news vertical" not in warning, warning
    for name, (status, detail) in statuses.items():
        if detail == "no news vertical":
            assert name not in warning.split(";")[0], (name, warning)
    for name in ("exa", "tavily", "brave-api", "serper", "searxng"):  # disabled: the warning says what they need
        assert statuses[name][0] == "disabled" and name in warning
    async with Searcher(quiet(cache_ttl_s=0)) as searcher:  # none asked has one
        response = await searcher.search("election results", category="news", engines=["bing", "brave"])
    (warning,) = [w for w in response.warnings if w.startswith("category news")]
    assert all(r.status == "skipped" and r.detail == "no news vertical" for r in response.engines)
    assert "none of the engines asked" in warning and "exa (EXA_API_KEY)" in warning  # what would have one


# ----- MCP search_engines and `engines --json` -----
async def test_mcp_search_engines_returns_the_fields_of_engines_json(capsys, monkeypatch):
    pytest.importorskip("mcp")
    from mcp import Client

    from plugin.surfaces.cli import main
    from plugin.surfaces.mcp_server import build_server

    import asyncio

    assert await asyncio.to_thread(main, ["engines", "--json"]) == 0  # the CLI runs its own event loop
    cli_rows = json.loads(capsys.readouterr().out)
    async with Client(build_server(Settings(state_backend="memory"))) as client:
        result = await client.call_tool("search_engines", {})
    mcp_rows = result.structured_content["engines"]
    assert [set(row) for row in mcp_rows] == [set(row) for row in cli_rows]
    assert mcp_rows == cli_rows
    assert json.loads(result.content[0].text)["engines"] == cli_rows


# ----- --check-floors says that the floors hold -----
def test_the_floors_verdict_says_when_they_hold(capsys):
    from plugin.bench.evaluation import floors_verdict

    assert floors_verdict([], "bench/floors.json", checked=7) == 0
    assert "floors hold" in capsys.readouterr().err
    assert floors_verdict(["ours p@8 = 0.1 is below the floor 0.5"], "bench/floors.json", checked=7) == 1
    err = capsys.readouterr().err
    assert "below the floor" in err and "hold" not in err


# ----- wording -----
def test_one_result_is_one_result():
    from plugin.models import EngineReport, ResultRow, SearchResponse
    from plugin.surfaces.render import render_table

    row = ResultRow(title="Rust", url="https://rust-lang.org/", snippet="", domain="rust-lang.org",
                    engines=["bing"], score=1.0)
    one = SearchResponse(query="rust", results=[row], partial=False, elapsed_ms=3,
                         engines=[EngineReport(name="bing", tier="primary", status="ok")])
    assert "(1 result, 3 ms" in render_table(one)
    two = one.model_copy(update={"results": [row, row]})
    assert "(2 results, 3 ms" in render_table(two)


def test_row_counts_in_details_are_singular_when_one():
    from plugin.pipeline.filters import count

    assert count(1, "row") == "1 row" and count(2, "row") == "2 rows" and count(0, "row") == "0 rows"


@pytest.mark.parametrize(("url", "said", "not_said"), [
    (None, "url is required", None), ("  ", "url is required", None),
    (42, "url must be a string", "is required"), (["http://a.example"], "url must be a string", "is required"),
    ("example.com/page", "no scheme", "not no scheme"), ("ftp://example.com/x", "not ftp", None),
])
def test_url_errors_say_what_was_wrong(url, said, not_said):
    from plugin.reading.addresses import check_url

    with pytest.raises(SearchError) as caught:
        check_url(url, allow_private=False)
    assert caught.value.code == "invalid_url" and said in caught.value.message, caught.value.message
    assert not_said is None or not_said not in caught.value.message, caught.value.message
