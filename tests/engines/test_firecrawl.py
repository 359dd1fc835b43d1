"""Firecrawl search: conformance on the recorded v2 answer, request building, classification."""

from __future__ import annotations

import json

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.firecrawl import ENGINE, URL

# file -> (status, rows, first title, first URL)
EXPECTED = {
    "crewai__firecrawl.json": ("ok", 5, "Firecrawl - The Web Data API for AI", "https://www.firecrawl.dev/"),
}

KEY = "fc-test-key-123"


def parse(body: bytes | str, status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=URL, status=status, headers=headers), "q",
                        SearchOptions(now=FIXED_NOW))


@pytest.mark.parametrize("name", corpus_cases("firecrawl", "*.json"))
def test_corpus_conformance(name, options):
    assert name in EXPECTED, f"new corpus file {name}: add its expectations"
    status, count, title, url = EXPECTED[name]
    parsed = ENGINE.parse(response_from_bytes(corpus_path("firecrawl", name).read_bytes(), url=URL), "q", options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == title
    assert parsed.rows[0].url == url
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title and row.url.startswith(("http://", "https://"))


def test_markdown_is_not_the_snippet(options):
    path = corpus_path("firecrawl", "crewai__firecrawl.json")
    data = json.loads(path.read_bytes())
    parsed = ENGINE.parse(response_from_bytes(path.read_bytes()), "q", options)
    assert [row.url for row in parsed.rows] == [
        "https://www.firecrawl.dev/", "https://github.com/firecrawl/firecrawl", "https://x.com/firecrawl_dev?lang=en",
        "https://github.com/firecrawl", "https://www.linkedin.com/company/firecrawl"]
    for row, raw in zip(parsed.rows, data["data"]["web"]):
        assert row.snippet == " ".join(raw["description"].split())
        assert len(row.snippet) <= 401
        assert "Skip to content" not in row.snippet  # page markdown starts like that
    assert parsed.rows[0].snippet.startswith("The web crawling, scraping, and search API for AI.")


def test_v1_shape_is_accepted():
    body = json.dumps({"success": True, "data": [
        {"url": "https://a.example/", "title": "A", "description": "first", "markdown": "# A\n\nlong page"},
        {"metadata": {"title": "B from metadata", "sourceURL": "https://b.example/", "description": "second"}},
    ]})
    parsed = parse(body)
    assert parsed.status == "ok"
    assert [(row.title, row.url, row.snippet) for row in parsed.rows] == [
        ("A", "https://a.example/", "first"), ("B from metadata", "https://b.example/", "second")]


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("firecrawl", SearchOptions(api_key=KEY))
    assert request.method == "POST"
    assert request.url == "https://api.firecrawl.dev/v2/search"
    assert request.json == {"query": "firecrawl", "limit": 10, "sources": ["web"]}
    assert "scrapeOptions" not in request.json
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.secrets == (KEY,)


def test_build_all_options():
    options = SearchOptions(api_key=KEY, site="github.com", time_range="week", region="de-DE", count=500)
    assert ENGINE.build("crawler", options).json == {
        "query": "crawler site:github.com", "limit": 100, "sources": ["web"], "tbs": "qdr:w", "country": "DE"}


@pytest.mark.parametrize("time_range, tbs", [("day", "qdr:d"), ("week", "qdr:w"), ("month", "qdr:m"),
                                             ("year", "qdr:y")])
def test_tbs(time_range, tbs):
    assert ENGINE.build("q", SearchOptions(api_key=KEY, time_range=time_range)).json["tbs"] == tbs


def test_region_without_country_adds_nothing():
    assert "country" not in ENGINE.build("q", SearchOptions(api_key=KEY, region="de")).json
    assert ENGINE.build("q", SearchOptions(api_key=KEY, region="zh-Hant-TW")).json["country"] == "TW"


# --- classification ----------------------------------------------------------

@pytest.mark.parametrize("body", ['{"success":true,"data":{"web":[]},"creditsUsed":1}',
                                  '{"success":true,"data":[]}',
                                  '{"success":true,"data":{"news":[]}}'])
def test_empty(body):
    assert parse(body).status == "empty"


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key(status):
    parsed = parse('{"success":false,"error":"Unauthorized: Invalid token"}', status=status)
    assert parsed.status == "error"
    assert parsed.detail.startswith(f"API key rejected (HTTP {status})")


def test_402_is_quota():
    parsed = parse('{"success":false,"error":"Insufficient credits to perform this request."}', status=402)
    assert parsed.status == "ratelimited"
    assert "quota" in parsed.detail


def test_429_retry_after():
    parsed = parse('{"success":false,"error":"Rate limit exceeded."}', status=429, headers={"Retry-After": "7"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 7.0)


def test_success_false_with_200():
    parsed = parse('{"success":false,"error":"Search engine unavailable"}')
    assert parsed.status == "error"
    assert parsed.detail == "Firecrawl error: Search engine unavailable"


def test_page_markdown_becomes_the_row_content(options):
    path = corpus_path("firecrawl", "crewai__firecrawl.json")
    data = json.loads(path.read_bytes())
    parsed = ENGINE.parse(response_from_bytes(path.read_bytes()), "q", options)
    # x.com and linkedin.com came back without markdown: no content.
    assert [row.content for row in parsed.rows] == [raw.get("markdown") or None for raw in data["data"]["web"]]
    assert parsed.rows[0].content.startswith("We just raised our Series A") and parsed.rows[2].content is None
