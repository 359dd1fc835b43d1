"""The engine contract every engine shares (engines/base.py, engines/scraped.py, engines/regions.py):
central HTTP classification, parser failures that say where, the options an engine cannot honour, and
the properties every parser keeps whatever it is sent (one test each, parametrised over every engine;
what only one engine does stays in that engine's file)."""

from __future__ import annotations

import email.utils
import inspect
import json
import re
import time
from urllib.parse import urlencode

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXED_NOW, response_from_bytes
from engines import ENGINES, baidu
from engines.base import NOT_UNDERSTOOD, Headers, Parsed, SearchOptions, parse_retry_after
from engines.regions import REGIONS, region_tag
from properties import not_understood_unless_json, well_formed

BAIDU_PAGE = ('<html><body><div class="result-op c-container" tpl="www_index" mu="https://example.cn/a">'
              '<h3><a href="http://www.baidu.com/link?url=A">A</a></h3></div></body></html>').encode()


# --- parser failures ---------------------------------------------------------

def test_a_parser_crash_names_the_engine_line_and_keeps_the_traceback(monkeypatch):
    def broken(block, url):
        raise TypeError("boom")

    monkeypatch.setattr(baidu, "_card_is_result", broken)
    parsed = ENGINES["baidu"].parse(response_from_bytes(BAIDU_PAGE), "q", SearchOptions())
    source, first_line = inspect.getsourcelines(baidu.Baidu.extract)
    call = first_line + next(i for i, line in enumerate(source) if "_card_is_result(" in line)
    assert parsed.status == "error"
    assert parsed.detail == f"parser failure at engines/baidu.py:{call} (TypeError)"
    assert parsed.failure is not None and "Traceback" in parsed.failure and "boom" in parsed.failure
    assert parsed.rows == ()


def test_a_crash_in_a_shared_helper_names_the_innermost_engines_frame(monkeypatch):
    from engines import scraped

    def broken(tree, limit=8000):
        raise ValueError("bad")

    monkeypatch.setattr(scraped, "page_text", broken)
    parsed = ENGINES["bing"].parse(response_from_bytes(b"<html><body>nothing</body></html>"), "q", SearchOptions())
    assert re.fullmatch(r"parser failure at engines/scraped\.py:\d+ \(ValueError\)", parsed.detail)


def test_failure_is_not_part_of_equality_and_unset_on_normal_outcomes():
    assert Parsed("error", detail="x", failure="Traceback ...") == Parsed("error", detail="x")
    assert ENGINES["bing"].parse(response_from_bytes(b"<html></html>"), "q", SearchOptions()).failure is None


# --- HTTP status, classified once in the base ---------------------------------

@pytest.mark.parametrize("name", sorted(ENGINES))
@pytest.mark.parametrize(("status", "expected"), [(429, "ratelimited"), (500, "error")])
def test_every_engine_classifies_statuses_through_the_base(name, status, expected):
    # (Startpage's home page is the one page whose failure does not stop the search: ask for results.)
    url = "https://www.startpage.com/sp/search" if name == "startpage" else "https://example.invalid/"
    parsed = ENGINES[name].parse(response_from_bytes(b"{}", url=url, status=status, headers={"Retry-After": "7"}),
                                 "q", SearchOptions(api_key="k", base_url="http://127.0.0.1:9"))
    assert parsed.status == expected
    assert parsed.failure is None
    if status == 429:
        assert parsed.retry_after == 7.0


def test_retry_after_as_an_http_date_is_the_seconds_until_then():
    # RFC 9110 allows Retry-After as delta-seconds or as an HTTP-date; the date means "wait until then".
    now = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC
    assert parse_retry_after(email.utils.formatdate(now + 7200, usegmt=True), now=now) == 7200.0
    assert parse_retry_after(email.utils.formatdate(now - 60, usegmt=True), now=now) == 0.0  # already past
    assert parse_retry_after("soon", now=now) is None and parse_retry_after("", now=now) is None
    # Through an engine, against the clock: an hour ahead is close to an hour, never 0.
    ahead = email.utils.formatdate(time.time() + 3600, usegmt=True)
    parsed = ENGINES["bing"].parse(response_from_bytes(b"", status=429, headers={"Retry-After": ahead}),
                                   "q", SearchOptions())
    assert parsed.status == "ratelimited" and 3000 < parsed.retry_after <= 3600


def test_engines_that_give_a_status_their_own_meaning_override_it():
    ddg = ENGINES["duckduckgo-html"].parse(response_from_bytes(b"", status=202), "q", SearchOptions())
    yahoo = ENGINES["yahoo"].parse(response_from_bytes(b"", status=999), "q", SearchOptions())
    searxng = ENGINES["searxng"].parse(response_from_bytes(b"", status=403), "q", SearchOptions(base_url="h"))
    assert (ddg.status, yahoo.status, searxng.status) == ("ratelimited", "ratelimited", "error")
    assert "format=json" in searxng.detail


def test_headers_are_case_insensitive():
    headers = Headers({"Retry-After": "5", "X-RateLimit-Reset": "1, 2"})
    assert headers.get("retry-after") == "5" and headers["RETRY-AFTER"] == "5" and "x-ratelimit-reset" in headers
    assert Headers().get("location", "") == "" and Headers(None) == Headers({})


# --- options an engine does not honour ----------------------------------------

def test_safesearch_notes():
    assert ENGINES["baidu"].ignored_options(SearchOptions(safesearch="strict")) == ["safesearch strict not supported"]
    assert ENGINES["baidu"].ignored_options(SearchOptions(safesearch="moderate")) == []
    assert ENGINES["mojeek"].ignored_options(SearchOptions(safesearch="strict")) == [
        "safesearch strict not supported; used moderate"]
    assert ENGINES["bing"].ignored_options(SearchOptions(safesearch="strict")) == []


def test_region_notes():
    assert ENGINES["bing"].ignored_options(SearchOptions(region="de-DE")) == []
    assert ENGINES["duckduckgo-html"].ignored_options(SearchOptions(region="xx-YY")) == [
        "region xx-YY not supported; used no region (wt-wt)"]
    assert ENGINES["bing-cn"].ignored_options(SearchOptions(region="en-US")) == [
        "region en-US not supported; used zh-CN"]
    assert ENGINES["baidu"].ignored_options(SearchOptions(region="zh_cn")) == []
    assert ENGINES["tavily"].ignored_options(SearchOptions(region="en-US")) == [
        "region en-US not supported; used worldwide"]
    assert ENGINES["exa"].ignored_options(SearchOptions(region="pt-BR")) == []  # any country, by rule
    assert ENGINES["yahoo"].ignored_options(SearchOptions(region="ja-JP")) == [
        "region ja-JP not supported; used search.yahoo.com (US)"]  # Yahoo! JAPAN is another engine


def test_time_range_and_site_notes():
    assert ENGINES["yahoo"].ignored_options(SearchOptions(time_range="year")) == [
        "time range year not supported by the engine; rows filtered by date"]
    assert ENGINES["yahoo"].ignored_options(SearchOptions(time_range="week")) == []
    assert ENGINES["wikipedia"].ignored_options(SearchOptions(site="python.org")) == [
        "site: not supported by the engine; rows filtered by URL"]


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_region_tables_speak_the_vocabulary(name):
    """Every table key is a vocabulary tag spelled as the vocabulary spells it, so lookups cannot miss."""
    regions = ENGINES[name].facts.regions
    if regions is None:
        return
    for tag in regions:
        assert region_tag(tag) == tag and tag in REGIONS, tag


def test_ddg_region_table_covers_more_than_the_old_map():
    def kl(region):
        return dict(ENGINES["duckduckgo-html"].build("q", SearchOptions(region=region)).form)["kl"]

    assert (kl("en-AU"), kl("es-MX"), kl("zh-TW"), kl("de-CH"), kl("en_gb")) == (
        "au-en", "mx-es", "tw-tzh", "ch-de", "uk-en")


def test_region_tag_spelling():
    assert [region_tag(t) for t in ("EN_us", "zh-Hans-CN", "en", "", "pt-br")] == [
        "en-US", "zh-CN", "en", "", "pt-BR"]


# --- what every parser keeps, whatever it is sent --------------------------------

NAMES = sorted(ENGINES)
KEY, INSTANCE = "test-key-123", "http://127.0.0.1:9"
OPTIONS = SearchOptions(api_key=KEY, base_url=INSTANCE, now=FIXED_NOW)


def _results_url(name: str) -> str:
    """The address of the page an engine answers a search with (Startpage's first request is for its home
    page, which lends a token: the results come from the request after it)."""
    if name == "startpage":
        return "https://www.startpage.com/sp/search"
    request = ENGINES[name].build("q", OPTIONS)
    return request.url + ("?" + urlencode(request.params) if request.params else "")


RESULTS_URL = {name: _results_url(name) for name in NAMES}
# Parsers may read the address they were answered from: besides the results page, the first request's,
# another host (an endpoint override), none.
OTHER_URLS = {name: tuple(dict.fromkeys((ENGINES[name].build("q", OPTIONS).url, "https://example.invalid/", "")))
              for name in NAMES}


def _parse(name: str, body: bytes, url: str | None = None, status: int = 200) -> Parsed:
    response = response_from_bytes(body, url=RESULTS_URL[name] if url is None else url, status=status)
    return ENGINES[name].parse(response, "q", OPTIONS)


# Bodies no engine may take for its results: not a page at all, JSON or HTML that is no answer, and near
# misses of each engine's own page (its markup or JSON shape with the title, the link or the results
# missing or of the wrong type). Every engine calls each one "page not understood", with no rows and
# nothing to follow, except where the body means something to that engine.
GARBAGE = (
    # not a page
    b"", b"\x00\xff garbage", b"\x00\xff\xfe garbage \x81", b"\x00\xff\xfe garbage \x89PNG", b"\x00\x01 garbage",
    b"\x00\x01\x02 garbage", b"\x1f\x8b\x08\x00garbage", b"nope", b"not json", b"{", b"{{", b"}{",
    # JSON that is no answer
    b"[]", b"[1, 2, 3]", b"null", b"true", b"0", b"1", b"42", b'"a string"', b'{"json": true}', b'{"query": "x"}',
    b'{"requestId": "x"}', b'{"feed": {"entry": []}}', b'{"results": []}',
    # HTML that is no results page
    b"<html>", b"<html></html>", b"<html><body></body></html>", b"<html><body><p>Hello</p></body></html>",
    b"<html>error</html>", b"<html><body>Cloudflare</body></html>",
    b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    # near misses of scraped pages: a result block without its title or link (baidu, brave, mojeek, 360, sogou)
    b"<html><body><div class='c-container'><p>no title</p></div></body></html>",
    b"<div data-type='web'><a>no href</a></div>",
    b"<html><body><ul class='results-standard'><li><h2>no link</h2></li></ul></body></html>",
    b"<html><body><ul class='result'><li class='res-list'><p>x</p></li></ul></body></html>",
    b"<html><body><div class='vrwrap'><p>no title</p></div></body></html>",
    # near misses of JSON answers (brave-api, exa, firecrawl, serper, tavily, searxng, wikipedia)
    b'{"type":"ErrorResponse"}', b'{"web": []}', b'{"web": {"results": {}}}',
    b'{"type": "search", "web": {"type": "search"}}',
    b'{"type": "search", "web": {"results": [{"title": "x"}, 3, null]}}',
    b'{"results": "nope"}', b'{"results": {"a": 1}}',
    b'{"results": [null, 1, "x", {"url": 5}, {"title": "t", "url": "javascript:alert(1)"}]}',
    b'{"results": [{"title": null, "url": "https://a.example/"}]}',
    b'{"success": true}', b'{"data": {"web": {}}}', b'{"data": "x"}',
    b'{"success": true, "data": {"web": [{"title": "t"}, 5]}}',
    b'{"organic": {}}', b'{"organic": "x"}', b'{"answerBox": {"answer": "42"}}',
    b'{"organic": [{"title": "t"}, {"link": "https://a.example/"}, null]}',
    b'{"results": null}', b'{"results": "x"}', b'{"results": [{"title": "no url"}]}',
    b'{"results": [{"url": "ftp://x.example/"}]}',
    b'{"results": {}}', b'{"results": [{"title": "no url"}, {"url": 5}, null]}',
    b'{"batchcomplete": true}', b'{"query": {"search": {}}}', b'{"query": []}',
    b'{"query": {"search": [{"title": 5}, {"title": ""}, null]}}',
)


def means_something(name: str, body: bytes) -> bool:
    """The few bodies that are no garbage to one engine: a blank page is 360's answer to some addresses,
    with its own verdict (test_so360.py); to exa, tavily and searxng `{"results": []}` is no results."""
    if name == "so360":
        return not response_from_bytes(body).text.strip()
    return name in ("exa", "tavily", "searxng") and body == b'{"results": []}'


@pytest.mark.parametrize("name", NAMES)
def test_garbage_is_classified(name):
    for body in GARBAGE:
        if means_something(name, body):
            continue
        parsed = well_formed(_parse(name, body))
        assert (parsed.status, parsed.rows, parsed.follow_up) == ("error", (), None), body
        assert parsed.detail.startswith(NOT_UNDERSTOOD), (body, parsed.detail)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=scaled(100), deadline=None)
@given(body=st.binary(max_size=4000), data=st.data())
def test_parse_never_raises_on_random_bytes(name, body, data):
    parsed = well_formed(_parse(name, body))
    if not means_something(name, body):
        not_understood_unless_json(parsed, body)
    well_formed(_parse(name, body, url=data.draw(st.sampled_from(OTHER_URLS[name]), label="url")))


# The words each engine's answers are made of, so that random JSON often has the answer's shape; an engine
# not listed gets them all.
JSON_KEYS = {
    "brave-api": ("type", "web", "results", "title", "url", "description", "page_age", "age", "error", "code"),
    "exa": ("results", "title", "url", "highlights", "text", "publishedDate", "error"),
    "firecrawl": ("success", "data", "web", "title", "url", "description", "metadata", "sourceURL", "error"),
    "serper": ("searchParameters", "organic", "title", "link", "snippet", "date", "message"),
    "tavily": ("results", "title", "url", "content", "published_date", "detail", "error"),
    "searxng": ("results", "title", "url", "content", "publishedDate", "unresponsive_engines"),
    "wikipedia": ("query", "search", "title", "snippet", "timestamp", "error", "code", "info"),
}
ALL_JSON_KEYS = tuple(sorted({key for keys in JSON_KEYS.values() for key in keys}))
JSON_STATUSES = (200, 400, 401, 402, 403, 422, 429, 432, 500)


def _json_values(keys: tuple[str, ...]) -> st.SearchStrategy:
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(keys), children,
                                                                          max_size=5),
        max_leaves=20)


JSON_VALUES = {name: _json_values(JSON_KEYS.get(name, ALL_JSON_KEYS)) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_never_raises_on_any_json(name):
    # Engines that answer in JSON get many examples; to a scraped engine JSON is one more page it does
    # not know, and a few examples check the HTTP status still decides.
    @settings(max_examples=scaled(150 if name in JSON_KEYS else 25), deadline=None)
    @given(value=JSON_VALUES[name], status=st.sampled_from(JSON_STATUSES))
    def check(value, status):
        parsed = well_formed(_parse(name, json.dumps(value).encode(), status=status))
        if parsed.status == "blocked":  # only an HTTP status says so, never a JSON body; a keyed API never does
            assert status in (401, 403) and ENGINES[name].facts.key_env is None, (status, parsed.detail)

    check()


# --- keys and instances -------------------------------------------------------

# The variable that enables each engine that needs one (a contract: the README and the settings name them).
VARIABLES = {"exa": "EXA_API_KEY", "tavily": "TAVILY_API_KEY", "brave-api": "BRAVE_API_KEY",
             "serper": "SERPER_API_KEY", "firecrawl": "FIRECRAWL_API_KEY", "searxng": "METASEARCH_SEARXNG_URL"}


@pytest.mark.parametrize("name", NAMES)
def test_disabled_reason_names_the_variable(name):
    engine, variable = ENGINES[name], VARIABLES.get(name)
    assert (engine.facts.key_env or engine.facts.url_env) == variable
    reason = engine.disabled_reason(SearchOptions())
    if variable is None:
        assert reason is None  # keyless: runs as installed
        return
    assert reason is not None and variable in reason
    with_key, with_instance = SearchOptions(api_key=KEY), SearchOptions(base_url=INSTANCE)
    enabling, other = (with_instance, with_key) if engine.facts.url_env else (with_key, with_instance)
    assert engine.disabled_reason(enabling) is None
    assert engine.disabled_reason(other) is not None  # the other setting does not stand in for it
