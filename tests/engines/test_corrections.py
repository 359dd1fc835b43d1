"""Spelling corrections engines show ("Including results for", "Did you mean", 已显示…的搜索结果).

No page in ../shared/serp-corpus shows one (checked: the strings occur there only in CSS and UI-string
tables), so these pages are hand-made and minimal, in the markup public scrapers select (cited in each
engine module). A correction equal to the query, or no notice at all, is None.
"""

from __future__ import annotations

import json

import pytest

from conftest import response_from_bytes
from engines import ENGINES
from engines.base import SearchOptions

BING_ROW = ('<li class="b_algo"><h2><a href="https://developer.mozilla.org/en-US/docs/Web/JavaScript">'
            'JavaScript | MDN</a></h2><div class="b_caption"><p>JavaScript tutorial</p></div></li>')
BING = ('<ol id="b_results"><li class="b_ans"><div id="sp_requery">Including results for '
        '<a href="/search?q=javascript+tutorial"><strong>javascript tutorial</strong></a>.</div>'
        '<div id="sp_recourse">Do you want results only for <a href="/search?q=javascrpt+tutorail&nfpr=1">'
        'javascrpt tutorail</a>?</div></li>' + BING_ROW + '</ol>')
DDG = ('<div class="msg msg--spelling"><div id="did_you_mean">Including results for '
       '<a href="/html/?q=javascript+tutorial"><b>javascript tutorial</b></a>.</div></div>'
       '<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" '
       'href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fjavascript.info%2F">The Modern JavaScript Tutorial</a></h2>'
       '<a class="result__snippet">How it is done now</a></div>')
BRAVE = ('<div class="altered-query"><div class="h6">Showing results for <a href="/search?q=javascript+tutorial">'
         'javascript tutorial</a></div></div><div class="snippet" data-type="web"><a href="https://javascript.info/">'
         '<div class="title search-snippet-title">The Modern JavaScript Tutorial</div></a>'
         '<div class="generic-snippet"><div class="content">How it is done now</div></div></div>')
BAIDU_ROW = ('<div class="result c-container" tpl="www_index" mu="https://www.runoob.com/js/js-tutorial.html">'
             '<h3><a href="http://www.baidu.com/link?url=X">JavaScript 教程 | 菜鸟教程</a></h3></div>')
BAIDU = ('<div id="content_left"><div id="super_se_tip"><div><span>已显示“<strong>javascript教程</strong>”'
         '的搜索结果。仍然搜索：<a href="/s?wd=javascrpt%E6%95%99%E7%A8%8B"><strong class="c-color">javascrpt教程'
         '</strong></a></span></div></div>' + BAIDU_ROW + '</div>')


@pytest.mark.parametrize(("engine", "page", "asked", "corrected"), [
    ("bing", BING, "javascrpt tutorail", "javascript tutorial"),
    ("bing-cn", BING, "javascrpt tutorail", "javascript tutorial"),
    ("duckduckgo-html", DDG, "javascrpt tutorail", "javascript tutorial"),
    ("brave", BRAVE, "javascrpt tutorail", "javascript tutorial"),
    ("baidu", BAIDU, "javascrpt教程", "javascript教程"),
])
def test_scraped_engines_read_their_correction(engine, page, asked, corrected):
    parsed = ENGINES[engine].parse(response_from_bytes(f"<html><body>{page}</body></html>".encode()), asked,
                                   SearchOptions())
    assert parsed.status == "ok" and parsed.rows
    assert parsed.correction == corrected


def test_baidu_skips_the_link_back_to_the_asked_query():
    # The notice's second strong is the original query: never taken as the correction.
    page = BAIDU.replace("<strong>javascript教程</strong>", "javascrpt教程")
    parsed = ENGINES["baidu"].parse(response_from_bytes(f"<html><body>{page}</body></html>".encode()),
                                    "javascrpt教程", SearchOptions())
    assert parsed.correction is None


@pytest.mark.parametrize(("engine", "page"), [
    ("bing", "<ol>" + BING_ROW + "</ol>"),
    ("baidu", BAIDU_ROW),
])
def test_no_notice_no_correction(engine, page):
    parsed = ENGINES[engine].parse(response_from_bytes(f"<html><body>{page}</body></html>".encode()), "q",
                                   SearchOptions())
    assert parsed.status == "ok" and parsed.correction is None


def test_a_notice_that_repeats_the_query_is_no_correction():
    parsed = ENGINES["bing"].parse(response_from_bytes(f"<html><body>{BING}</body></html>".encode()),
                                   "JavaScript  Tutorial", SearchOptions())
    assert parsed.correction is None


def test_brave_api_altered_query():
    body = {"type": "search", "query": {"original": "javascrpt tutorail", "altered": "javascript tutorial"},
            "web": {"results": [{"title": "JavaScript", "url": "https://javascript.info/", "description": "d"}]}}
    parsed = ENGINES["brave-api"].parse(response_from_bytes(json.dumps(body).encode()), "javascrpt tutorail",
                                        SearchOptions(api_key="k"))
    assert parsed.correction == "javascript tutorial"
    del body["query"]["altered"]
    assert ENGINES["brave-api"].parse(response_from_bytes(json.dumps(body).encode()), "javascrpt tutorail",
                                      SearchOptions(api_key="k")).correction is None


def test_searxng_relays_the_first_correction():
    body = {"results": [{"title": "JavaScript", "url": "https://javascript.info/", "content": "c"}],
            "corrections": ["javascrpt tutorail", "javascript tutorial"]}
    parsed = ENGINES["searxng"].parse(response_from_bytes(json.dumps(body).encode()), "javascrpt tutorail",
                                      SearchOptions(base_url="http://127.0.0.1:8888"))
    assert parsed.correction == "javascript tutorial"
