"""Wikipedia search API: request building (zh/en by script, region override), parsing, classification.

The corpus has no Wikipedia page, so the responses below are HAND-WRITTEN in the
shape the MediaWiki API returns for action=query&list=search&formatversion=2
(searchinfo.totalhits, search[] with ns/title/pageid/snippet/timestamp, HTML
snippets with <span class="searchmatch">).
"""

from __future__ import annotations

import json
from datetime import date

import pytest
from conftest import FIXED_NOW, response_from_bytes

from engines.base import SearchOptions
from engines.wikipedia import ENGINE, article_url, snippet_text, wiki_language

HANDWRITTEN_EN = {
    "batchcomplete": True,
    "continue": {"sroffset": 3, "continue": "-||"},
    "query": {
        "searchinfo": {"totalhits": 10452},
        "search": [
            {"ns": 0, "title": "Python (programming language)", "pageid": 23862,
             "snippet": "<span class=\"searchmatch\">Python</span> is a high-level, general-purpose programming "
                        "language. Its design philosophy emphasizes code readability with the use of significant "
                        "indentation. <span class=\"searchmatch\">Python</span> is dynamically",
             "timestamp": "2026-11-20T14:03:11Z"},
            {"ns": 0, "title": "Monty Python", "pageid": 18942,
             "snippet": "<span class=\"searchmatch\">Monty</span> <span class=\"searchmatch\">Python</span> "
                        "(also collectively known as the <span class=\"searchmatch\">Pythons</span>) were a British "
                        "comedy troupe &amp; &quot;Flying Circus&quot;",
             "timestamp": "2026-10-02T09:15:40Z"},
            {"ns": 0, "title": "AT&T Python/C++ bindings?", "pageid": 99999991,
             "snippet": "", "timestamp": "2025-01-05T00:00:00Z"},
        ],
    },
}

HANDWRITTEN_ZH = {
    "batchcomplete": True,
    "query": {
        "searchinfo": {"totalhits": 3120},
        "search": [
            {"ns": 0, "title": "人工智能", "pageid": 23281,
             "snippet": "<span class=\"searchmatch\">人工智能</span>（英语：artificial intelligence，缩写为AI），"
                        "指由人製造出來的機器所表現出來的<span class=\"searchmatch\">智慧</span>。",
             "timestamp": "2026-11-25T03:21:09Z"},
            {"ns": 0, "title": "人工智能史", "pageid": 5551234,
             "snippet": "<span class=\"searchmatch\">人工智能</span>的历史源远流长。",
             "timestamp": "2026-08-14T11:00:00Z"},
        ],
    },
}

HANDWRITTEN_EMPTY = {"batchcomplete": True,
                     "query": {"searchinfo": {"totalhits": 0, "suggestion": "python", "suggestionsnippet": "python"},
                               "search": []}}


def parse(data, url="https://en.wikipedia.org/w/api.php?action=query", status=200, headers=None, query="python"):
    body = data if isinstance(data, bytes) else json.dumps(data, ensure_ascii=False).encode()
    return ENGINE.parse(response_from_bytes(body, url=url, status=status, headers=headers), query,
                        SearchOptions(now=FIXED_NOW))


# --- parsing -----------------------------------------------------------------

def test_english_response():
    parsed = parse(HANDWRITTEN_EN)
    assert parsed.status == "ok"
    assert [(row.position, row.title, row.url) for row in parsed.rows] == [
        (1, "Python (programming language)", "https://en.wikipedia.org/wiki/Python_(programming_language)"),
        (2, "Monty Python", "https://en.wikipedia.org/wiki/Monty_Python"),
        (3, "AT&T Python/C++ bindings?", "https://en.wikipedia.org/wiki/AT%26T_Python/C%2B%2B_bindings%3F"),
    ]
    assert parsed.rows[0].snippet.startswith("Python is a high-level, general-purpose programming language.")
    assert parsed.rows[1].snippet == ('Monty Python (also collectively known as the Pythons) were a British '
                                      'comedy troupe & "Flying Circus"')
    assert "<span" not in parsed.rows[0].snippet
    # Last-edited timestamps, the date the API gives.
    assert [row.date for row in parsed.rows] == [date(2026, 11, 20), date(2026, 10, 2), date(2025, 1, 5)]
    assert parsed.rows[2].snippet == ""


def test_chinese_response_uses_the_edition_it_came_from():
    parsed = parse(HANDWRITTEN_ZH, url="https://zh.wikipedia.org/w/api.php?action=query&srsearch=x", query="人工智能")
    assert parsed.status == "ok"
    assert [row.url for row in parsed.rows] == [
        "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD",
        "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD%E5%8F%B2",
    ]
    assert parsed.rows[0].snippet == "人工智能（英语：artificial intelligence，缩写为AI），指由人製造出來的機器所表現出來的智慧。"
    assert parsed.rows[0].date == date(2026, 11, 25)


def test_edition_from_query_when_url_is_not_wikipedia():
    parsed = parse(HANDWRITTEN_ZH, url="https://example.invalid/", query="人工智能")
    assert parsed.rows[0].url.startswith("https://zh.wikipedia.org/wiki/")


@pytest.mark.parametrize("title, url", [
    ("Python (programming language)", "https://en.wikipedia.org/wiki/Python_(programming_language)"),
    ("C++", "https://en.wikipedia.org/wiki/C%2B%2B"),
    ("What's Up?", "https://en.wikipedia.org/wiki/What%27s_Up%3F"),
    ("Talk:100% Pure", "https://en.wikipedia.org/wiki/Talk:100%25_Pure"),
    ("AC/DC", "https://en.wikipedia.org/wiki/AC/DC"),
    ("Hash #1", "https://en.wikipedia.org/wiki/Hash_%231"),
])
def test_article_url(title, url):
    assert article_url("en", title) == url


def test_snippet_text():
    assert snippet_text('a <span class="searchmatch">b</span>c &lt;d&gt;') == "a bc <d>"
    assert snippet_text("") == ""


# --- request building -------------------------------------------------------

def test_build_english():
    request = ENGINE.build("python language", SearchOptions(count=7))
    assert request.method == "GET"
    assert request.url == "https://en.wikipedia.org/w/api.php"
    assert request.params == (
        ("action", "query"), ("list", "search"), ("srsearch", "python language"), ("srlimit", "7"),
        ("srprop", "snippet|timestamp"), ("format", "json"), ("formatversion", "2"), ("utf8", "1"),
    )
    assert request.headers["User-Agent"].startswith("metasearch/")  # Wikimedia UA policy: descriptive UA
    assert request.secrets == ()


def test_build_chinese():
    request = ENGINE.build("人工智能 历史", SearchOptions())
    assert request.url == "https://zh.wikipedia.org/w/api.php"
    assert dict(request.params)["srsearch"] == "人工智能 历史"


def test_build_ignores_site_and_time_and_caps_count():
    request = ENGINE.build("python", SearchOptions(site="python.org", time_range="day", count=500))
    params = dict(request.params)
    assert params["srsearch"] == "python"  # not filterable by site: the pipeline filters
    assert params["srlimit"] == "50"
    assert not ENGINE.facts.native_site and not ENGINE.facts.native_time


@pytest.mark.parametrize("query, region, lang", [
    ("python", None, "en"),
    ("人工智能", None, "zh"),
    ("python", "de-DE", "de"),
    ("python", "fr", "fr"),
    ("python", "nb-NO", "no"),
    ("東京タワー", "ja-JP", "ja"),
    ("인공지능", "ko-KR", "ko"),
    ("人工智能", "zh-TW", "zh"),
    ("人工智能", "en-US", "zh"),   # a CJK query stays on a CJK edition
    ("python", "zh-CN", "en"),     # a Latin query does not go to zh
    ("python", "xx-YY", "en"),     # not a Wikipedia language
    ("python", "en-US", "en"),
])
def test_wiki_language(query, region, lang):
    assert wiki_language(query, region) == lang
    assert ENGINE.build(query, SearchOptions(region=region)).url == f"https://{lang}.wikipedia.org/w/api.php"


# --- classification ----------------------------------------------------------

def test_empty():
    parsed = parse(HANDWRITTEN_EMPTY)
    assert parsed.status == "empty"


def test_api_error_object():
    parsed = parse({"error": {"code": "nosrsearch", "info": "The \"srsearch\" parameter must be set.",
                              "docref": "See https://en.wikipedia.org/w/api.php for API usage."},
                    "servedby": "mw-api-ext.eqiad.main-1"})
    assert parsed.status == "error"
    assert parsed.detail == 'MediaWiki error nosrsearch: The "srsearch" parameter must be set.'


def test_maxlag_is_ratelimited():
    parsed = parse({"error": {"code": "maxlag", "info": "Waiting for 10.64.48.23: 7 seconds lagged.", "lag": 7}},
                   headers={"Retry-After": "5"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 5.0)


def test_http_statuses():
    assert parse(b"Too many requests", status=429, headers={"Retry-After": "10"}).retry_after == 10.0
    assert parse(b"Too many requests", status=429).status == "ratelimited"
    # 403 from Wikimedia is a policy block (e.g. a User-Agent it refuses).
    assert parse(b"<html>Forbidden</html>", status=403).status == "blocked"
    assert parse(b"upstream error", status=503).status == "error"
