"""Exa: conformance on recorded API answers, request building, classification."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime, timezone

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.exa import ENGINE, URL, clean_markdown, page_snippet, start_date

# file -> (status, rows, first title, first URL, first date)
EXPECTED = {
    "crewai__2025-autonomous-ai-agents-governance-ethical-concerns.json": (
        "ok", 10, "'AI agents' promise to arrange your finances, do your taxes, book ...",
        "https://theconversation.com/ai-agents-promise-to-arrange-your-finances-do-your-taxes-book-your-"
        "holidays-and-put-us-all-at-risk-247021", date(2025, 1, 15)),
    "crewai__2025-autonomous-ai-agents-learning-capabilities.json": (
        "ok", 10, "What are Autonomous AI Agents? A Complete Guide 2025",
        "https://kodexolabs.com/what-are-autonomous-ai-agents/", date(2025, 7, 31)),
    "crewai__recent-developments-in-autonomous-ai-agents-2025.json": (
        "ok", 10, "AI agents arrived in 2025 – here's what happened and the ...",
        "https://theconversation.com/ai-agents-arrived-in-2025-heres-what-happened-and-the-challenges-ahead-"
        "in-2026-272325", date(2025, 12, 29)),
    "pydanticai__what-is-pydantic-ai_highlights.json": (
        "ok", 2, "Pydantic AI | Pydantic Docs", "https://pydantic.dev/docs/ai/overview/", None),
    "pydanticai__what-is-pydantic-ai_text.json": (
        "ok", 1, "Index", "https://ai.pydantic.dev/examples/bank-support/index.md", None),
}

KEY = "exa-test-key-123"


def parse(body: bytes | str, status: int = 200, headers: dict | None = None, options=None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=URL, status=status, headers=headers), "q",
                        options or SearchOptions(now=FIXED_NOW))


def assert_sane(parsed):
    assert [row.position for row in parsed.rows] == list(range(1, len(parsed.rows) + 1))
    for row in parsed.rows:
        assert row.title.strip() == row.title and row.title
        assert row.url.startswith(("http://", "https://")), row.url
        assert len(row.snippet) <= 401
        assert "\n" not in row.snippet


@pytest.mark.parametrize("name", corpus_cases("exa", "*.json"))
def test_corpus_conformance(name, options):
    assert name in EXPECTED, f"new corpus file {name}: add its expectations"
    status, count, title, url, when = EXPECTED[name]
    parsed = ENGINE.parse(response_from_bytes(corpus_path("exa", name).read_bytes(), url=URL), "q", options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == title
    assert parsed.rows[0].url == url
    assert parsed.rows[0].date == when
    assert_sane(parsed)


def test_highlights_make_the_snippet(options):
    parsed = ENGINE.parse(response_from_bytes(
        corpus_path("exa", "pydanticai__what-is-pydantic-ai_highlights.json").read_bytes()), "q", options)
    first = parsed.rows[0].snippet
    # Exa's "\n...\n" joins become an ellipsis; markdown headings and backticks go.
    assert first.startswith("Pydantic AI … GenAI Agent Framework, the Pydantic way … Pydantic AI is a Python")
    assert "#" not in first and "`" not in first and "\n" not in first
    second = parsed.rows[1]
    assert second.date == date(2024, 6, 21)
    # Markdown links keep their words, lose their targets.
    assert "built on the foundation of Pydantic Validation and modern Python" in second.snippet
    assert "](https://" not in second.snippet


def test_page_text_snippet_skips_navigation(options):
    parsed = ENGINE.parse(response_from_bytes(
        corpus_path("exa", "crewai__2025-autonomous-ai-agents-learning-capabilities.json").read_bytes()),
        "q", options)
    rolus = parsed.rows[1]
    assert rolus.url.startswith("https://www.rolustech.com/blog/ai-agent-in-2025")
    assert "[Services]" not in rolus.snippet and "Salesforce Integration Services" not in rolus.snippet
    assert "The year 2025 is a defining moment" in rolus.snippet
    assert rolus.snippet.endswith("…") and len(rolus.snippet) <= 401


def test_markdown_cleaning_units():
    assert clean_markdown("## Title\n* [Link text](https://x.y) and ![img](a.png) **bold** &amp; more") == \
        "Title Link text and bold & more"
    text = ("[Home] \n[About us] \n* [Menu item]\n"
            "This is a real sentence of prose that says something useful about it.\n")
    assert page_snippet(text) == "This is a real sentence of prose that says something useful about it."


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("what is pydantic ai", SearchOptions(api_key=KEY, now=FIXED_NOW))
    assert request.method == "POST"
    assert request.url == "https://api.exa.ai/search"
    assert request.params == ()
    assert request.json == {
        "query": "what is pydantic ai",
        "numResults": 10,
        "type": "auto",
        "contents": {"highlights": {"maxCharacters": 800}},
    }
    assert request.headers["x-api-key"] == KEY
    assert request.headers["Content-Type"] == "application/json"
    assert request.secrets == (KEY,)


def test_build_site_time_region_count():
    options = SearchOptions(api_key=KEY, site="arxiv.org", time_range="week", region="en-GB", count=250,
                            now=datetime(2026, 11, 29, 12, 0, 0))
    body = ENGINE.build("agents", options).json
    assert body["query"] == "agents"  # site goes to includeDomains, not the query text
    assert body["includeDomains"] == ["arxiv.org"]
    assert body["startPublishedDate"] == "2026-11-22T12:00:00.000Z"
    assert body["userLocation"] == "GB"
    assert body["numResults"] == 100


@pytest.mark.parametrize("time_range, expected", [
    ("day", "2026-11-28T12:00:00.000Z"), ("week", "2026-11-22T12:00:00.000Z"),
    ("month", "2026-10-30T12:00:00.000Z"), ("year", "2025-11-29T12:00:00.000Z"),
])
def test_start_date(time_range, expected):
    assert start_date(time_range, datetime(2026, 11, 29, 12, 0, 0)) == expected
    # An aware `now` is converted to UTC first.
    aware = datetime(2026, 11, 29, 13, 0, 0, tzinfo=timezone.utc).astimezone()
    assert start_date(time_range, aware) == expected.replace("T12", "T13")


def test_no_key_no_secret():
    request = ENGINE.build("q", SearchOptions())
    assert request.secrets == ()


# --- classification ----------------------------------------------------------

def test_empty_results():
    parsed = parse(json.dumps({"requestId": "x", "results": [], "searchTime": 12.0}))
    assert parsed.status == "empty"


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key_is_an_error_not_a_block(status):
    parsed = parse('{"requestId":"x","error":"Invalid API key","tag":"INVALID_API_KEY"}', status=status)
    assert parsed.status == "error"
    assert parsed.detail.startswith(f"API key rejected (HTTP {status})")
    assert "Invalid API key" in parsed.detail


def test_payment_required_is_quota():
    parsed = parse('{"error":"You have run out of credits"}', status=402)
    assert parsed.status == "ratelimited"
    assert "quota" in parsed.detail


def test_429_with_retry_after():
    parsed = parse('{"error":"rate limit exceeded"}', status=429, headers={"Retry-After": "30"})
    assert parsed.status == "ratelimited"
    assert parsed.retry_after == 30.0


def test_server_error():
    parsed = parse("<html>Bad gateway</html>", status=502)
    assert parsed.status == "error"
    assert "HTTP 502" in parsed.detail


def test_row_without_highlights_or_text():
    parsed = parse(json.dumps({"results": [{"title": " A  title ", "url": "https://a.example/x",
                                             "publishedDate": "2026-11-01T00:00:00.000Z"}]}))
    assert parsed.status == "ok"
    assert parsed.rows[0].title == "A title"
    assert parsed.rows[0].snippet == ""
    assert parsed.rows[0].date == date(2026, 11, 1)


def test_summary_used_when_no_highlights():
    parsed = parse(json.dumps({"results": [{"title": "T", "url": "https://a.example/", "summary": "Short summary.",
                                             "text": "Long page text " * 50}]}))
    assert parsed.rows[0].snippet == "Short summary."


def test_page_text_becomes_the_row_content_as_sent(options):
    raw = json.loads(corpus_path("exa", "crewai__recent-developments-in-autonomous-ai-agents-2025.json").read_bytes())
    parsed = ENGINE.parse(response_from_bytes(json.dumps(raw).encode(), url=URL), "q", options)
    assert [row.content for row in parsed.rows] == [result["text"] for result in raw["results"]]
    # Rows are the same rows with or without the text: it is no part of their identity.
    assert parsed.rows[0] == dataclasses.replace(parsed.rows[0], content=None)
    assert "content" not in repr(parsed.rows[0])


def test_highlights_only_answer_has_no_content(options):
    parsed = ENGINE.parse(response_from_bytes(
        corpus_path("exa", "pydanticai__what-is-pydantic-ai_highlights.json").read_bytes()), "q", options)
    assert parsed.rows and all(row.content is None for row in parsed.rows)
    blank = parse(json.dumps({"results": [{"url": "https://a.example/", "title": "A", "text": "  \n "},
                                          {"url": "https://b.example/", "title": "B", "text": 42}]}))
    assert [row.content for row in blank.rows] == [None, None]
