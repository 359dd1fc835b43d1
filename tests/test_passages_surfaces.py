"""Passages, budgets and quotes through every surface (issue 22): the Python API, the CLI, the HTTP
service and the MCP server driven by the SDK's own client; offsets checked against fetch(offset=…),
budgets against the rendered text; search's read=N with passages; Anthropic search_result blocks and the
README's citing tool loop. Pages are served by loopback stand-ins on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from pages import ROBOTS_OPEN, article_html, paths, reading_settings as settings, routes
from plugin.models import FetchResponse
from plugin.reading.evidence import PAGE_FRAME_TOKENS
from plugin.reading.reader import Reader
from plugin.reading.tokens import estimate_tokens
from plugin.surfaces.render import anthropic_search_results, render_for_model, render_page_for_model
from standins import bing_page, page
from test_fetch_surfaces import env, run_cli

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How does a work-stealing scheduler keep every core busy?"
EXTRA = "".join(f"<h2>Part {i}</h2><p>Section {i} talks about topic number {i}. It has nothing on scheduling. "
                f"Filler sentence {i} follows here.</p>" for i in range(12))


async def site_with_article(standins):
    return await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html(EXTRA))}))


async def test_python_fetch_with_a_query_gives_passages_whose_offsets_read_back_exactly(standins):
    site = await site_with_article(standins)
    async with Reader(settings()) as reader:
        for fmt in ("markdown", "text"):
            answer = await reader.fetch(site.url + "/post", query=QUESTION, passages=4, format=fmt)
            assert answer.query == QUESTION and answer.content == "" and len(answer.passages) == 4
            assert "work-stealing scheduler" in answer.passages[0].text
            scores = [p.score for p in answer.passages]
            assert scores == sorted(scores, reverse=True)
            for passage in answer.passages:
                again = await reader.fetch(site.url + "/post", offset=passage.start, format=fmt,
                                           max_chars=passage.end - passage.start)
                assert again.content == passage.text and again.cached
            whole = await reader.fetch(site.url + "/post", format=fmt, max_chars=100000)
            assert all(whole.content[p.start:p.end] == p.text for p in answer.passages)
        assert paths(site) == ["/robots.txt", "/post", "/post"]  # one read per format, then the page cache
        top = (await reader.fetch(site.url + "/post", query="Part 7 topic")).passages[0]
        assert top.heading_path == ["How async Rust works", "Part 7"] and "topic number 7" in top.text


async def test_max_tokens_is_never_exceeded_and_omitted_says_how_to_read_on(standins):
    site = await site_with_article(standins)
    async with Reader(settings()) as reader:
        for budget in (300, 360, 500, 800, 5000):
            answer = await reader.fetch(site.url + "/post", query=QUESTION, passages=10, max_tokens=budget)
            rendered = render_page_for_model(answer)
            assert estimate_tokens(rendered) <= answer.tokens <= budget, (budget, estimate_tokens(rendered))
            if answer.omitted is not None:
                assert answer.omitted.passages == 10 - len(answer.passages) and answer.omitted.starts
                assert "left out" in rendered
            sliced = await reader.fetch(site.url + "/post", max_tokens=budget)
            assert estimate_tokens(render_page_for_model(sliced)) <= sliced.tokens <= budget
            if sliced.omitted is not None:
                assert sliced.truncated and sliced.omitted.next_offset == sliced.next_offset
                rest = await reader.fetch(site.url + "/post", offset=sliced.next_offset, max_chars=100000)
                assert sliced.content + rest.content == (await reader.fetch(site.url + "/post",
                                                                            max_chars=100000)).content
        by_chars = await reader.fetch(site.url + "/post", query=QUESTION, passages=10, max_chars=500)
        assert sum(len(p.text) for p in by_chars.passages) <= 500 and by_chars.omitted.passages > 0
        assert PAGE_FRAME_TOKENS < 300


async def test_bad_passage_arguments_are_invalid_parameter(standins):
    from plugin.errors import FetchError

    site = await site_with_article(standins)
    async with Reader(settings()) as reader:
        for arguments, parameter in (({"query": "  "}, "query"), ({"query": "x", "passages": 0}, "passages"),
                                     ({"query": "x", "passages": "many"}, "passages"),
                                     ({"max_tokens": -1}, "max_tokens"),
                                     ({"query": 3}, "query"), ({"max_tokens": 299}, "max_tokens")):
            with pytest.raises(FetchError) as caught:
                await reader.fetch(site.url + "/post", **arguments)
            assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == parameter


async def test_verify_through_python_from_the_page_cache(standins):
    from plugin.reading.verify import verify_with

    site = await site_with_article(standins)
    async with Reader(settings()) as reader:
        await reader.fetch(site.url + "/post", query=QUESTION)
        found = await verify_with(reader, site.url + "/post", "a WORK stealing scheduler moves tasks  between threads")
        assert found.found and found.cached and found.occurrences == 1
        whole = (await reader.fetch(site.url + "/post", max_chars=100000)).content
        assert whole[found.start:found.end] == found.text == "A work-stealing scheduler moves tasks between threads"
        assert found.sentence.startswith("A work-stealing scheduler") and found.sentence.endswith("uneven load.")
        assert whole[found.sentence_start:found.sentence_end] == found.sentence
        missing = await verify_with(reader, site.url + "/post", "a round-robin scheduler moves tasks")
        assert not missing.found and missing.start is None
    assert paths(site) == ["/robots.txt", "/post"]


async def test_the_public_verify_reads_through_the_shared_reader(standins):
    import plugin

    site = await site_with_article(standins)
    own = settings()
    page_first = await plugin.fetch(site.url + "/post", settings=own, query="cancellation")
    assert page_first.passages and "Cancellation is cooperative" in page_first.passages[0].text
    checked = await plugin.verify(site.url + "/post", "Cancellation is cooperative", settings=own)
    assert isinstance(checked, plugin.VerifyResponse) and checked.found and checked.cached


async def test_cli_fetch_query_and_verify(standins):
    site = await site_with_article(standins)
    code, out, _ = await run_cli("fetch", site.url + "/post", "--query", QUESTION, "--passages", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["passages"]) == 2 and set(data["passages"][0]) == {"text", "start", "end", "score", "heading_path"}
    code, out, _ = await run_cli("fetch", site.url + "/post", "--offset", str(data["passages"][0]["start"]),
                                 "--max-chars", str(data["passages"][0]["end"] - data["passages"][0]["start"]),
                                 "--json")
    assert code == 0 and json.loads(out)["content"] == data["passages"][0]["text"]
    code, out, _ = await run_cli("fetch", site.url + "/post", "--query", QUESTION, "--max-tokens", "350")
    assert code == 0 and "[1] characters" in out
    code, out, _ = await run_cli("verify", site.url + "/post", "dropping a future stops it", "--json")
    assert code == 0 and json.loads(out)["found"] is True
    code, out, _ = await run_cli("verify", site.url + "/post", "dropping a future restarts it")
    assert code == 1 and out.startswith("NOT FOUND")
    code, out, _ = await run_cli("fetch", site.url + "/post", "--query", QUESTION, "--passages", "none", "--json")
    assert code == 2 and json.loads(out)["error"]["parameter"] == "passages"


async def test_http_fetch_query_and_verify(standins):
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.surfaces.service import build_app

    site = await site_with_article(standins)
    async with TestClient(TestServer(build_app(settings()))) as client:
        answer = await client.get("/fetch", params={"url": site.url + "/post", "query": QUESTION, "passages": "3",
                                                    "max_tokens": "300"})
        assert answer.status == 200
        data = FetchResponse.model_validate(await answer.json())
        assert 1 <= len(data.passages) <= 3 and data.tokens <= 300
        first = data.passages[0]
        again = await client.get("/fetch", params={"url": site.url + "/post", "offset": str(first.start),
                                                   "max_chars": str(first.end - first.start)})
        assert (await again.json())["content"] == first.text
        checked = await client.get("/verify", params={"url": site.url + "/post", "quote": first.text})
        body = await checked.json()
        # Table pipes and spaces are not compared: the match is the passage from its first word to its last.
        assert checked.status == 200 and body["found"] and first.start <= body["start"] < body["end"] <= first.end
        bad = await client.get("/verify", params={"url": site.url + "/post", "quote": "x", "quite": "y"})
        assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_parameter"
        bad = await client.get("/verify", params={"url": site.url + "/post", "quote": "  "})
        assert bad.status == 400 and (await bad.json())["error"]["parameter"] == "quote"


async def test_mcp_web_fetch_with_a_query_and_web_verify(standins):
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    site = await site_with_article(standins)
    params = StdioServerParameters(command=sys.executable, args=["-m", "plugin.surfaces.cli", "mcp"], cwd=str(ROOT),
                                   env=env())
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools["web_verify"].input_schema["properties"]) == {"url", "quote", "format"}
        assert {"passages", "max_tokens"} <= set(tools["web_search"].input_schema["properties"])
        result = await client.call_tool("web_fetch", {"url": site.url + "/post", "query": QUESTION, "passages": 2})
        assert not result.is_error
        data = result.structured_content
        text = result.content[0].text
        first = data["passages"][0]
        assert f"[1] characters {first['start']}-{first['end']}" in text and "<untrusted_web_page>" in text
        checked = await client.call_tool("web_verify", {"url": site.url + "/post",
                                                         "quote": "Dropping a future stops it at its next await point"})
        assert not checked.is_error and checked.structured_content["found"] is True
        assert checked.structured_content["cached"] is True and checked.content[0].text.startswith("FOUND at")
        bad = await client.call_tool("web_verify", {"url": site.url + "/post"})
        assert bad.is_error and json.loads(bad.content[0].text)["error"]["code"] == "invalid_parameter"


async def test_search_reads_passages_and_fits_max_tokens(standins):
    from plugin.pipeline.searcher import Searcher

    site = await site_with_article(standins)
    rows = [("How async Rust works", site.url + "/post", "async rust scheduling explained")] + [
        (f"Other page {i}", f"https://example{i}.org/page", f"rust async scheduler notes number {i}") for i in range(6)]
    engine = await standins(page(bing_page(rows)))
    own = settings(engines=["bing"], endpoints={"bing": engine.url}, cache_ttl_s=0)
    async with Searcher(own) as searcher:
        full = await searcher.search("rust work-stealing scheduler", read=1, passages=2)
        row = full.results[0]
        assert row.content is None and len(row.passages) == 2 and "work-stealing" in row.passages[0].text
        page_text = (await searcher.page_reader().fetch(row.url, max_chars=100000)).content
        assert all(page_text[p.start:p.end] == p.text for p in row.passages)
        assert "[1.1] characters" in render_for_model(full)
        from plugin.surfaces.render import render_table

        assert f"[{row.passages[0].start}-{row.passages[0].end}]" in render_table(full)
        for budget in (300, 360, 500):
            packed = await searcher.search("rust work-stealing scheduler", read=1, passages=2, max_tokens=budget)
            assert estimate_tokens(render_for_model(packed)) <= budget, budget
            assert packed.omitted is not None and packed.omitted.rows + packed.omitted.passages > 0
        unread = await searcher.search("rust work-stealing scheduler", passages=2)
        assert any("passages has no effect without read" in w for w in unread.warnings)
        roomy = await searcher.search("rust work-stealing scheduler", read=1, passages=2, max_tokens=100000)
        assert roomy.omitted is None and len(roomy.results) == len(full.results)


def test_anthropic_search_result_blocks():
    import plugin.render

    from plugin.models import Passage, ResultRow, SearchResponse

    passage = Passage(text="Tokio is the most used runtime.", start=10, end=41, score=3.2, heading_path=["Runtimes"])
    rows = [ResultRow(title="Async", url="https://a.example/x", snippet="snip", domain="a.example", engines=["bing"],
                      score=1.0, passages=[passage]),
            ResultRow(title="Other", url="https://b.example/y", snippet="only a snippet", domain="b.example",
                      engines=["bing"], score=0.5)]
    response = SearchResponse(query="q", results=rows, engines=[], partial=False, elapsed_ms=1)
    blocks = plugin.render.anthropic_search_results(response)
    assert blocks == [
        {"type": "search_result", "source": "https://a.example/x", "title": "Async",
         "content": [{"type": "text", "text": "Tokio is the most used runtime."}], "citations": {"enabled": True}},
        {"type": "search_result", "source": "https://b.example/y", "title": "Other",
         "content": [{"type": "text", "text": "only a snippet"}], "citations": {"enabled": True}}]


def test_the_readme_citing_loop(monkeypatch):
    """The README's Anthropic loop with citations runs as written against a scripted client: the tool
    result is a list of search_result blocks with citations enabled."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("**Anthropic tool loop with citations**")
    block = re.search(r"```python\n(.*?)```", readme[start:], flags=re.S).group(1)

    requests: list[list[dict]] = []

    class Obj(types.SimpleNamespace):
        pass

    page_url = "https://docs.python.org/3/whatsnew/3.13.html"
    uses = [Obj(type="tool_use", id="toolu_0", name="web_fetch", input={"url": page_url, "query": "what is new"})]
    replies = [Obj(stop_reason="tool_use", content=uses),
               Obj(stop_reason="end_turn", content=[Obj(type="text", text="Python 3.13 adds a JIT.")])]

    def create(**kwargs):
        requests.append(list(kwargs["messages"]))
        return replies[len(requests) - 1]

    fake = types.ModuleType("anthropic")
    fake.Anthropic = lambda: Obj(messages=Obj(create=create))
    monkeypatch.setitem(sys.modules, "anthropic", fake)
    passage_page = FetchResponse(url=page_url, final_url=page_url, status=200, content_type="text/html",
                                 title="What's New In Python 3.13", content="", offset=0, next_offset=None,
                                 total_chars=900, truncated=False, elapsed_ms=1, query="what is new",
                                 passages=[{"text": "Python 3.13 adds an experimental JIT.", "start": 5, "end": 42,
                                            "score": 2.0}])
    import plugin

    monkeypatch.setattr(plugin, "fetch_sync", lambda **kwargs: passage_page, raising=False)
    exec(block, {"__name__": "readme"})
    results = requests[-1][-1]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "toolu_0"
    [result] = results[0]["content"]
    assert result["type"] == "search_result" and result["citations"] == {"enabled": True}
    assert result["source"] == page_url and result["content"][0]["text"] == "Python 3.13 adds an experimental JIT."
