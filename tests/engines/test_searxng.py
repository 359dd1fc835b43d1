"""SearXNG (self-hosted, JSON API): conformance, request building, classification."""

from __future__ import annotations

import json
from datetime import date

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.searxng import ENGINE, base_of

INSTANCE = "https://searx.example.org"
# file -> (status, rows, first title, first URL)
EXPECTED = {
    "openwebui__python.json": ("ok", 30, "Welcome to Python.org", "https://www.python.org/"),
}


def opts(**kwargs) -> SearchOptions:
    kwargs.setdefault("base_url", INSTANCE)
    kwargs.setdefault("now", FIXED_NOW)
    return SearchOptions(**kwargs)


def parse(body: bytes | str, status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=INSTANCE + "/search", status=status, headers=headers), "q",
                        opts())


@pytest.mark.parametrize("name", corpus_cases("searxng", "*.json"))
def test_corpus_conformance(name, options):
    assert name in EXPECTED, f"new corpus file {name}: add its expectations"
    status, count, title, url = EXPECTED[name]
    parsed = ENGINE.parse(response_from_bytes(corpus_path("searxng", name).read_bytes(), url=INSTANCE + "/search"),
                          "python", options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == title
    assert parsed.rows[0].url == url
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title and row.url.startswith(("http://", "https://"))


def test_rows_keep_instance_order_and_infobox_is_not_a_row(options):
    raw = corpus_path("searxng", "openwebui__python.json").read_bytes()
    data = json.loads(raw)
    parsed = ENGINE.parse(response_from_bytes(raw), "python", options)
    assert [row.url for row in parsed.rows] == [item["url"] for item in data["results"]]
    assert data["infoboxes"]  # the page has one; it is not a row beyond the results list
    # Bing's "3 days ago · …" prefix, relayed by SearXNG, becomes a date relative to `now`.
    tutorial = parsed.rows[2]
    assert tutorial.url == "https://docs.python.org/3/tutorial/index.html"
    assert tutorial.snippet.startswith("3 days ago · Python is an easy to learn")
    assert tutorial.date == date(2026, 11, 26)
    assert parsed.rows[0].date is None


def test_published_date_and_wrapped_url():
    body = json.dumps({"query": "x", "results": [
        {"title": "Dated", "url": "https://a.example/", "content": "c", "publishedDate": "2026-11-02T08:00:00"},
        {"title": "Wrapped", "url": "https://www.bing.com/ck/a?!&&p=abc&u=a1aHR0cHM6Ly9iLmV4YW1wbGUvcGFnZQ&ntb=1",
         "content": "", "publishedDate": None},
        {"title": "Relative", "url": "/local/path", "content": ""},
    ]})
    parsed = parse(body)
    assert [(row.title, row.url, row.date) for row in parsed.rows] == [
        ("Dated", "https://a.example/", date(2026, 11, 2)),
        ("Wrapped", "https://b.example/page", None),
    ]


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("python", opts())
    assert request.method == "GET"
    assert request.url == "https://searx.example.org/search"
    assert request.params == (("q", "python"), ("format", "json"), ("pageno", "1"), ("language", "auto"),
                              ("safesearch", "1"))
    assert request.secrets == ()
    assert request.headers["Accept"] == "application/json"


def test_build_path_prefix_and_options():
    options = opts(base_url="https://host.example/searx/", site="python.org", time_range="week",
                   safesearch="strict", region="zh-cn")
    request = ENGINE.build("教程", options)
    assert request.url == "https://host.example/searx/search"
    assert dict(request.params) == {"q": "教程 site:python.org", "format": "json", "pageno": "1",
                                    "language": "zh-CN", "time_range": "week", "safesearch": "2"}


@pytest.mark.parametrize("safesearch, level", [("off", "0"), ("moderate", "1"), ("strict", "2")])
def test_safesearch(safesearch, level):
    assert dict(ENGINE.build("q", opts(safesearch=safesearch)).params)["safesearch"] == level


@pytest.mark.parametrize("time_range", ["day", "week", "month", "year"])
def test_time_range(time_range):
    assert dict(ENGINE.build("q", opts(time_range=time_range)).params)["time_range"] == time_range


@pytest.mark.parametrize("given_url, base", [
    ("http://127.0.0.1:8888", "http://127.0.0.1:8888"), ("localhost:8888/", "http://localhost:8888"),
    ("https://h.example/searx/?x=1", "https://h.example/searx"),
])
def test_base_of(given_url, base):
    assert base_of(given_url) == base


@pytest.mark.parametrize("region, language", [("en-US", "en-US"), ("zh-Hans-CN", "zh-CN"), ("fr", "fr"),
                                              ("de_DE", "de-DE"), (None, "auto")])
def test_language(region, language):
    assert dict(ENGINE.build("q", opts(region=region)).params)["language"] == language


def test_build_without_base_url_refuses():
    with pytest.raises(ValueError, match="METASEARCH_SEARXNG_URL"):
        ENGINE.build("q", SearchOptions())


# --- classification ----------------------------------------------------------

def test_empty():
    body = ('{"query":"zzqx","number_of_results":0,"results":[],"answers":[],"corrections":[],'
            '"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}')
    assert parse(body).status == "empty"


def test_all_engines_failing_is_not_empty():
    body = ('{"query":"x","number_of_results":0,"results":[],"answers":[],"infoboxes":[],'
            '"unresponsive_engines":[["google","CAPTCHA"],["duckduckgo","timeout"]]}')
    parsed = parse(body)
    assert parsed.status == "error"
    assert "google: CAPTCHA" in parsed.detail and "duckduckgo: timeout" in parsed.detail


def test_json_disabled_403():
    parsed = parse("<html><body><h1>403 Forbidden</h1></body></html>", status=403)
    assert parsed.status == "error"
    assert "format=json is disabled" in parsed.detail


def test_limiter_429():
    parsed = parse("Too Many Requests", status=429, headers={"Retry-After": "60"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 60.0)


def test_html_page_is_not_understood():
    parsed = parse("<!DOCTYPE html><html><head><title>SearXNG</title></head><body>search</body></html>")
    assert parsed.status == "error"
    assert parsed.detail.startswith("page not understood: HTML page instead of JSON")
