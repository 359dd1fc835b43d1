"""Tavily: conformance on recorded API answers, request building, classification."""

from __future__ import annotations

import json
from datetime import date

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.tavily import ENGINE, URL

# file -> (status, rows, first title, first URL)
EXPECTED = {
    "pydanticai__attention-mechanisms.json": (
        "ok", 2, "[2601.03329] Attention mechanisms in neural networks", "https://arxiv.org/abs/2601.03329"),
    "pydanticai__transformer-architectures.json": (
        "ok", 5, "Deep Dive into Transformer Architectures for Long-Term ...", "https://arxiv.org/abs/2507.13043"),
    "pydanticai__what-is-pydantic-ai.json": (
        "ok", 5, "Pydantic AI: Agent Framework",
        "https://medium.com/ai-agent-insider/pydantic-ai-agent-framework-02b138e8db71"),
    "shouldiquit__linkedin-url-query.json": (
        "ok", 1, "Clement Lork - Data Science | AI | Empathy", "https://sg.linkedin.com/in/clement-lork"),
}

KEY = "tvly-test-key-123"


def parse(body: bytes | str, status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=URL, status=status, headers=headers), "q",
                        SearchOptions(now=FIXED_NOW))


def assert_sane(parsed):
    assert [row.position for row in parsed.rows] == list(range(1, len(parsed.rows) + 1))
    for row in parsed.rows:
        assert row.title and row.title == row.title.strip()
        assert row.url.startswith(("http://", "https://")), row.url
        assert len(row.snippet) <= 401 and "\n" not in row.snippet


@pytest.mark.parametrize("name", corpus_cases("tavily", "*.json"))
def test_corpus_conformance(name, options):
    assert name in EXPECTED, f"new corpus file {name}: add its expectations"
    status, count, title, url = EXPECTED[name]
    parsed = ENGINE.parse(response_from_bytes(corpus_path("tavily", name).read_bytes(), url=URL), "q", options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == title
    assert parsed.rows[0].url == url
    assert_sane(parsed)


def test_answer_is_not_a_row(options):
    path = corpus_path("tavily", "shouldiquit__linkedin-url-query.json")
    data = json.loads(path.read_bytes())
    assert data["answer"]  # the recorded response does carry an answer
    parsed = ENGINE.parse(response_from_bytes(path.read_bytes(), url=URL), "q", options)
    assert len(parsed.rows) == 1
    assert data["answer"][:40] not in parsed.rows[0].snippet
    # The snippet is `content`, not `raw_content` (page markdown), and loses its leading bullet.
    assert parsed.rows[0].snippet.startswith("The Hand Problem Nobody’s Talking About")
    assert "Sembcorp" not in parsed.rows[0].snippet


def test_markdown_left_in_content_is_cleaned(options):
    parsed = ENGINE.parse(response_from_bytes(
        corpus_path("tavily", "pydanticai__what-is-pydantic-ai.json").read_bytes(), url=URL), "q", options)
    first = parsed.rows[0].snippet
    assert first.startswith("AI Agent Insider. Pydantic AI: Agent Framework. Introducing Pydantic AI")
    assert "#" not in first and "**" not in first


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("What is Pydantic AI?", SearchOptions(api_key=KEY))
    assert request.method == "POST"
    assert request.url == "https://api.tavily.com/search"
    assert request.json == {"query": "What is Pydantic AI?", "max_results": 10, "search_depth": "basic",
                            "topic": "general"}
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.secrets == (KEY,)


@pytest.mark.parametrize("time_range", ["day", "week", "month", "year"])
def test_build_time_range(time_range):
    body = ENGINE.build("q", SearchOptions(api_key=KEY, time_range=time_range)).json
    assert body["time_range"] == time_range


def test_build_site_and_count():
    body = ENGINE.build("attention", SearchOptions(api_key=KEY, site="arxiv.org", count=50)).json
    assert body["include_domains"] == ["arxiv.org"]
    assert body["query"] == "attention"
    assert body["max_results"] == 20
    assert ENGINE.build("q", SearchOptions(api_key=KEY, count=0)).json["max_results"] == 1


# --- classification ----------------------------------------------------------

def test_empty_results():
    parsed = parse('{"query":"zzqx","answer":null,"images":[],"results":[],"response_time":0.5}')
    assert parsed.status == "empty"


def test_published_date_is_read():
    parsed = parse(json.dumps({"results": [
        {"title": "News", "url": "https://news.example/a", "content": "c",
         "published_date": "Mon, 23 Nov 2026 10:00:00 GMT"},
        {"title": "Other", "url": "https://news.example/b", "content": "c", "published_date": "2026-11-20"},
    ]}))
    assert [row.date for row in parsed.rows] == [date(2026, 11, 23), date(2026, 11, 20)]


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key(status):
    parsed = parse('{"detail":{"error":"Unauthorized: missing or invalid API key."}}', status=status)
    assert parsed.status == "error"
    assert parsed.detail.startswith(f"API key rejected (HTTP {status})")
    assert "invalid API key" in parsed.detail


@pytest.mark.parametrize("status", [402, 432, 433])
def test_plan_limits_are_quota(status):
    parsed = parse('{"detail":{"error":"This request exceeds your plan\'s set usage limit."}}', status=status)
    assert parsed.status == "ratelimited"
    assert "quota" in parsed.detail and f"HTTP {status}" in parsed.detail


def test_429_retry_after():
    parsed = parse('{"detail":{"error":"Rate limit exceeded"}}', status=429, headers={"Retry-After": "12"})
    assert parsed.status == "ratelimited"
    assert parsed.retry_after == 12.0


def test_bad_request_keeps_message():
    parsed = parse('{"detail":{"error":"Invalid time_range"}}', status=400)
    assert parsed.status == "error"
    assert parsed.detail == "HTTP 400: Invalid time_range"


def test_a_cloudflare_interstitial_instead_of_json_is_blocked():
    parsed = parse(b"<!DOCTYPE html><html><title>Just a moment...</title></html>")
    assert parsed.status == "blocked" and "just a moment" in parsed.detail
