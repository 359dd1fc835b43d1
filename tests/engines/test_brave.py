"""brave: request building, real-page conformance, classification of block/empty/garbage pages."""

from __future__ import annotations

from datetime import date

import pytest

from corpus_cases import corpus_cases
from conftest import corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.brave import ENGINE

DIR = "brave"
PAGE_URL = "https://search.brave.com/search?q=q&source=web"

# file -> (status, rows a person sees, first title, first URL).
# Both pages carry 20 [data-type=web] snippets with 20 distinct URLs (no ads,
# no duplicates); the video cluster between them (div.snippet.standalone) is
# not a row.
EXPECTED = {
    "ultrasearch__who-is-the-ceo-of-google.html": (
        "ok", 20, "Sundar Pichai - Wikipedia", "https://en.wikipedia.org/wiki/Sundar_Pichai"),
    "websearchmcp__javascript-tutorial.html": (
        "ok", 20, "JavaScript Tutorial", "https://www.w3schools.com/js/"),
}


def _parse(body: bytes | str, options: SearchOptions, **kwargs):
    if isinstance(body, str):
        body = body.encode("utf-8")
    kwargs.setdefault("url", PAGE_URL)
    return ENGINE.parse(response_from_bytes(body, **kwargs), "q", options)


def _corpus(name: str, options: SearchOptions):
    return _parse(corpus_path(DIR, name).read_bytes(), options)


# --- request building ------------------------------------------------------

def _cookies(request) -> dict[str, str]:
    return dict(part.split("=", 1) for part in request.headers["Cookie"].split("; "))


def test_build_defaults():
    request = ENGINE.build("javascript tutorial", SearchOptions())
    assert request.method == "GET"
    assert request.url == "https://search.brave.com/search"
    assert request.params == (("q", "javascript tutorial"), ("source", "web"))
    assert request.form is None and request.json is None
    assert request.secrets == ()
    assert _cookies(request) == {
        "safesearch": "moderate", "country": "all", "useLocation": "0", "summarizer": "0", "ui_lang": "en-us",
    }
    assert "Chrome" in request.headers["User-Agent"]
    assert request.headers["Accept-Language"].startswith("en-US")


@pytest.mark.parametrize("time_range, tf", [("day", "pd"), ("week", "pw"), ("month", "pm"), ("year", "py")])
def test_build_time_range(time_range, tf):
    request = ENGINE.build("x", SearchOptions(time_range=time_range))
    assert request.params == (("q", "x"), ("source", "web"), ("tf", tf))


@pytest.mark.parametrize("level", ["off", "moderate", "strict"])
def test_build_safesearch_cookie(level):
    request = ENGINE.build("x", SearchOptions(safesearch=level))
    assert _cookies(request)["safesearch"] == level


@pytest.mark.parametrize("region, country, ui_lang", [
    ("en-US", "us", "en-us"),
    ("en-GB", "gb", "en-gb"),
    ("de-DE", "de", "de-de"),
    ("fr-CA", "ca", "fr-ca"),
    ("es-MX", "mx", "es"),
    ("zh-CN", "cn", "en-us"),
    ("ja", "all", "en-us"),
])
def test_build_region_cookies(region, country, ui_lang):
    request = ENGINE.build("x", SearchOptions(region=region))
    cookies = _cookies(request)
    assert cookies["country"] == country
    assert cookies["ui_lang"] == ui_lang
    assert cookies["useLocation"] == "0"
    assert request.headers["Accept-Language"].startswith(region)


def test_build_site_goes_into_query():
    request = ENGINE.build("rust async", SearchOptions(site="docs.rs"))
    assert request.params[0] == ("q", "rust async site:docs.rs")


def test_build_count_is_not_sent():
    # Brave's HTML page has no result-count parameter.
    request = ENGINE.build("x", SearchOptions(count=50))
    assert [name for name, _ in request.params] == ["q", "source"]


# --- real pages ------------------------------------------------------------

@pytest.mark.parametrize("name", corpus_cases(DIR))
def test_corpus_page(name, options):
    assert name in EXPECTED, f"new corpus page {name}: add its expectation"
    status, count, first_title, first_url = EXPECTED[name]
    parsed = _corpus(name, options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    if count:
        assert parsed.rows[0].title == first_title
        assert parsed.rows[0].url == first_url
    urls = [row.url for row in parsed.rows]
    assert len(set(urls)) == len(urls)
    for row in parsed.rows:
        assert row.url.startswith(("https://", "http://")), row.url
        assert "search.brave.com" not in row.url
        assert row.title.strip() == row.title and row.title


def test_ceo_page_details(options):
    rows = _corpus("ultrasearch__who-is-the-ceo-of-google.html", options).rows
    # "1 week ago -" opens the first description: it becomes the date, not snippet text.
    assert rows[0].date == date(2026, 11, 22)
    assert rows[0].snippet.startswith("Pichai Sundararajan (born June 10, 1972)")
    assert rows[2].title == "Sundar Pichai | Google Blog"
    assert rows[2].date == date(2019, 10, 23)
    assert rows[2].snippet == ("Sundar is the CEO of Google and Alphabet and serves on "
                               "Alphabet’s Board of Directors.")
    # No date span: no date, and "6M Followers ... -" is not mistaken for one.
    assert rows[6].url == "https://www.instagram.com/sundarpichai/"
    assert rows[6].date is None
    assert rows[6].snippet.startswith("6M Followers, 44 Following, 144 Posts - ")
    assert rows[-1].url == "https://cheekypint.substack.com/p/the-history-and-future-of-ai-at-google"
    # The video cluster (YouTube watch links) is not a row.
    assert not any("youtube.com/watch" in row.url for row in rows)


def test_reformatted_page_details(options):
    rows = _corpus("websearchmcp__javascript-tutorial.html", options).rows
    # Sitelinks under the first result are not separate rows.
    assert "https://www.w3schools.com/css/default.asp" not in [row.url for row in rows]
    assert rows[0].snippet == ("JavaScript is easy to learn. This tutorial covers everything from basic "
                               "JavaScript up to the latest 2026 version.")
    assert rows[2].date == date(2024, 12, 13)
    assert rows[2].snippet.startswith("Welcome to the JavaScriptTutorial.net website!")
    # Video-style web result: description plus "Published 3 weeks ago".
    assert rows[4].url == "https://www.geeksforgeeks.org/javascript/javascript-tutorial/"
    assert rows[4].date == date(2026, 11, 8)
    assert rows[4].snippet.startswith("HTML adds structure to a web page, CSS styles it")
    assert rows[19].title == "JavaScript Tutorial: Learn JavaScript from Scratch"


# --- hand-written pages ------------------------------------------------------

def _snippet(url: str, title: str, description: str, data_type: str = "web", extra: str = "") -> str:
    return (
        f'<div class="snippet {extra}" data-type="{data_type}"><div class="result-content">'
        f'<a href="{url}" class="l1"><div class="title search-snippet-title">{title}</div></a>'
        f'<div class="generic-snippet"><div class="content">{description}</div></div></div></div>'
    )


def test_ads_and_internal_links_are_not_rows(options):
    page = "<html><body>" + "".join([
        _snippet("https://ads.example.com/landing", "Buy now", "An ad", data_type="ad"),
        _snippet("https://search.brave.com/a/redirect?click_url=x", "Sponsored thing", "via Brave redirect"),
        _snippet("/relative/path", "Relative", "no host"),
        _snippet("https://shop.example.com/", "Shop", "sponsored", extra="sponsored"),
        _snippet("https://example.org/a", "Organic A",
                 '<span class="t-secondary">Nov 3, 2025 -</span> Text of A'),
        _snippet("https://example.org/a", "Organic A again", "duplicate URL"),
        _snippet("https://example.org/b", "Organic B", "Text of B"),
    ]) + "</body></html>"
    parsed = _parse(page, options)
    assert parsed.status == "ok"
    assert [(r.title, r.url) for r in parsed.rows] == [
        ("Organic A", "https://example.org/a"), ("Organic B", "https://example.org/b")]
    assert parsed.rows[0].date == date(2025, 11, 3)
    assert parsed.rows[0].snippet == "Text of A"


def test_captcha_page_is_blocked(options):
    page = ("<html><head><title>Brave Search - Captcha</title></head><body><main>"
            "<h1>Verifying you're not a bot</h1><button>Switch to traditional CAPTCHA</button>"
            "</main></body></html>")
    parsed = _parse(page, options)
    assert parsed.status == "blocked"


def test_captcha_widget_without_title_is_blocked(options):
    page = '<html><body><div id="pow-captcha-root"><p>Please wait…</p></div></body></html>'
    assert _parse(page, options).status == "blocked"


def test_rate_limit_page_text(options):
    page = "<html><body><h1>Too many requests</h1><p>Please try again later.</p></body></html>"
    assert _parse(page, options).status == "ratelimited"


def test_no_results_page_is_empty(options):
    page = ('<html><body><div id="results"><div class="bad-results">'
            "<h2>Not many great matches came back for your search</h2>"
            "<p>We're sorry you are not finding the results you wanted for <strong>zzqxj</strong></p>"
            "</div></div></body></html>")
    parsed = _parse(page, options)
    assert parsed.status == "empty"
    assert parsed.rows == ()


def test_no_results_text_only_in_script_is_not_empty(options):
    # Every Brave page ships its UI strings (incl. the no-results header) in a script.
    page = ('<html><body><script>const t={"bad-results-header":"Not many great matches came back '
            'for your search","x":"Switch to traditional captcha"}</script><div id="app"></div></body></html>')
    parsed = _parse(page, options)
    assert parsed.status == "error"
    assert "page not understood" in parsed.detail


@pytest.mark.parametrize("status, headers, expected, retry_after", [
    (429, {"Retry-After": "30"}, "ratelimited", 30.0),
    (429, {}, "ratelimited", None),
    (403, {}, "blocked", None),
    (500, {}, "error", None),
    (302, {"Location": "https://search.brave.com/captcha"}, "error", None),
])
def test_http_status(status, headers, expected, retry_after, options):
    parsed = _parse(b"<html><body>whatever</body></html>", options, status=status, headers=headers)
    assert parsed.status == expected
    assert parsed.retry_after == retry_after
