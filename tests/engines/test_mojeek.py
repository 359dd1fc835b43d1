"""mojeek: request building, real-page conformance, classification of block/empty/garbage pages."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.mojeek import ENGINE, since_date

DIR = "mojeek"
PAGE_URL = "https://www.mojeek.com/search?q=q"

# file -> (status, rows a person sees, first title, first URL)
EXPECTED = {
    "deepthink__host-microsoft-com.html": (
        "ok", 10, "Tutorial: Host your domain in Azure DNS | Microsoft Learn",
        "https://learn.microsoft.com/en-us/azure/dns/dns-delegate-domain-azure-dns"),
    "friday__CAPTCHA.html": ("blocked", 0, None, None),
    "websearchmcp__javascript-tutorial.html": (
        "ok", 10, "The Modern JavaScript Tutorial", "https://javascript.info/"),
}


def _parse(body: bytes | str, options: SearchOptions, **kwargs):
    if isinstance(body, str):
        body = body.encode("utf-8")
    kwargs.setdefault("url", PAGE_URL)
    return ENGINE.parse(response_from_bytes(body, **kwargs), "q", options)


def _corpus(name: str, options: SearchOptions):
    return _parse(corpus_path(DIR, name).read_bytes(), options)


# --- request building ------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("javascript tutorial", SearchOptions())
    assert request.method == "GET"
    assert request.url == "https://www.mojeek.com/search"
    # No "s" offset: s=0 on the first page trips Mojeek's limiter.
    assert request.params == (("q", "javascript tutorial"), ("safe", "1"))
    assert request.form is None and request.json is None
    assert request.secrets == ()
    assert "Cookie" not in request.headers
    assert "Chrome" in request.headers["User-Agent"]


@pytest.mark.parametrize("level, safe", [("off", "0"), ("moderate", "1"), ("strict", "1")])
def test_build_safesearch(level, safe):
    request = ENGINE.build("x", SearchOptions(safesearch=level))
    assert ("safe", safe) in request.params


@pytest.mark.parametrize("time_range, since", [
    ("day", "20261128"), ("week", "20261122"), ("month", "20261029"), ("year", "20251129"),
])
def test_build_time_range_since(time_range, since):
    request = ENGINE.build("x", SearchOptions(time_range=time_range, now=FIXED_NOW))
    assert request.params == (("q", "x"), ("safe", "1"), ("since", since))


def test_since_clamps_short_months():
    assert since_date("month", datetime(2026, 3, 31)) == "20260228"
    assert since_date("year", datetime(2028, 2, 29)) == "20270228"
    assert since_date("month", datetime(2026, 1, 15)) == "20251215"


@pytest.mark.parametrize("region, cookie", [
    ("en-US", "lb=en; arc=us"),
    ("en-GB", "lb=en; arc=uk"),
    ("de-DE", "lb=de; arc=de"),
    ("fr", "lb=fr"),
])
def test_build_region_cookies(region, cookie):
    request = ENGINE.build("x", SearchOptions(region=region))
    assert request.headers["Cookie"] == cookie
    assert request.headers["Accept-Language"].startswith(region)


def test_build_site_goes_into_query():
    request = ENGINE.build("generic host", SearchOptions(site="learn.microsoft.com"))
    assert request.params[0] == ("q", "generic host site:learn.microsoft.com")


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
    for row in parsed.rows:
        assert row.url.startswith(("https://", "http://")), row.url
        assert "mojeek.com" not in row.url
        assert row.title


def test_host_page_details(options):
    rows = _corpus("deepthink__host-microsoft-com.html", options).rows
    assert rows[5].url == "http://microsoft.com.ishostedby.com/"
    assert rows[5].title == "Microsoft.com"
    assert rows[-1].url == "https://hypestat.com/host/AS8075/Microsoft-Corporation"
    # <strong> highlighting keeps the page's own spacing.
    assert rows[0].snippet.startswith("contoso.xyz primary name server = ns1-37.azure-dns.com responsible")
    # "Updated 13 days ago" mid-snippet is not a result date.
    assert rows[5].date is None
    # "See more results from learn.microsoft.com »" is not a row.
    assert not any("/search?" in row.url for row in rows)


def test_reformatted_page_details(options):
    rows = _corpus("websearchmcp__javascript-tutorial.html", options).rows
    assert rows[0].snippet == ("The Modern JavaScript Tutorial ... Main course contains 2 parts which cover "
                               "JavaScript as a programming language and working with a browser.")
    # A result without a snippet is still a result.
    assert (rows[1].title, rows[1].url, rows[1].snippet) == ("w3schools.com/js", "https://www.w3schools.com/js/", "")
    assert rows[3].url == "http://javascriptkit.com/javatutors/"
    assert rows[9].title == "Javascript/DHTML Tutorials"


# --- hand-written pages ------------------------------------------------------

def _li(n: int, url: str, title: str, snippet: str = "", extra: str = "") -> str:
    return (f'<li class="r{n}{extra}"><a href="{url}" class="ob"><p class="i">{url}</p></a>'
            f'<h2><a class="title" href="{url}">{title}</a></h2><p class="s">{snippet}</p></li>')


def test_rows_dates_and_ads(options):
    page = ('<html><body><ul class="results-standard">'
            + _li(1, "https://example.org/a", "A", "3 days ago - text A")
            + _li(2, "https://ads.example.com/", "Ad", "buy", extra=" sponsored")
            + _li(3, "/search?q=more", "Relative", "not a result")
            + '<li class="r4"><a class="title" href="https://example.org/b">B</a>'
              '<p class="s">text B</p><span class="date">Nov 3, 2025</span></li>'
            + "</ul></body></html>")
    parsed = _parse(page, options)
    assert parsed.status == "ok"
    assert [(r.title, r.url) for r in parsed.rows] == [("A", "https://example.org/a"), ("B", "https://example.org/b")]
    assert parsed.rows[0].date == date(2026, 11, 26)
    assert parsed.rows[1].date == date(2025, 11, 3)


def test_no_results_page_is_empty(options):
    page = ('<html><head><title>zzqxj - Mojeek Search</title></head><body><div class="serp-results">'
            '<div class="results"><p class="no-results">No pages found matching: <strong>zzqxj</strong></p>'
            "</div></div></body></html>")
    parsed = _parse(page, options)
    assert parsed.status == "empty"


def test_automated_queries_page_is_blocked(options):
    page = ("<html><head><title>403 - Forbidden</title></head><body><p>Sorry, your network appears to be "
            "sending automated queries.</p></body></html>")
    assert _parse(page, options, status=403).status == "blocked"
    assert _parse(page, options, status=200).status == "blocked"


@pytest.mark.parametrize("status, headers, expected, retry_after", [
    (429, {"Retry-After": "120"}, "ratelimited", 120.0),
    (403, {}, "blocked", None),
    (503, {}, "error", None),
    (301, {"Location": "https://www.mojeek.com/"}, "error", None),
])
def test_http_status(status, headers, expected, retry_after, options):
    parsed = _parse(b"<html><body>x</body></html>", options, status=status, headers=headers)
    assert parsed.status == expected
    assert parsed.retry_after == retry_after
