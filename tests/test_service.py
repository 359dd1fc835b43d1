"""`metasearch serve`: GET /search takes exactly its documented parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.surfaces.service import build_app, search_parameters
from standins import bing_page, page

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("Python docs", "https://docs.python.org/3/", "python documentation")]


async def test_search_refuses_parameters_it_does_not_take(standins):
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"])
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        response = await client.get("/search", params={"q": "python documentation", "lmit": "3"})
        assert response.status == 400
        error = (await response.json())["error"]
        assert error["code"] == "invalid_parameter" and "lmit (did you mean limit?)" in error["message"]
        assert len(engine.requests) == 0
        response = await client.get("/search?q=python+documentation&engines=bing&engines=bing&limit=3&no_cache=1")
        assert response.status == 200, await response.text()
        assert (await response.json())["results"][0]["url"] == "https://docs.python.org/3/"


def test_every_search_parameter_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("#### GET /search parameters"):]
    section = section[:section.index("\n#")]
    documented = set(re.findall(r"^\| `([a-z_]+)`", section, flags=re.M))
    assert documented == set(search_parameters()), documented ^ set(search_parameters())
    assert json.dumps(sorted(documented))  # the table is not empty


async def test_both_endpoints_refuse_unknown_repeated_and_ambiguous_parameters(standins):
    """/fetch used to ignore what it did not know (`max_char=100` read 20,000 characters, `ignore_robots=1`
    was dropped) and /search used the first of `q=x&q=y` (issue 21, item 11): each is invalid_parameter
    now, before any engine or page is asked."""
    engine = await standins(page(bing_page(ROWS)))
    settings = Settings(endpoints={"bing": engine.url}, engines=["bing"], cache_ttl_s=300)
    url = "http://example.org/post"
    refused = [
        ("/fetch", [("url", url), ("max_char", "100")], "max_char (did you mean max_chars?)"),
        ("/fetch", [("url", url), ("ignore_robots", "1")], "ignore_robots"),
        ("/fetch", [("url", url), ("url", "http://example.org/other")], "url more than once"),
        ("/search", [("q", "x"), ("q", "y")], "q more than once"),
        ("/search", [("q", "A"), ("query", "B")], "both q and query"),
        ("/search", [("q", "x"), ("limit", "3"), ("limit", "5")], "limit more than once"),
        ("/search", [("q", "x"), ("no_cache", "maybe")], "no_cache must be one of"),
    ]
    async with TestClient(TestServer(build_app(settings, Searcher(settings)))) as client:
        for path, params, said in refused:
            response = await client.get(path, params=params)
            error = (await response.json())["error"]
            assert response.status == 400 and error["code"] == "invalid_parameter", (path, params, error)
            assert said in error["message"], (said, error["message"])
        assert len(engine.requests) == 0
        for flag, cached in (("true", False), ("0", True), ("no", True), ("YES", False)):
            response = await client.get("/search", params={"q": "python documentation", "no_cache": flag})
            assert response.status == 200 and (await response.json())["cached"] is cached, flag
