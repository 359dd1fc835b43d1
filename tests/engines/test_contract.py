"""The engine contract every engine shares (engines/base.py, engines/scraped.py, engines/regions.py):
central HTTP classification, parser failures that say where, the options an engine cannot honour."""

from __future__ import annotations

import email.utils
import inspect
import re
import time

import pytest

from conftest import response_from_bytes
from engines import ENGINES, baidu
from engines.base import Headers, Parsed, SearchOptions, parse_retry_after
from engines.regions import REGIONS, region_tag

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
