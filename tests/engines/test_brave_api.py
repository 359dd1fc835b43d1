"""Brave Search API: conformance on recorded answers, request building, classification."""

from __future__ import annotations

import gzip
import json
from datetime import date

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.brave_api import ENGINE, URL, html_text, search_lang

# file -> (status, rows, first title, first URL, first date); the raw .json.gz is tested separately.
EXPECTED = {
    "bravesearchpythonclient__hello-world.json": (
        "ok", 20, '"Hello, World!" program - Wikipedia',
        "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program", date(2024, 12, 27)),
    "openwebui__python.json": ("ok", 20, "Welcome to Python.org", "https://www.python.org", date(2023, 9, 9)),
    "vulntrack__backslash__EMPTY.decoded.json": ("empty", 0, None, None, None),
}

KEY = "BSA-test-key-123"


def parse(body: bytes | str, status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=URL, status=status, headers=headers), "q",
                        SearchOptions(now=FIXED_NOW))


@pytest.mark.parametrize("name", corpus_cases("brave-api", "*.json"))
def test_corpus_conformance(name, options):
    assert name in EXPECTED, f"new corpus file {name}: add its expectations"
    status, count, title, url, when = EXPECTED[name]
    parsed = ENGINE.parse(response_from_bytes(corpus_path("brave-api", name).read_bytes(), url=URL), "q", options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    if count:
        assert parsed.rows[0].title == title
        assert parsed.rows[0].url == url
        assert parsed.rows[0].date == when
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title and row.url.startswith(("http://", "https://"))
        assert "<strong>" not in row.snippet and "&quot;" not in row.snippet and "&#x27;" not in row.snippet
        assert "<" not in row.title


def test_strong_markup_and_entities_are_stripped(options):
    parsed = ENGINE.parse(response_from_bytes(
        corpus_path("brave-api", "bravesearchpythonclient__hello-world.json").read_bytes()), "q", options)
    assert parsed.rows[0].snippet.startswith(
        'A "Hello, World!" program is usually a simple computer program that emits (or displays)')
    assert parsed.rows[2].snippet.startswith("Check out the new Transformers One theme of Hello World!")
    # page_age (absolute) wins over age ("4 days ago", relative to capture time).
    assert parsed.rows[0].date == date(2024, 12, 27)


def test_news_and_videos_are_not_rows(options):
    path = corpus_path("brave-api", "openwebui__python.json")
    data = json.loads(path.read_bytes())
    parsed = ENGINE.parse(response_from_bytes(path.read_bytes()), "q", options)
    news_urls = {item["url"] for item in data["news"]["results"]}
    video_urls = {item["url"] for item in data["videos"]["results"]}
    assert not news_urls & {row.url for row in parsed.rows}
    assert not video_urls & {row.url for row in parsed.rows}
    assert [row.url for row in parsed.rows] == [item["url"] for item in data["web"]["results"]]


def test_raw_gzip_body_does_not_crash():
    raw = corpus_path("brave-api", "vulntrack__backslash__EMPTY.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    parsed = ENGINE.parse(response_from_bytes(raw, url=URL), "\\", SearchOptions(now=FIXED_NOW))
    assert parsed.status == "error"
    assert "gzip" in parsed.detail
    # ... and decoded it is the empty answer.
    decoded = ENGINE.parse(response_from_bytes(gzip.decompress(raw), url=URL), "\\", SearchOptions(now=FIXED_NOW))
    assert decoded.status == "empty"


def test_html_text():
    assert html_text("The official home of the <strong>Python</strong> Programming Language") == \
        "The official home of the Python Programming Language"
    assert html_text("Tom &amp; Jerry&#x27;s  <strong>show</strong>") == "Tom & Jerry's show"
    assert html_text("plain  text") == "plain text"


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("hello world", SearchOptions(api_key=KEY))
    assert request.method == "GET"
    assert request.url == "https://api.search.brave.com/res/v1/web/search"
    assert request.params == (("q", "hello world"), ("count", "10"), ("safesearch", "moderate"))
    assert request.headers["X-Subscription-Token"] == KEY
    assert request.headers["Accept"] == "application/json"
    assert request.secrets == (KEY,)
    assert request.json is None and request.form is None


def test_build_all_options():
    options = SearchOptions(api_key=KEY, site="python.org", time_range="month", safesearch="strict",
                            region="en-GB", count=50)
    params = dict(ENGINE.build("tutorial", options).params)
    assert params == {"q": "tutorial site:python.org", "count": "20", "country": "GB", "search_lang": "en-gb",
                      "freshness": "pm", "safesearch": "strict"}


@pytest.mark.parametrize("time_range, code", [("day", "pd"), ("week", "pw"), ("month", "pm"), ("year", "py")])
def test_freshness(time_range, code):
    assert dict(ENGINE.build("q", SearchOptions(api_key=KEY, time_range=time_range)).params)["freshness"] == code


@pytest.mark.parametrize("safesearch", ["off", "moderate", "strict"])
def test_safesearch(safesearch):
    assert dict(ENGINE.build("q", SearchOptions(api_key=KEY, safesearch=safesearch)).params)["safesearch"] == safesearch


@pytest.mark.parametrize("region, lang, country", [
    ("zh-CN", "zh-hans", "CN"), ("zh-TW", "zh-hant", "TW"), ("ja-JP", "jp", "JP"), ("de-DE", "de", "DE"),
    ("en-US", "en", "US"), ("pt-BR", "pt-br", "BR"), ("zh-Hans-CN", "zh-hans", "CN"),
])
def test_region_mapping(region, lang, country):
    params = dict(ENGINE.build("q", SearchOptions(api_key=KEY, region=region)).params)
    assert params["search_lang"] == lang == search_lang(region)
    assert params["country"] == country


def test_region_without_country():
    params = dict(ENGINE.build("q", SearchOptions(api_key=KEY, region="fr")).params)
    assert params["search_lang"] == "fr" and "country" not in params


# --- classification ----------------------------------------------------------

def test_empty_web_results():
    parsed = parse('{"type":"search","query":{"original":"zzqx"},"web":{"type":"search","results":[]}}')
    assert parsed.status == "empty"


def test_search_answer_with_only_other_sections_is_empty():
    parsed = parse('{"type":"search","query":{"original":"x"},"news":{"type":"news","results":'
                   '[{"title":"N","url":"https://news.example/"}]}}')
    assert parsed.status == "empty"
    assert parsed.rows == ()


def test_token_invalid_422_is_key_rejected():
    body = ('{"type":"ErrorResponse","error":{"id":"x","status":422,"code":"SUBSCRIPTION_TOKEN_INVALID",'
            '"detail":"The provided subscription token is invalid.","meta":{}},"time":1}')
    parsed = parse(body, status=422)
    assert parsed.status == "error"
    assert parsed.detail.startswith("API key rejected (HTTP 422)")
    assert "SUBSCRIPTION_TOKEN_INVALID" in parsed.detail


@pytest.mark.parametrize("status", [401, 403])
def test_401_403_key_rejected(status):
    parsed = parse('{"type":"ErrorResponse","error":{"code":"UNAUTHORIZED"}}', status=status)
    assert parsed.status == "error"
    assert parsed.detail.startswith(f"API key rejected (HTTP {status})")


def test_validation_422_is_plain_error():
    body = ('{"type":"ErrorResponse","error":{"status":422,"code":"VALIDATION",'
            '"detail":"Unable to validate request parameter(s)"}}')
    parsed = parse(body, status=422)
    assert parsed.status == "error"
    assert parsed.detail == "HTTP 422: VALIDATION Unable to validate request parameter(s)"


def test_429_uses_retry_after_or_rate_limit_reset():
    body = ('{"type":"ErrorResponse","error":{"status":429,"code":"RATE_LIMITED",'
            '"detail":"Request rate limit exceeded"}}')
    parsed = parse(body, status=429, headers={"Retry-After": "2"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 2.0)
    parsed = parse(body, status=429, headers={"X-RateLimit-Remaining": "0, 1500", "X-RateLimit-Reset": "1, 1419704"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 1.0)


def test_monthly_quota():
    body = '{"type":"ErrorResponse","error":{"status":429,"code":"QUOTA_LIMITED","detail":"Quota exceeded"}}'
    parsed = parse(body, status=429, headers={"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 86400"})
    assert parsed.status == "ratelimited"
    assert "quota" in parsed.detail
    assert parsed.retry_after == 86400.0
    assert parse("{}", status=402).status == "ratelimited"
