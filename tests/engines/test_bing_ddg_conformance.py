"""Parser conformance on real pages: DuckDuckGo HTML, Bing and Bing China (../shared/serp-corpus)."""

from __future__ import annotations

import pytest

from corpus_cases import ABSENT
from conftest import CORPUS, FIXED_NOW, corpus_files, corpus_path, response_from_bytes
from engines import ENGINES
from engines.base import SearchOptions

# file -> (status, organic rows a person sees, first title, first URL)
EXPECTED = {
    ("duckduckgo-html", "bisohns__hello.html"): (
        "ok", 28, "Hello | Definition of Hello by Merriam-Webster", "https://www.merriam-webster.com/dictionary/hello"),
    ("duckduckgo-html", "friday__CAPTCHA-html-endpoint.html"): ("blocked", 0, None, None),
    ("duckduckgo-html", "kaiz__onimai.html"): ("ok", 10, "Onimai - Wikipedia", "https://en.wikipedia.org/wiki/Onimai"),
    ("duckduckgo-html", "lagersystem__booster-product-png.html"): (
        "ok", 10, "Booster PNG, Vector And Transparent Clipart Images", "https://pngtree.com/free-png-vectors/booster"),
    ("duckduckgo-html", "meuwhatsapp__site-instagram-imobiliaria-sao-paulo-whatsapp__NO-RESULTS.html"): (
        "empty", 0, None, None),
    ("duckduckgo-html", "scrapecraft__artificial-intelligence-trends.html"): (
        "ok", 10, "The Top Artificial Intelligence Trends | IBM",
        "https://www.ibm.com/think/insights/artificial-intelligence-trends"),
    ("bing", "bisohns__hello.html"): (
        "ok", 9, "HELLO! - Daily royal, celebrity, fashion, beauty ...", "https://www.hellomagazine.com/"),
    ("bing", "deepthink__site-microsoft-com-not-www.html"): (
        "ok", 8, "Microsoft Support", "https://support.microsoft.com/en-us"),
    ("bing", "deepthink__site-microsoft-com-not-www_2.html"): (
        "ok", 10, "Microsoft Support", "https://support.microsoft.com/en-us"),
    ("bing", "kaiz__onimai-wiki.html"): (
        "ok", 10, "Onii-chan wa Oshimai! Wiki | Fandom",
        "https://oniichan-wa-oshimai.fandom.com/wiki/Onii-chan_wa_Oshimai!_Wiki"),
    ("bing", "kaiz__tinh-hinh-thoi-tiet.html"): (
        "ok", 10, "99+ Bài Thơ Tình Ngọt Ngào Khiến Trái Tim Tan Chảy", "https://chanhtuoi.com/tho-tinh.html"),
    ("bing", "moa__hi.html"): (
        "ok", 10, "打招呼用 Hello 跟用 Hi 或者用 Hey 的区别是什么？ - 知乎", "https://www.zhihu.com/question/21949948"),
    ("bing", "sescraper__test-keyword.html"): (
        "ok", 6, "Keyword Tests | TestComplete Documentation",
        "https://support.smartbear.com/testcomplete/docs/keyword-testing/index.html"),
    ("bing", "websearchmcp__javascript-tutorial.html"): (
        "ok", 10, "JavaScript Tutorial - W3Schools", "https://www.w3schools.com/Js/"),
    ("bing", "websearchmcp__javascript-tutorial__CAPTCHA.html"): ("blocked", 0, None, None),
    ("bing-cn", "deepseekagent__bilibili.html"): ("ok", 10, "哔哩哔哩 (゜-゜)つロ 干杯~-bilibili", "https://www.bilibili.com/"),
    ("bing-cn", "easybooknote__shoushu-zhibojian-biquge-mulu.html"): (
        "ok", 10, "《永劫无间》官网 | S19穿云赛季上线", "https://www.yjwujian.cn/"),
    ("bing-cn", "msv__site-imslp-org-mozart__CAPTCHA.html"): ("blocked", 0, None, None),
    # 10 b_algo, then a "Some results are removed in response to a notice of local law requirement" notice.
    ("bing-cn", "freesearchmcp__model-context-protocol.html"): (
        "ok", 10, "MCP (Model Context Protocol)，一篇就够了。 - 知乎", "https://zhuanlan.zhihu.com/p/29001189476"),
}

CASES = [(engine, name) for engine in ("duckduckgo-html", "bing", "bing-cn") for name in corpus_files(engine)] or [
    pytest.param("bing", "(absent)", marks=pytest.mark.skip(reason=ABSENT))]


def test_every_corpus_page_has_an_expectation():
    if not CORPUS.is_dir():
        pytest.skip(ABSENT)
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize(("engine", "name"), CASES)
def test_real_page_parses_to_the_rows_a_person_sees(engine, name):
    body = corpus_path(engine, name).read_bytes()
    parsed = ENGINES[engine].parse(response_from_bytes(body, url="https://www.bing.com/search"), "",
                                   SearchOptions(now=FIXED_NOW))
    status, count, title, url = EXPECTED[(engine, name)]
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    if count:
        assert (parsed.rows[0].title, parsed.rows[0].url) == (title, url)
    for position, row in enumerate(parsed.rows, start=1):
        assert row.position == position
        assert row.title.strip()
        assert row.url.startswith(("http://", "https://"))
        assert "duckduckgo.com/l/" not in row.url and "bing.com/ck/a" not in row.url


def test_bing_dates_are_read_from_the_snippet():
    body = corpus_path("bing-cn", "easybooknote__shoushu-zhibojian-biquge-mulu.html").read_bytes()
    parsed = ENGINES["bing-cn"].parse(response_from_bytes(body), "", SearchOptions(now=FIXED_NOW))
    assert str(parsed.rows[0].date) == "2026-11-26"  # "3 days ago ·" relative to the fixed now
    assert str(parsed.rows[1].date) == "2025-08-04"  # "Aug 4, 2025 ·"


def test_bing_date_is_the_stamp_not_a_date_inside_the_first_sentence():
    body = corpus_path("bing-cn", "freesearchmcp__model-context-protocol.html").read_bytes()
    rows = ENGINES["bing-cn"].parse(response_from_bytes(body), "", SearchOptions(now=FIXED_NOW)).rows
    # "MCP 起源于 2024 年 11 月 25 日 Anthropic 发布的文章： ..." shows no date stamp.
    assert rows[0].date is None
    assert str(rows[1].date) == "2026-07-28"  # "Jul 28, 2026 · MCP (Model Context Protocol) is ..."
    assert str(rows[6].date) == "2026-11-23"  # "6 days ago ·"


def test_ddg_dates_come_from_the_extras_span():
    body = corpus_path("duckduckgo-html", "scrapecraft__artificial-intelligence-trends.html").read_bytes()
    parsed = ENGINES["duckduckgo-html"].parse(response_from_bytes(body), "", SearchOptions(now=FIXED_NOW))
    assert str(parsed.rows[1].date) == "2024-09-24"


def test_ddg_ads_are_excluded():
    body = corpus_path("duckduckgo-html", "lagersystem__booster-product-png.html").read_bytes()
    parsed = ENGINES["duckduckgo-html"].parse(response_from_bytes(body), "", SearchOptions())
    assert all("y.js" not in row.url and "duckduckgo.com" not in row.url for row in parsed.rows)


# ----- hand-written pages: the classification logic without the corpus -----
def _parse(engine: str, html: str, status: int = 200, headers=None):
    return ENGINES[engine].parse(response_from_bytes(html.encode(), status=status, headers=headers), "",
                                 SearchOptions())


def test_page_without_results_or_no_results_message_is_an_error_not_empty():
    for engine in ("bing", "bing-cn", "duckduckgo-html"):
        parsed = _parse(engine, "<html><body><div id='new-layout'>something else</div></body></html>")
        assert parsed.status == "error" and "not understood" in parsed.detail


def test_no_results_pages_are_empty():
    assert _parse("bing", '<ol id="b_results"><li class="b_no"><h1>There are no results for '
                          '<strong>zzqx</strong></h1></li></ol>').status == "empty"
    assert _parse("duckduckgo-html", '<div class="result result--no-result"><div class="no-results">'
                                     'No results.</div></div>').status == "empty"


def test_bing_h2_without_link_takes_the_header_anchor():
    html = ('<ol><li class="b_algo"><div class="b_algoheader"><a href="https://learn.microsoft.com/">'
            '<h2>Microsoft Learn</h2></a></div><div class="b_caption"><p>Build skills</p></div></li></ol>')
    parsed = _parse("bing", html)
    assert [(r.title, r.url, r.snippet) for r in parsed.rows] == [
        ("Microsoft Learn", "https://learn.microsoft.com/", "Build skills")]


def test_bing_ck_wrapper_is_unwrapped():
    import base64

    target = "https://docs.python.org/3/"
    wrapped = ("https://www.bing.com/ck/a?!&&p=abc&u=a1" + base64.urlsafe_b64encode(target.encode()).decode()
               .rstrip("=") + "&ntb=1")
    html = f'<ol><li class="b_algo"><h2><a href="{wrapped}">Python docs</a></h2></li></ol>'
    assert _parse("bing", html).rows[0].url == target


def test_http_statuses_classify():
    assert _parse("bing", "", status=429, headers={"Retry-After": "120"}).status == "ratelimited"
    assert _parse("bing", "", status=429, headers={"Retry-After": "120"}).retry_after == 120
    assert _parse("bing", "", status=503).status == "error"
    assert _parse("bing", "", status=403).status == "blocked"
    assert _parse("duckduckgo-html", "", status=202).status == "ratelimited"


def test_ddg_request_is_a_form_post_with_options():
    from datetime import datetime

    request = ENGINES["duckduckgo-html"].build("python", SearchOptions(region="zh-CN", time_range="week",
                                                                       safesearch="strict", site="python.org",
                                                                       now=datetime(2026, 1, 1)))
    form = dict(request.form)
    assert request.method == "POST" and request.url == "https://html.duckduckgo.com/html/"
    assert form == {"q": "python site:python.org", "b": "", "kl": "cn-zh", "df": "w", "kp": "1"}
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert "Mozilla/5.0" in request.headers["User-Agent"]


def test_bing_requests_carry_market_time_and_safesearch():
    from datetime import datetime

    options = SearchOptions(time_range="day", safesearch="off", now=datetime(2026, 1, 1))
    request = ENGINES["bing"].build("rust async", options)
    params = dict(request.params)
    assert request.url == "https://www.bing.com/search"
    assert params["q"] == "rust async" and params["setmkt"] == "en-US" and params["adlt"] == "off"
    assert params["filters"] == 'ex1:"ez1"'
    cn = dict(ENGINES["bing-cn"].build("东数西算", SearchOptions(time_range="year", now=datetime(2026, 1, 1))).params)
    assert ENGINES["bing-cn"].build("x", SearchOptions()).url == "https://cn.bing.com/search"
    assert cn["setmkt"] == "zh-CN" and cn["filters"].startswith('ex1:"ez5_')
