"""Reading pages through every surface: the MCP tool driven by the SDK's own client, the CLI (exit codes),
the HTTP service and the exported schemas. Pages are served by loopback stand-ins on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from pages import ARTICLE_PARAGRAPHS, ROBOTS_OPEN, article_html, paths, routes
from standins import bing_page, page

ROOT = Path(__file__).resolve().parents[1]


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("METASEARCH_")}
    base.update({"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
                 "METASEARCH_STATE_DIR": os.environ["METASEARCH_STATE_DIR"], "METASEARCH_CACHE_TTL_S": "0",
                 "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", "METASEARCH_FETCH_HOST_INTERVAL_MS": "0", **extra})
    return base


async def test_web_fetch_over_mcp(standins):
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    shell = "<html><body><div id='root'></div><noscript>Please enable JavaScript.</noscript><script src='/a.js'></script></body></html>"
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html()),
                                  "/robots-only": page("x"), "/spa": page(shell)}))
    engine = await standins(page(bing_page([("How async Rust works", site.url + "/post", "async rust explained")])))
    params = StdioServerParameters(command=sys.executable, args=["-m", "plugin.surfaces.cli", "mcp"], cwd=str(ROOT),
                                   env=env(METASEARCH_ENDPOINTS=json.dumps({"bing": engine.url}),
                                           METASEARCH_ENGINES=json.dumps(["bing"])))
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        fetch = tools["web_fetch"]
        assert fetch.input_schema["required"] == ["url"]
        assert set(fetch.input_schema["properties"]) == {"url", "max_chars", "offset", "format", "query", "passages",
                                                         "max_tokens", "render"}
        assert fetch.output_schema is not None
        assert set(fetch.output_schema["properties"]) >= {"content", "next_offset", "truncated", "total_chars"}
        assert "read" in tools["web_search"].input_schema["properties"]

        first = await client.call_tool("web_fetch", {"url": site.url + "/post", "max_chars": 400})
        assert not first.is_error
        data = first.structured_content
        assert data["title"] == "How async Rust works" and data["truncated"] is True
        assert data["content"].startswith("# How async Rust works") and data["next_offset"] <= 400
        text = first.content[0].text
        assert "<untrusted_web_page>" in text and "untrusted" in text.split("<untrusted_web_page>")[0]
        assert f"offset={data['next_offset']}" in text

        second = await client.call_tool("web_fetch", {"url": site.url + "/post", "offset": data["next_offset"],
                                                      "max_chars": 100000})
        assert second.structured_content["cached"] is True and second.structured_content["truncated"] is False
        assert paths(site) == ["/robots.txt", "/post"]  # the second slice came from the page cache

        searched = await client.call_tool("web_search", {"query": "async rust", "read": 1})
        row = searched.structured_content["results"][0]
        assert ARTICLE_PARAGRAPHS[0] in row["content"] and "page text:" in searched.content[0].text

        spa = await client.call_tool("web_fetch", {"url": site.url + "/spa", "render": "never"})
        assert spa.structured_content["may_require_js"] is True and spa.structured_content["rendered"] is False
        assert "warning: the page looks built by scripts" in spa.content[0].text

        bad = await client.call_tool("web_fetch", {"url": "ftp://example.com/x"})
        assert bad.is_error and json.loads(bad.content[0].text)["error"]["code"] == "invalid_url"
        missing = await client.call_tool("web_fetch", {"url": site.url + "/nothing-here"})
        error = json.loads(missing.content[0].text)["error"]
        assert missing.is_error and error["code"] == "http_error" and error["status"] == 404
        bad = await client.call_tool("web_fetch", {"url": site.url + "/post", "format": "pdf"})
        assert bad.is_error and json.loads(bad.content[0].text)["error"]["code"] == "invalid_parameter"


async def run_cli(*args: str, **extra_env: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "plugin.surfaces.cli", *args, cwd=ROOT, env=env(**extra_env),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_cli_fetch_and_its_exit_codes(standins):
    site = await standins(routes({"/robots.txt": page("User-agent: *\nDisallow: /private\n", content_type="text/plain"),
                                  "/post": page(article_html()), "/private": page(article_html())}))
    code, out, _ = await run_cli("fetch", site.url + "/post", "--json", "--max-chars", "300")
    assert code == 0
    data = json.loads(out)
    assert data["truncated"] and data["content"].startswith("# How async Rust works")
    code, out, _ = await run_cli("fetch", site.url + "/post", "--offset", str(data["next_offset"]), "--format", "text")
    assert code == 0 and "work-stealing" in out and "read on with --offset" not in out

    code, out, _ = await run_cli("fetch", "notaurl", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_url"
    code, out, _ = await run_cli("fetch", site.url + "/post", "--max-chars", "lots", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"
    code, out, _ = await run_cli("fetch", site.url + "/missing", "--json")
    assert code == 3 and json.loads(out)["error"] == {"code": "http_error", "message": "the page answered HTTP 404",
                                                        "status": 404, "url": site.url + "/missing"}
    code, out, err = await run_cli("fetch", site.url + "/private")
    assert code == 3 and "blocked_by_robots" in err and out == ""
    code, out, _ = await run_cli("fetch", site.url + "/private", "--ignore-robots", "--json")
    assert code == 0 and json.loads(out)["status"] == 200
    # Without the opt-in, a loopback page is refused: exit 3, private_address.
    code, out, _ = await run_cli("fetch", site.url + "/post", "--json", METASEARCH_ALLOW_PRIVATE_HOSTS="0")
    assert code == 3 and json.loads(out)["error"]["code"] == "private_address"


async def test_http_service_fetch(standins):
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.settings import Settings
    from plugin.surfaces.service import build_app

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html()),
                                  "/gone": page("gone", status=410)}))
    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0)
    async with TestClient(TestServer(build_app(settings))) as client:
        ok = await client.get("/fetch", params={"url": site.url + "/post", "max_chars": "500", "format": "text"})
        assert ok.status == 200
        data = await ok.json()
        assert data["truncated"] and data["title"] == "How async Rust works" and "#" not in data["content"][:3]
        for params, status, code in (({"url": "gopher://x"}, 400, "invalid_url"), ({}, 400, "invalid_url"),
                                     ({"url": site.url + "/post", "offset": "-3"}, 400, "invalid_parameter"),
                                     ({"url": site.url + "/gone"}, 502, "http_error")):
            answer = await client.get("/fetch", params=params)
            assert answer.status == status and (await answer.json())["error"]["code"] == code
    strict = Settings(state_backend="memory")
    async with TestClient(TestServer(build_app(strict))) as client:
        answer = await client.get("/fetch", params={"url": site.url + "/post"})
        assert answer.status == 403 and (await answer.json())["error"]["code"] == "private_address"


def test_schema_exports_web_fetch():
    from plugin.surfaces.cli import main
    from plugin.surfaces.schemas import tool_schema

    mcp = tool_schema("mcp", "web_fetch")
    assert mcp["name"] == "web_fetch" and mcp["inputSchema"]["required"] == ["url"]
    assert mcp["inputSchema"]["properties"]["format"]["enum"] == ["markdown", "text"]
    assert list(mcp["outputSchema"]["properties"]) == [
        "url", "final_url", "status", "content_type", "title", "published", "content", "offset", "next_offset",
        "total_chars", "truncated", "cached", "elapsed_ms", "queue_ms", "warnings", "query", "passages", "omitted", "tokens",
        "rendered", "may_require_js"]
    assert tool_schema("openai", "web_fetch")["function"]["name"] == "web_fetch"
    assert tool_schema("anthropic", "web_fetch")["input_schema"]["properties"]["offset"]["minimum"] == 0
    assert tool_schema("openai")["function"]["name"] == "web_search"
    assert main(["schema", "--format", "anthropic", "--tool", "web_fetch"]) == 0


async def test_search_with_read_takes_render_on_every_surface(standins):
    """`render` reaches a search's reads from the CLI (`--render`), MCP (`web_search(render=)`) and HTTP
    (`/search?render=`) as it does from Python: `never` leaves a shell unrendered and says so; a value that
    is none of auto, always, never is invalid_parameter on each."""
    pytest.importorskip("mcp")
    from aiohttp.test_utils import TestClient, TestServer
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from plugin.settings import Settings
    from plugin.surfaces.service import build_app

    shell = "<html><body><div id='root'></div><noscript>Please enable JavaScript.</noscript><script src='/a.js'></script></body></html>"
    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/spa": page(shell)}))
    engine = await standins(page(bing_page([("Keepers ledger", site.url + "/spa", "lighthouse keepers ledger")])))
    query = "lighthouse keepers ledger"

    def unrendered(data: dict) -> None:
        row = data["results"][0]
        assert row["url"] == site.url + "/spa" and row["rendered"] is False and row["may_require_js"] is True
        assert any("render=never" in w for w in data["warnings"]), data["warnings"]

    code, out, err = await run_cli("search", query, "--engines", "bing", "--endpoint", f"bing={engine.url}",
                                   "--read", "1", "--render", "never", "--json", "--no-cache")
    assert code == 0, err
    unrendered(json.loads(out))
    code, out, _ = await run_cli("search", query, "--engines", "bing", "--endpoint", f"bing={engine.url}",
                                 "--read", "1", "--render", "sometimes", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_parameter"

    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                        engines=["bing"], endpoints={"bing": engine.url})
    async with TestClient(TestServer(build_app(settings))) as client:
        answer = await client.get("/search", params={"q": query, "read": "1", "render": "never"})
        assert answer.status == 200
        unrendered(await answer.json())
        answer = await client.get("/search", params={"q": query, "read": "1", "render": "sometimes"})
        assert answer.status == 400 and (await answer.json())["error"]["code"] == "invalid_parameter"

    params = StdioServerParameters(command=sys.executable, args=["-m", "plugin.surfaces.cli", "mcp"], cwd=str(ROOT),
                                   env=env(METASEARCH_ENDPOINTS=json.dumps({"bing": engine.url}),
                                           METASEARCH_ENGINES=json.dumps(["bing"])))
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["web_search"].input_schema["properties"]["render"]["anyOf"][0]["enum"] == ["auto", "always", "never"]
        searched = await client.call_tool("web_search", {"query": query, "read": 1, "render": "never"})
        assert not searched.is_error
        unrendered(searched.structured_content)
        bad = await client.call_tool("web_search", {"query": query, "read": 1, "render": "sometimes"})
        assert bad.is_error and json.loads(bad.content[0].text)["error"]["code"] == "invalid_parameter"
