"""yahoo: request building, real-page conformance (2021 and 2026 markup), classification."""

from __future__ import annotations

from datetime import date

import pytest

from corpus_cases import corpus_cases
from conftest import corpus_files, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.yahoo import ENGINE

DIR = "yahoo"
PAGE_URL = "https://search.yahoo.com/search?p=q"

# file -> (status, rows a person sees, first title, first URL)
EXPECTED = {
    "bisohns__hello.html": (
        "ok", 9, "Hello | Definition of Hello by Merriam-Webster",
        "https://www.merriam-webster.com/dictionary/hello"),
    "bisohns__this-is-example-bob.html": (
        "ok", 8, "This is bob. Voice script.docx - This is bob Bob is a crypto ...",
        "https://www.coursehero.com/file/86022766/This-is-bob-Voice-scriptdocx/"),
    "vaezyth__CONSENT-PAGE.html": ("blocked", 0, None, None),
    "vaezyth__data-analyst-london-hiring-email.html": (
        "ok", 7, "5,000+ Data Analyst jobs in London, England, United Kingdom ...",
        "https://uk.linkedin.com/jobs/data-analyst-jobs-london"),
    "websearchmcp__javascript-tutorial.html": (
        "ok", 7, "JavaScript Tutorial - W3Schools", "https://www.w3schools.com/Js/"),
}


def _parse(body: bytes, options: SearchOptions, **kwargs):
    kwargs.setdefault("url", PAGE_URL)
    return ENGINE.parse(response_from_bytes(body, **kwargs), "q", options)


# --- request building ------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("javascript tutorial", SearchOptions())
    assert request.method == "GET"
    assert request.url == "https://search.yahoo.com/search"
    assert request.params == (("p", "javascript tutorial"), ("ei", "UTF-8"), ("b", "1"), ("pz", "10"),
                              ("vm", "i"))
    assert request.form is None and request.json is None
    assert request.headers["Cookie"] == "sB=v=1&vm=i&fl=1&pn=10&rw=new&userset=1"
    assert "Chrome" in request.headers["User-Agent"]
    assert request.secrets == ()


@pytest.mark.parametrize("region,url", [
    ("en-GB", "https://uk.search.yahoo.com/search"),
    ("en-CA", "https://ca.search.yahoo.com/search"),
    ("de-DE", "https://de.search.yahoo.com/search"),
    ("fr-FR", "https://fr.search.yahoo.com/search"),
    ("es-ES", "https://espanol.search.yahoo.com/search"),
    ("zh-TW", "https://tw.search.yahoo.com/search"),
    ("en-US", "https://search.yahoo.com/search"),
    ("ja-JP", "https://search.yahoo.com/search"),  # Yahoo! JAPAN is another engine
    ("xx-ZZ", "https://search.yahoo.com/search"),
    (None, "https://search.yahoo.com/search"),
])
def test_build_region_host(region, url):
    assert ENGINE.build("q", SearchOptions(region=region)).url == url


def test_build_region_language():
    request = ENGINE.build("q", SearchOptions(region="de-DE"))
    assert dict(request.params)["vl"] == "lang_de"
    assert "vl=lang_de" in request.headers["Cookie"]
    assert request.headers["Accept-Language"].startswith("de-DE")
    assert "vl" not in dict(ENGINE.build("q", SearchOptions()).params)


@pytest.mark.parametrize("time_range,btf", [("day", "d"), ("week", "w"), ("month", "m")])
def test_build_time_range(time_range, btf):
    params = dict(ENGINE.build("q", SearchOptions(time_range=time_range)).params)
    assert params["btf"] == btf
    assert params["fr2"] == "time"


def test_build_year_has_no_yahoo_filter():
    # Yahoo offers past day/week/month only; an unknown btf would be ignored silently.
    params = dict(ENGINE.build("q", SearchOptions(time_range="year")).params)
    assert "btf" not in params and "fr2" not in params


@pytest.mark.parametrize("safe,vm", [("off", "p"), ("moderate", "i"), ("strict", "r")])
def test_build_safesearch(safe, vm):
    request = ENGINE.build("q", SearchOptions(safesearch=safe))
    assert dict(request.params)["vm"] == vm
    assert f"vm={vm}" in request.headers["Cookie"]


def test_build_site_is_native():
    assert dict(ENGINE.build("jobs", SearchOptions(site="gov.uk")).params)["p"] == "jobs site:gov.uk"


@pytest.mark.parametrize("count,pz", [(10, "10"), (20, "20"), (0, "1"), (500, "50")])
def test_build_count(count, pz):
    assert dict(ENGINE.build("q", SearchOptions(count=count)).params)["pz"] == pz


# --- real pages ------------------------------------------------------------

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
    assert len(parsed.rows) == count
    if count:
        assert parsed.rows[0].title == first_title
        assert parsed.rows[0].url == first_url
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title and row.title.strip() == row.title
        # the displayed-URL breadcrumb never leaks into a title
        assert "›" not in row.title
        assert not row.title.lower().startswith(("http", "www."))
        assert row.url.startswith(("http://", "https://"))
        assert "r.search.yahoo.com" not in row.url and "/RU=" not in row.url
        assert row.snippet


def test_corpus_consent_page_detail(options):
    parsed = _parse(corpus_path(DIR, "vaezyth__CONSENT-PAGE.html").read_bytes(), options)
    assert parsed.status == "blocked"
    assert "consent" in parsed.detail


def test_corpus_2026_title_is_heading_not_link_text(options):
    # The 2026 link wraps "W3School https://www.w3schools.com › Js" and the h3.
    rows = _parse(corpus_path(DIR, "websearchmcp__javascript-tutorial.html").read_bytes(), options).rows
    assert [r.title for r in rows[:4]] == [
        "JavaScript Tutorial - W3Schools",
        "JavaScript Tutorial",
        "JavaScript Tutorial - GeeksforGeeks",
        "JavaScript Tutorial - Online Tutorials Library",
    ]
    assert rows[2].date == date(2026, 3, 13)
    assert rows[4].date == date(2026, 11, 27)  # "2 days ago" against the fixed now


def test_corpus_2021_redirects_unwrapped(options):
    rows = _parse(corpus_path(DIR, "bisohns__hello.html").read_bytes(), options).rows
    assert rows[3].url == "http://www.hello.com/en/index.html"
    assert rows[6].title == "Hello - Wikipedia"
    assert rows[6].url == "https://en.wikipedia.org/wiki/Hello"


def test_corpus_double_escaped_entity_is_decoded(options):
    body = corpus_path(DIR, "vaezyth__data-analyst-london-hiring-email.html").read_bytes()
    rows = _parse(body, options).rows
    assert rows[5].title == "'data Analyst' Work, jobs in London (with Salaries ..."


def test_corpus_dates_from_snippets(options):
    rows = _parse(corpus_path(DIR, "bisohns__this-is-example-bob.html").read_bytes(), options).rows
    assert rows[2].date == date(2018, 3, 13)
    assert rows[0].date is None


# --- hand-written pages ----------------------------------------------------

def _page(blocks: str) -> bytes:
    return f"<html><body><div id='web'><ol>{blocks}</ol></div></body></html>".encode()


def _block_2021(href: str, title: str, snippet: str = "snippet") -> str:
    return (f"<li><div class='dd algo algo-sr Sr'><div class='compTitle'><h3 class='title'><a href='{href}'>{title}</a>"
            f"</h3><div><span>www.example.org › path</span></div></div>"
            f"<div class='compText aAbs'><p>{snippet}</p></div></div></li>")


def test_breadcrumb_inside_heading_is_stripped(options):
    block = ("<li><div class='dd algo algo-sr Sr'><div class='compTitle'><h3 class='title'>"
             "<a href='https://r.search.yahoo.com/_ylt=x/RV=2/RE=1/RO=10/RU=https%3a%2f%2fexample.org%2fdocs/RK=2/RS=y-'>"
             "<span class='d-b fz-15'>www.example.org<span> › docs</span></span>Example Docs Home</a></h3></div>"
             "<div class='compText'><p>text</p></div></div></li>")
    row = _parse(_page(block), options).rows[0]
    assert row.title == "Example Docs Home"
    assert row.url == "https://example.org/docs"


def test_aria_label_is_preferred_for_the_title(options):
    block = ("<li><div class='dd algo algo-sr'><div class='compTitle'><h3 class='title'>"
             "<a aria-label='Real  Title' href='https://example.org/'><span>example.org › x</span>Real Title</a>"
             "</h3></div></div></li>")
    assert _parse(_page(block), options).rows[0].title == "Real Title"


def test_title_that_is_a_single_span_is_kept(options):
    block = ("<li><div class='dd algo algo-sr'><div class='compTitle'><h3 class='title'>"
             "<a href='https://example.org/'><span>Example.org - the example site</span></a></h3></div></div></li>")
    assert _parse(_page(block), options).rows[0].title == "Example.org - the example site"


def test_ads_are_skipped(options):
    ads = ("<ol class='searchCenterTopAds'><li><div class='dd algo algo-sr'><div class='compTitle'>"
           "<h3><a href='https://example.com/ad'>Ad in top ads</a></h3></div></div></li></ol>")
    clicks = _block_2021("https://www.bing.com/aclick?ld=e8x&u=abc", "Bing ad click")
    organic = _block_2021("https://example.org/a", "Organic")
    parsed = _parse(f"<html><body>{ads}<ol>{clicks}{organic}</ol></body></html>".encode(), options)
    assert [(r.title, r.position) for r in parsed.rows] == [("Organic", 1)]


def test_consent_redirect_url_is_blocked(options):
    parsed = _parse(b"<html><body>whatever</body></html>",
                    options, url="https://guce.yahoo.com/consent?brandType=nonEu&gcrumb=x")
    assert parsed.status == "blocked"
    assert parsed.detail == "consent page"


def test_consent_markup_is_blocked(options):
    body = (b"<html><body><div class='con-wizard'><form method='post' class='consent-form' action=''>"
            b"<button name='agree'>Accept all</button></form></div></body></html>")
    parsed = _parse(body, options)
    assert parsed.status == "blocked"
    assert parsed.detail == "consent page"


def test_no_results_page_is_empty(options):
    # A real SERP names the consent host in a meta tag and footer links; that is not a consent wall.
    body = (b"<html><head><meta name='oath:guce:consent-host' content='guce.yahoo.com'/></head><body>"
            b"<div class='dd zrp'><p>We did not find results for: <b>zzqxv</b>. "
            b"Check spelling or type a new query.</p></div>"
            b"<a href='https://guce.yahoo.com/privacy-policy?locale=en-US'>Privacy</a></body></html>")
    parsed = _parse(body, options)
    assert parsed.status == "empty"


@pytest.mark.parametrize("status,expected", [(429, "ratelimited"), (999, "ratelimited"), (403, "blocked"),
                                             (500, "error"), (302, "error")])
def test_http_statuses(status, expected, options):
    assert _parse(b"<html></html>", options, status=status).status == expected
