"""startpage: the two-step flow (home page token -> search POST), conformance, classification."""

from __future__ import annotations

from datetime import date

import pytest

from corpus_cases import corpus_cases
from conftest import corpus_files, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.startpage import ENGINE

DIR = "startpage"
HOME = "https://www.startpage.com/"
SEARCH = "https://www.startpage.com/sp/search"

# file -> (status, rows a person sees, first title, first URL)
EXPECTED = {
    "websearchmcp__javascript-tutorial.html": (
        "ok", 10, "JavaScript Tutorial - W3Schools", "https://www.w3schools.com/js/"),
    "websearchmcp__javascript-tutorial_http.html": (
        "ok", 10, "JavaScript Tutorial - W3Schools", "https://www.w3schools.com/js/"),
}

HOME_PAGE = b"""<!DOCTYPE html><html lang="en"><head><title>Startpage - Private Search Engine</title></head>
<body><main>
  <form id="search" class="search-form-home" action="/sp/search" method="post" role="search">
    <input type="text" name="query" value="" placeholder="Search privately" autocomplete="off">
    <input type="hidden" name="t" value="device">
    <input type="hidden" name="lui" value="english">
    <input type="hidden" name="sc" value="Xy7Tok3nAbCd20">
    <input type="hidden" name="cat" value="web">
    <input type="hidden" name="abd" value="0">
    <input type="hidden" name="abe" value="0">
    <button type="submit">Search</button>
  </form>
  <p>Startpage is the world's most private search engine.</p>
</main></body></html>"""


def _parse(body: bytes, options: SearchOptions, query: str = "q", **kwargs):
    kwargs.setdefault("url", SEARCH)
    return ENGINE.parse(response_from_bytes(body, **kwargs), query, options)


# --- step 1: the home page -------------------------------------------------

def test_build_fetches_the_home_page():
    request = ENGINE.build("javascript tutorial", SearchOptions(region="de-DE"))
    assert request.method == "GET"
    assert request.url == "https://www.startpage.com/"
    assert request.params == () and request.form is None
    assert "Chrome" in request.headers["User-Agent"]
    assert request.headers["Accept-Language"].startswith("de-DE")
    assert request.secrets == ()


def test_home_page_yields_the_search_with_its_token(options):
    parsed = _parse(HOME_PAGE, options, query="javascript tutorial", url=HOME)
    assert parsed.status == "ok"
    assert parsed.rows == ()
    follow = parsed.follow_up
    assert follow is not None
    assert follow.method == "POST"
    assert follow.url == "https://www.startpage.com/sp/search"
    assert follow.form == (
        ("query", "javascript tutorial"),
        ("cat", "web"),
        ("t", "device"),
        ("sc", "Xy7Tok3nAbCd20"),
        ("language", "english"),
        ("lui", "english"),
        ("abd", "0"),
        ("abe", "0"),
        ("qsr", "all"),
        ("qadf", "moderate"),
        ("with_date", ""),
    )
    assert follow.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert follow.headers["Origin"] == "https://www.startpage.com"
    assert follow.headers["Referer"] == "https://www.startpage.com/"


def test_home_page_token_found_without_a_page_url(options):
    # The transport may not report a URL; the markup alone identifies the home page.
    parsed = _parse(HOME_PAGE, options, url="https://example.invalid/")
    assert dict(parsed.follow_up.form)["sc"] == "Xy7Tok3nAbCd20"


def test_home_page_without_token_still_searches(options):
    body = HOME_PAGE.replace(b'<input type="hidden" name="sc" value="Xy7Tok3nAbCd20">', b"")
    parsed = _parse(body, options, query="hello", url=HOME)
    assert parsed.status == "ok"
    assert parsed.follow_up is not None
    form = dict(parsed.follow_up.form)
    assert "sc" not in form
    assert form["query"] == "hello"
    assert "without" in parsed.detail


def test_startpage_home_url_without_form_still_searches(options):
    parsed = _parse(b"<html><body><div id='app'></div></body></html>", options, url=HOME)
    assert parsed.follow_up is not None
    assert "sc" not in dict(parsed.follow_up.form)


def test_search_page_is_never_answered_with_another_follow_up(options):
    # Served at /sp/search, a page that looks like the home page is not a home page:
    # following up again could loop.
    parsed = _parse(HOME_PAGE, options, url=SEARCH)
    assert parsed.follow_up is None
    assert parsed.status == "error"


@pytest.mark.parametrize("region,language,qsr", [
    ("en-US", "english", "en_US"),
    ("en-GB", "english", "en-GB_GB"),
    ("de-DE", "deutsch", "de_DE"),
    ("fr-FR", "francais", "fr_FR"),
    ("ja-JP", "nihongo", "ja_JP"),
    ("zh-CN", "jiantizhongwen", "zh-CN_CN"),
    ("zh-TW", "fantizhengwen", "zh-TW_TW"),
    ("pt-BR", "portugues", "pt-BR_BR"),
    ("xx-YY", "english", "all"),
    (None, "english", "all"),
])
def test_follow_up_region(region, language, qsr):
    parsed = ENGINE.parse(response_from_bytes(HOME_PAGE, url=HOME), "q", SearchOptions(region=region))
    form = dict(parsed.follow_up.form)
    assert (form["language"], form["lui"], form["qsr"]) == (language, language, qsr)


@pytest.mark.parametrize("time_range,with_date", [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y"),
                                                  (None, "")])
def test_follow_up_time_range(time_range, with_date):
    parsed = ENGINE.parse(response_from_bytes(HOME_PAGE, url=HOME), "q", SearchOptions(time_range=time_range))
    assert dict(parsed.follow_up.form)["with_date"] == with_date


@pytest.mark.parametrize("safe,qadf", [("off", "none"), ("moderate", "moderate"), ("strict", "heavy")])
def test_follow_up_safesearch(safe, qadf):
    parsed = ENGINE.parse(response_from_bytes(HOME_PAGE, url=HOME), "q", SearchOptions(safesearch=safe))
    assert dict(parsed.follow_up.form)["qadf"] == qadf


def test_follow_up_site_is_native():
    parsed = ENGINE.parse(response_from_bytes(HOME_PAGE, url=HOME), "tutorial",
                          SearchOptions(site="developer.mozilla.org"))
    assert dict(parsed.follow_up.form)["query"] == "tutorial site:developer.mozilla.org"


# --- step 2: real results pages --------------------------------------------

def test_every_corpus_page_has_an_expectation():
    files = corpus_files(DIR)
    if not files:
        corpus_path(DIR)
    assert sorted(files) == sorted(EXPECTED)


@pytest.mark.parametrize("name", corpus_cases(DIR))
def test_corpus_page(name, options):
    status, count, first_title, first_url = EXPECTED[name]
    parsed = _parse(corpus_path(DIR, name).read_bytes(), options)
    assert parsed.status == status, parsed.detail
    assert parsed.follow_up is None  # a results page carries sc inputs too, but it is not the home page
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == first_title
    assert parsed.rows[0].url == first_url
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title and row.title.strip() == row.title
        assert row.url.startswith(("http://", "https://"))
        assert "startpage.com" not in row.url
        assert row.snippet


@pytest.mark.parametrize("name", corpus_cases(DIR))
def test_corpus_page_without_url(name, options):
    parsed = _parse(corpus_path(DIR, name).read_bytes(), options, url="https://example.invalid/")
    assert parsed.status == "ok"
    assert len(parsed.rows) == EXPECTED[name][1]


def test_corpus_dates_and_order(options):
    rows = _parse(corpus_path(DIR, "websearchmcp__javascript-tutorial.html").read_bytes(), options).rows
    assert [r.url for r in rows[:3]] == [
        "https://www.w3schools.com/js/", "https://javascript.info/", "https://www.javascripttutorial.net/"]
    assert rows[3].title == "JavaScript tutorial for beginners - YouTube"
    assert rows[3].date == date(2023, 10, 14)
    assert rows[5].date == date(2025, 11, 7)
    assert rows[0].date is None


def test_corpus_http_capture_differs(options):
    rows = _parse(corpus_path(DIR, "websearchmcp__javascript-tutorial_http.html").read_bytes(), options).rows
    assert rows[5].title == "Belajar Pemrograman Javascript untuk Pemula - Petani Kode"
    assert rows[9].url == "https://www.geeksforgeeks.org/javascript/javascript-tutorial/"
    assert rows[9].date == date(2026, 3, 13)


# --- hand-written pages ----------------------------------------------------

def _result(href: str, title: str, snippet: str = "text", extra_class: str = "css-o7i03b") -> str:
    return (f'<div class="result {extra_class}"><div class="upper"><a class="wgl-site-title" href="{href}">'
            f'<span class="link-text">Site</span></a></div>'
            f'<a class="result-title result-link css-1bggj8v" href="{href}"><h2 class="wgl-title">{title}</h2></a>'
            f'<p class="description css-1507v2l">{snippet}</p></div>')


def _results_page(inner: str) -> bytes:
    return (f'<html><body><form id="search" action="/sp/search"><input name="query" value="q">'
            f'<input type="hidden" name="sc" value="abc"></form><div id="main">{inner}</div></body></html>').encode()


def test_ads_and_internal_links_are_skipped(options):
    inner = (
        '<div id="sponsored">' + _result("https://shop.example/", "Sponsored shop") + "</div>"
        + _result("https://www.google.com/aclk?sa=l&ai=xyz", "Google ad")
        + _result("https://www.startpage.com/do/search?q=more", "More results")
        + _result("https://example.org/a", "Organic A", "2 days ago ... text")
    )
    parsed = _parse(_results_page(inner), options)
    assert [(r.title, r.url, r.position) for r in parsed.rows] == [("Organic A", "https://example.org/a", 1)]
    assert parsed.rows[0].date == date(2026, 11, 27)


def test_captcha_redirect_is_blocked(options):
    parsed = _parse(b"<html><body>Please verify</body></html>", options,
                    url="https://www.startpage.com/sp/captcha?ref=x")
    assert parsed.status == "blocked"
    assert "captcha" in parsed.detail


def test_captcha_markup_is_blocked(options):
    body = (b'<html><body><h1>Are you a robot?</h1><form action="/sp/captcha/verify" method="post">'
            b'<input type="hidden" name="sc" value="zzz"><button>Continue</button></form></body></html>')
    parsed = _parse(body, options, url=HOME)
    assert parsed.status == "blocked"
    assert parsed.follow_up is None


def test_captcha_text_is_blocked(options):
    parsed = _parse(b"<html><body><p>Please solve the CAPTCHA to continue.</p></body></html>", options)
    assert parsed.status == "blocked"


def test_no_results_page_is_empty(options):
    body = _results_page('<div class="no-results"><p>Your search <b>zzqxv</b> did not match any documents.</p></div>')
    parsed = _parse(body, options)
    assert parsed.status == "empty"
    assert parsed.follow_up is None


@pytest.mark.parametrize("status,expected", [(429, "ratelimited"), (403, "blocked"), (500, "error"),
                                             (302, "error")])
def test_http_statuses(status, expected, options):
    parsed = _parse(HOME_PAGE, options, status=status, url=SEARCH)
    assert parsed.status == expected
    assert parsed.follow_up is None


@pytest.mark.parametrize("status,expected", [(429, "ratelimited"), (403, "blocked")])
def test_a_blocked_home_page_stops_there(status, expected, options):
    parsed = _parse(HOME_PAGE, options, status=status, url=HOME)
    assert parsed.status == expected and parsed.follow_up is None


@pytest.mark.parametrize("status", [404, 500, 302])
def test_a_failed_home_page_still_searches_without_a_token(status, options):
    """The home page only lends a token: when it fails, the search goes ahead without one."""
    parsed = _parse(b"oops", options, status=status, url=HOME)
    assert parsed.status == "ok" and not parsed.rows
    assert parsed.follow_up is not None and parsed.follow_up.url == SEARCH
    assert "sc" not in dict(parsed.follow_up.form)
