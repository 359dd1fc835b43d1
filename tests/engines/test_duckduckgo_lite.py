"""duckduckgo-lite: request building, real-page conformance, classification."""

from __future__ import annotations

from datetime import date

import pytest

from corpus_cases import corpus_cases
from conftest import corpus_files, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.duckduckgo_lite import ENGINE

DIR = "duckduckgo-lite"
PAGE_URL = "https://lite.duckduckgo.com/lite/"

# file -> (status, rows a person sees, first title, first URL)
EXPECTED = {
    "alouette__tauri-v2.html": ("ok", 10, "Tauri 2.0 | Tauri", "https://v2.tauri.app/"),
    "kaiz__tinh-hinh-thoi-tiet.html": ("ok", 10, "Trung tâm Dự báo KTTV quốc gia", "https://nchmf.gov.vn/"),
    "spacey__site-nasa-spacex-wikipedia-voyager-1-launch.html": (
        "ok", 10, "Voyager 1 - Science@NASA", "https://science.nasa.gov/mission/voyager/voyager-1/"),
    "tinker__latest-ai-news__UTF16LE.html": (
        "ok", 10, "Google News - Artificial intelligence - Latest",
        "https://news.google.com/topics/CAAqJAgKIh5DQkFTRUFvSEwyMHZNRzFyZWhJRlpXNHRSMElvQUFQAQ"),
    "tinker__top-latest-news-in-ai-world__UTF16LE.html": (
        "ok", 10, "Google News - Artificial intelligence - Latest",
        "https://news.google.com/topics/CAAqJAgKIh5DQkFTRUFvSEwyMHZNRzFyZWhJRlpXNHRSMElvQUFQAQ"),
}


def _parse(body: bytes, options: SearchOptions, **kwargs):
    kwargs.setdefault("url", PAGE_URL)
    return ENGINE.parse(response_from_bytes(body, **kwargs), "q", options)


# --- request building ------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("tauri v2", SearchOptions())
    assert request.method == "POST"
    assert request.url == "https://lite.duckduckgo.com/lite/"
    assert request.params == ()
    assert request.form == (("q", "tauri v2"), ("kl", "wt-wt"), ("kp", "-1"))
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["Origin"] == "https://lite.duckduckgo.com"
    assert request.headers["Referer"] == "https://lite.duckduckgo.com/"
    assert "Chrome" in request.headers["User-Agent"]
    assert request.secrets == ()


@pytest.mark.parametrize("region,kl", [("en-US", "us-en"), ("en-GB", "uk-en"), ("zh-CN", "cn-zh"),
                                        ("de-DE", "de-de"), ("xx-YY", "wt-wt"), (None, "wt-wt")])
def test_build_region(region, kl):
    form = dict(ENGINE.build("q", SearchOptions(region=region)).form)
    assert form["kl"] == kl


@pytest.mark.parametrize("time_range,df", [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")])
def test_build_time_range(time_range, df):
    form = dict(ENGINE.build("q", SearchOptions(time_range=time_range)).form)
    assert form["df"] == df


def test_build_no_time_range_sends_no_df():
    assert "df" not in dict(ENGINE.build("q", SearchOptions()).form)


@pytest.mark.parametrize("safe,kp", [("off", "-2"), ("moderate", "-1"), ("strict", "1")])
def test_build_safesearch(safe, kp):
    assert dict(ENGINE.build("q", SearchOptions(safesearch=safe)).form)["kp"] == kp


def test_build_site_is_native():
    form = dict(ENGINE.build("voyager", SearchOptions(site="nasa.gov")).form)
    assert form["q"] == "voyager site:nasa.gov"


def test_build_accept_language_follows_region():
    request = ENGINE.build("q", SearchOptions(region="de-DE"))
    assert request.headers["Accept-Language"].startswith("de-DE")


# --- real pages ------------------------------------------------------------

def test_every_corpus_page_has_an_expectation():
    files = corpus_files(DIR)
    if not files:
        corpus_path(DIR)  # skips with the reason when the corpus is absent
    assert sorted(files) == sorted(EXPECTED)


@pytest.mark.parametrize("name", corpus_cases(DIR))
def test_corpus_page(name, options):
    status, count, first_title, first_url = EXPECTED[name]
    parsed = _parse(corpus_path(DIR, name).read_bytes(), options)
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert parsed.rows[0].title == first_title
    assert parsed.rows[0].url == first_url
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    for row in parsed.rows:
        assert row.title.strip() == row.title and row.title
        assert row.url.startswith(("http://", "https://"))
        assert "duckduckgo.com/l/" not in row.url and "duckduckgo.com/y.js" not in row.url
        assert row.snippet  # every lite row has a result-snippet cell
    assert parsed.follow_up is None


def test_corpus_utf16_page_decodes(options):
    body = corpus_path(DIR, "tinker__latest-ai-news__UTF16LE.html").read_bytes()
    assert body.startswith(b"\xff\xfe")
    parsed = _parse(body, options)
    assert parsed.rows[1].title == "AI News | Latest Headlines and Developments | Reuters"
    assert parsed.rows[1].url == "https://www.reuters.com/technology/artificial-intelligence/"


def test_corpus_utf16_page_misdecoded_by_transport_is_recovered(options):
    body = corpus_path(DIR, "tinker__latest-ai-news__UTF16LE.html").read_bytes()
    parsed = _parse(body, options, encoding="latin-1")
    assert parsed.status == "ok"
    assert len(parsed.rows) == 10


def test_corpus_timestamps_become_dates(options):
    body = corpus_path(DIR, "spacey__site-nasa-spacex-wikipedia-voyager-1-launch.html").read_bytes()
    rows = _parse(body, options).rows
    assert rows[0].date == date(2026, 4, 17)
    assert rows[1].date is None
    assert rows[8].title == "Mission Overview - NASA Science"
    assert rows[8].date == date(2026, 1, 7)


def test_corpus_snippet_text(options):
    rows = _parse(corpus_path(DIR, "alouette__tauri-v2.html").read_bytes(), options).rows
    assert rows[0].snippet.startswith("Bring your existing web stack to Tauri or start that new dream project.")
    assert rows[0].snippet.endswith("all from a single codebase.")


# --- hand-written pages ----------------------------------------------------

def _row(n: int, href: str, title: str, snippet: str, cls: str = "", stamp: str = "") -> str:
    tr = f'<tr class="{cls}">' if cls else "<tr>"
    stamp_html = f"<span class='timestamp'>{stamp}</span>" if stamp else ""
    return (
        f"{tr}<td valign='top'>{n}.&nbsp;</td><td><a rel='nofollow' href='{href}' class='result-link'>{title}</a></td></tr>"
        f"{tr}<td>&nbsp;</td><td class='result-snippet'>{snippet}</td></tr>"
        f"{tr}<td>&nbsp;</td><td><span class='link-text'>x</span>{stamp_html}</td></tr>"
        "<tr><td>&nbsp;</td><td>&nbsp;</td></tr>"
    )


def _page(rows: str) -> bytes:
    return f"<html><body><table border='0'>{rows}</table></body></html>".encode()


def test_sponsored_rows_are_skipped(options):
    body = _page(
        _row(1, "https://ads.example/buy", "Buy now", "ad text", cls="result-sponsored")
        + _row(2, "https://example.org/a", "Organic A", "text a")
        + _row(3, "https://duckduckgo.com/y.js?ad_domain=shop.example&u3=x", "Shop ad", "ad")
        + _row(4, "https://example.org/b", "Organic B", "text b")
    )
    parsed = _parse(body, options)
    assert parsed.status == "ok"
    assert [(r.title, r.url, r.position) for r in parsed.rows] == [
        ("Organic A", "https://example.org/a", 1), ("Organic B", "https://example.org/b", 2)]
    assert parsed.rows[0].snippet == "text a"


def test_sponsored_class_on_snippet_row_only_is_skipped(options):
    body = _page(
        "<tr><td>1.</td><td><a class='result-link' href='https://ads.example/x'>Ad</a></td></tr>"
        "<tr class='result-sponsored'><td></td><td class='result-snippet'>ad</td></tr>"
        + _row(2, "https://example.org/a", "Organic", "text")
    )
    assert [r.title for r in _parse(body, options).rows] == ["Organic"]


def test_uddg_redirect_links_are_unwrapped(options):
    body = _page(_row(1, "//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fpage%3Fa%3D1&rut=abc",
                      "Wrapped", "s"))
    assert _parse(body, options).rows[0].url == "https://example.org/page?a=1"


def test_relative_timestamp_uses_options_now(options):
    body = _page(_row(1, "https://example.org/a", "A", "s", stamp="3 days ago"))
    assert _parse(body, options).rows[0].date == date(2026, 11, 26)


def test_status_202_is_ratelimited(options):
    parsed = _parse(b"", options, status=202, headers={"Retry-After": "30"})
    assert parsed.status == "ratelimited"
    assert parsed.retry_after == 30.0


def test_anomaly_page_is_blocked(options):
    body = (b"<html><body><div class='anomaly-modal__title'>Unfortunately, bots use DuckDuckGo too.</div>"
            b"<form id='challenge-form' action='//duckduckgo.com/anomaly.js'></form></body></html>")
    parsed = _parse(body, options)
    assert parsed.status == "blocked"
    assert "anomaly" in parsed.detail


def test_no_results_page_is_empty(options):
    body = (b"<html><body><form action='/lite/' method='post'><input name='q' value='zzqx'></form>"
            b"<table border='0'><tr><td>&nbsp;</td><td>No results.</td></tr></table></body></html>")
    parsed = _parse(body, options)
    assert parsed.status == "empty"
    assert parsed.rows == ()


def test_page_with_only_ads_is_not_empty(options):
    body = _page(_row(1, "https://ads.example/x", "Ad", "ad", cls="result-sponsored"))
    parsed = _parse(body, options)
    assert parsed.status == "error"
    assert "page not understood" in parsed.detail


@pytest.mark.parametrize("status,expected", [(429, "ratelimited"), (403, "blocked"), (500, "error"),
                                             (503, "error"), (302, "error")])
def test_http_statuses(status, expected, options):
    assert _parse(b"<html></html>", options, status=status).status == expected


def test_link_without_href_is_dropped(options):
    body = _page("<tr><td>1.</td><td><a class='result-link'>No href</a></td></tr>"
                 + _row(2, "https://example.org/a", "A", "s"))
    assert [r.url for r in _parse(body, options).rows] == ["https://example.org/a"]
