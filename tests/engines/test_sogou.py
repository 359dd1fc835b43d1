"""sogou: request building, real-page conformance (2026), classification of block, empty and broken pages."""

from __future__ import annotations

from datetime import date

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXED_NOW, corpus_files, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.sogou import ENGINE

DIR = "sogou"
PAGE_URL = "https://www.sogou.com/web?query=model+context+protocol&ie=utf8"
REAL_PAGE = "freesearchmcp__model-context-protocol.html"

# file -> (status, rows a person sees, first title, first URL)
# The page has 10 div.vrwrap blocks: 9 results (one of them Sogou's "更多内容_CSDN技术社区" card, whose
# title link and printed address lead to one CSDN article) and "大家还在搜" (related searches). Its two
# React cards (an AI banner, a right-rail Q&A) are not vrwrap blocks.
EXPECTED = {
    REAL_PAGE: ("ok", 9, "Model Context Protocol · GitHub", "https://github.com/modelcontextprotocol"),
}


def _parse(body: bytes | str, options: SearchOptions | None = None, **kwargs):
    if isinstance(body, str):
        body = body.encode("utf-8")
    kwargs.setdefault("url", PAGE_URL)
    return ENGINE.parse(response_from_bytes(body, **kwargs), "q", options or SearchOptions(now=FIXED_NOW))


def _real_page() -> bytes:
    return corpus_path(DIR, REAL_PAGE).read_bytes()


# --- facts -----------------------------------------------------------------

def test_facts():
    facts = ENGINE.facts
    assert facts.name == "sogou"
    assert (facts.tier, facts.weight, facts.region, facts.index) == ("fallback", 0.8, "cjk", "sogou")
    assert not facts.native_site and not facts.native_time  # neither verified on a real page
    assert facts.key_env is None and facts.url_env is None
    assert ENGINE.disabled_reason(SearchOptions()) is None


# --- request building ------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("模型上下文协议", SearchOptions())
    assert request.method == "GET"
    assert request.url == "https://www.sogou.com/web"
    assert request.params == (("query", "模型上下文协议"), ("ie", "utf8"))
    assert request.form is None and request.json is None and request.secrets == ()
    assert request.headers["Accept-Language"].startswith("zh-CN")
    assert request.headers["Referer"] == "https://www.sogou.com/"
    assert "Chrome" in request.headers["User-Agent"]


@pytest.mark.parametrize("time_range, tsn", [("day", "1"), ("week", "2"), ("month", "3"), ("year", "4")])
def test_build_time_range(time_range, tsn):
    request = ENGINE.build("x", SearchOptions(time_range=time_range))
    assert request.params == (("query", "x"), ("ie", "utf8"), ("tsn", tsn), ("sourceid", f"inttime_{time_range}"))


def test_build_page():
    assert ("page", "3") in ENGINE.build("x", SearchOptions(page=3)).params
    assert [name for name, _ in ENGINE.build("x", SearchOptions(page=1)).params] == ["query", "ie"]


def test_build_site_goes_into_query():
    assert ENGINE.build("成都 规划", SearchOptions(site="gov.cn")).params[0] == ("query", "成都 规划 site:gov.cn")


@pytest.mark.parametrize("region, accept", [("zh-TW", "zh-TW"), ("en-US", "zh-CN"), (None, "zh-CN")])
def test_build_region_only_sets_chinese_accept_language(region, accept):
    request = ENGINE.build("x", SearchOptions(region=region))
    assert request.headers["Accept-Language"].startswith(accept)
    assert [name for name, _ in request.params] == ["query", "ie"]


def test_build_count_and_safesearch_have_no_parameter():
    plain = ENGINE.build("x", SearchOptions()).params
    assert ENGINE.build("x", SearchOptions(safesearch="strict", count=50)).params == plain


# --- the real page ---------------------------------------------------------

@pytest.mark.parametrize("name", corpus_files(DIR))
def test_corpus_page(name):
    assert name in EXPECTED, f"new corpus page {name}: add its expectation"
    status, count, first_title, first_url = EXPECTED[name]
    parsed = _parse(corpus_path(DIR, name).read_bytes())
    assert parsed.status == status, parsed.detail
    assert len(parsed.rows) == count
    assert [row.position for row in parsed.rows] == list(range(1, count + 1))
    if count:
        assert parsed.rows[0].title == first_title
        assert parsed.rows[0].url == first_url
    for row in parsed.rows:
        assert row.url.startswith(("https://", "http://")), row.url
        assert "sogou.com" not in row.url, row.url  # real targets, never Sogou's /link?url= wrapper
        assert row.title and row.title.strip() == row.title
        assert "{" not in row.snippet and "<!--" not in row.title + row.snippet


def test_real_page_rows():
    rows = _parse(_real_page()).rows
    assert [row.url for row in rows] == [
        "https://github.com/modelcontextprotocol",
        "https://blog.csdn.net/GaoXinPan/article/details/147283966",
        "https://www.chinaz.com/2025/0402/1678384.shtml",
        "https://www.cnblogs.com/yunlong-study/p/19094390",
        "https://www.cnblogs.com/jingzh/p/18814165",
        "https://www.ithome.com/0/813/441.htm",
        "https://www.bilibili.com/opus/1048660503499374627",
        # A WeChat article: the title link itself points off Sogou.
        "http://mp.weixin.qq.com/s?src=11&timestamp=1791205065&ver=7008&signature=xHPm7TKtuSYQlGCNIPxpqat8ih"
        "iKHN0sMKeMosAP7EGhDFWkEhGZQO-sX6USDuMe739hBFm-m76*Gp*A*O-xb*-xN-MqjuntNKwJDlI-y7YLETDj-ta2rzpc631javpE&new=1",
        "https://download.csdn.net/blog/column/12220857/146982802",
    ]
    assert rows[1].title == "model context protocol的更多内容_CSDN技术社区"
    assert rows[3].title == "模型上下文协议(Model Context Protocol,MCP) - 云long - 博客园"
    assert rows[0].snippet.startswith("Model Context Protocol An open protocol that enables seamless integration")
    assert rows[1].snippet.startswith("MCP协议(Model Context Protocol)深度解析 一、协议基础介绍")
    assert rows[1].snippet.endswith("与外部系统的...")  # the "查看全部" (show all) link is not part of it
    assert rows[3].snippet.startswith("一. MCP 概述 模型上下文协议（Model Context Protocol,MCP），是由Anthropic")
    # Dates as the cite line prints them: "4天前" (relative to now), "2025-04-02", cite-date spans.
    assert [row.date for row in rows] == [
        date(2026, 11, 25), date(2025, 4, 16), date(2025, 4, 2), date(2025, 9, 16), date(2025, 4, 8),
        date(2024, 11, 26), date(2025, 3, 26), date(2026, 9, 28), date(2026, 8, 25)]
    text = " ".join(row.title + " " + row.snippet for row in rows)
    for card_text in ("大家还在搜", "configuration channel", "推荐您搜索", "查看全部"):
        assert card_text not in text


# --- hand-written pages ------------------------------------------------------

def _vrwrap(title: str, href: str, data_url: str = "", shown: str = "", snippet: str = "text",
            extra_class: str = "", cite_date: str = "") -> str:
    cite = (f'<a class="citeLinkClass" href="{href}"><span>Site</span><span>{shown}</span>'
            f'<span class="cite-date">{cite_date}</span></a>') if shown or cite_date else ""
    ext = (f'<div class="r-sech ext_query" style="display:none" data-url="{data_url}"><span>推荐您搜索</span></div>'
           if data_url else "")
    return (f'<div class="vrwrap{extra_class}"><h3 class="vr-title"><a href="{href}">{title}</a></h3>'
            f'<div class="fz-mid space-txt">{snippet}</div>{cite}{ext}</div>')


def _page(*blocks: str) -> str:
    return ('<html><head><title>q - 搜狗搜索</title></head><body><div class="results">' + "".join(blocks)
            + "</div></body></html>")


def test_targets_cards_and_ads():
    page = _page(
        _vrwrap("Real target", "/link?url=AAA", data_url="https://a.example/page", shown="https://a.example/p..."),
        _vrwrap("No printed address", "/link?url=BBB", data_url="https://b.example/x"),
        # The printed address contradicts data-url: no guessing, Sogou's own wrapper is kept.
        _vrwrap("Contradicted", "/link?url=CCC", data_url="https://c.example/x", shown="https://other.example/..."),
        _vrwrap("No data-url", "/link?url=DDD"),
        _vrwrap("Direct link", "https://d.example/article", data_url="https://ignored.example/"),
        _vrwrap("Related search", "?query=related&s_from=hint_middle"),
        _vrwrap("Sogou vertical", "https://pic.sogou.com/web?query=x"),
        '<div class="vrwrap middle-better-hintBox"><div class="vrTitle"><span>大家还在搜</span></div>'
        '<h3><a href="/link?url=HINT">hint</a></h3><div data-url="https://hint.example/"></div></div>',
        '<div id="promotion_adv_container"><div class="vrwrap"><h3><a href="https://ad.example/">Ad</a></h3></div></div>',
        '<div class="vrwrap"><h3><a href="https://ad2.example/">Labelled ad</a></h3><span>广告</span></div>',
        '<div class="vrwrap"><div class="special-wrap"><h3><a href="https://card.example/">Card</a></h3></div></div>',
        '<div class="vrwrap"><h3><a href="https://outer.example/">Outer</a></h3>'
        '<div class="vrwrap"><h3><a href="https://inner.example/">Part of the outer result</a></h3></div></div>',
    )
    parsed = _parse(page)
    assert parsed.status == "ok"
    assert [(r.title, r.url) for r in parsed.rows] == [
        ("Real target", "https://a.example/page"),
        ("No printed address", "https://b.example/x"),
        ("Contradicted", "https://www.sogou.com/link?url=CCC"),
        ("No data-url", "https://www.sogou.com/link?url=DDD"),
        ("Direct link", "https://d.example/article"),
        ("Outer", "https://outer.example/"),
    ]


def test_cite_line_dates_skip_the_printed_address():
    page = _page(
        _vrwrap("Dated", "/link?url=A", data_url="https://a.example/2019/01/02/x", shown="https://a.example/2019/01/0...",
                cite_date="2025-04-02"),
        '<div class="vrwrap"><h3><a href="https://b.example/2020/03/04/y">Address only</a></h3>'
        '<a class="citeLinkClass"><span>B</span><span>https://b.example/2020/03/04/y</span></a></div>',
        '<div class="vrwrap"><h3><a href="https://c.example/">Relative</a></h3>'
        '<a class="citeLinkClass"><span>C</span><span>https://c.example/</span><span>3天前</span></a></div>',
    )
    rows = _parse(page).rows
    assert [row.date for row in rows] == [date(2025, 4, 2), None, date(2026, 11, 26)]


def test_older_markup_is_read():
    """Sogou's pre-2020 result blocks (div.rb, h3.pt, div.ft, cite "host - date"), as SearXNG still reads them."""
    page = ('<html><body><div class="results"><div class="rb"><h3 class="pt"><a class="dttl" '
            'href="https://old.example/page">Old <em>markup</em></a></h3><div class="ft">Old snippet</div>'
            '<div class="fb"><cite>old.example/2018/01/02/page&nbsp;-&nbsp;2019-7-3</cite></div></div></div></body></html>')
    parsed = _parse(page)
    assert parsed.status == "ok"
    row = parsed.rows[0]
    assert (row.title, row.url, row.snippet, row.date) == (
        "Old markup", "https://old.example/page", "Old snippet", date(2019, 7, 3))


ANTISPIDER = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>搜狗搜索</title></head><body>'
    '<div class="header"><a href="https://www.sogou.com/">返回首页</a></div>'
    '<div class="content-box"><p class="ip-time-p">IP：1.2.3.4<br>访问时间：2026.10.05 10:00:00</p>'
    '<p class="p2">用户您好，我们的系统检测到您网络中存在异常访问请求。<br>'
    '此验证码用于确认这些请求是您的正常行为而不是自动程序发出的，需要您协助验证。</p>'
    '<form name="authform" method="POST"><p class="p3"><label for="seccodeInput">验证码：</label>'
    '<input type="text" id="seccodeInput" name="c"><img id="seccodeImage" src="util/seccode.php?tc=1"></p>'
    '<input type="hidden" name="r" value="%2Fweb%3Fquery%3Dx"></form><p class="p4">VerifyCode：2eb1fd17014e</p>'
    '</div></body></html>'
)


def test_antispider_page_is_blocked():
    """Hand-made: no real capture of Sogou's anti-spider page exists in the corpus. Built from the wording and
    markup public scrapers check for (p.p2 "用户您好，我们的系统检测到您网络中存在异常访问请求 … 此验证码用于确认
    这些请求是您的正常行为而不是自动程序发出的，需要您协助验证", #seccodeImage, form authform, VerifyCode)."""
    parsed = _parse(ANTISPIDER)
    assert parsed.status == "blocked" and "anti-spider" in parsed.detail  # recognised as Sogou's, not generically
    # The same page reached through the redirect (the transport follows it): the final URL tells.
    landed = _parse("<html><body><div id='app'></div></body></html>",
                    url="http://www.sogou.com/antispider/?from=%2Fweb%3Fquery%3Dx&suuid=1")
    assert landed.status == "blocked" and "anti-spider" in landed.detail


def test_redirect_to_antispider_is_blocked():
    parsed = _parse(b"", status=302, headers={"Location": "http://www.sogou.com/antispider/?from=%2fweb%3Fquery%3dx"})
    assert parsed.status == "blocked" and "anti-spider" in parsed.detail


def test_no_results_page_is_empty():
    """Hand-made from the no-results block of Sogou's result template (#noresult_part1_container, 抱歉，没有找到与
    “…”相关的网页, 请检查您输入的关键词是否有错误), as a public copy of Sogou's template writes it."""
    page = ('<html><head><title>zzqxjwqv - 搜狗搜索</title></head><body><div class="results">'
            '<div class="vrTips" id="noresult_part1_container"><p class="icon_noRes">抱歉，没有找到与'
            '<span style="font-family:宋体">“</span><em>zzqxjwqv</em><span style="font-family:宋体">”</span>相关的网页。</p>'
            '<h3 class="p14" id="noresult_part3_container">建议您:</h3><ol class="noResList">'
            '<li>请检查您输入的关键词是否有错误;</li><li>换另一个相似的词，或常见的词试试;</li></ol></div>'
            '</div></body></html>')
    parsed = _parse(page)
    assert (parsed.status, parsed.rows) == ("empty", ())


@pytest.mark.parametrize("status, headers, expected, retry_after", [
    (429, {"Retry-After": "60"}, "ratelimited", 60.0),
    (403, {}, "blocked", None),
    (500, {}, "error", None),
    (302, {"Location": "https://www.sogou.com/"}, "error", None),
])
def test_http_status(status, headers, expected, retry_after):
    parsed = _parse(b"<html><body>x</body></html>", status=status, headers=headers)
    assert (parsed.status, parsed.retry_after) == (expected, retry_after)


# --- never raise -------------------------------------------------------------

@settings(max_examples=scaled(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_parse_never_raises_on_cut_or_mutated_real_page(data):
    body = _real_page()
    cut = data.draw(st.integers(0, len(body)))
    operation = data.draw(st.sampled_from(["truncate", "splice", "drop"]))
    if operation == "truncate":
        body = body[:cut]
    elif operation == "splice":
        body = body[:cut] + data.draw(st.sampled_from([b"<h3><a>", b"</div></div>", b'data-url="', b"\xff\xfe",
                                                         b'<div class="vrwrap">', b"<!--"])) + body[cut:]
    else:
        body = body[:cut] + body[cut + data.draw(st.integers(1, 5000)):]
    parsed = _parse(body)
    assert parsed.status in ("ok", "empty", "blocked", "ratelimited", "error")
    assert not parsed.detail.startswith("parser failure"), parsed.detail
    for row in parsed.rows:
        assert row.title and row.url.startswith(("http://", "https://"))


# --- through the whole pipeline (loopback stand-in) ---------------------------

async def test_search_through_a_loopback_sogou(standins):
    from aiohttp import web

    from plugin.pipeline.searcher import Searcher
    from plugin.settings import Settings
    from standins import page

    real = _real_page()
    sogou = await standins(page(real))
    searcher = Searcher(Settings(endpoints={"sogou": sogou.url}, engines=["sogou"]))
    try:
        response = await searcher.search("model context protocol 协议")
    finally:
        await searcher.close()
    report = next(e for e in response.engines if e.name == "sogou")
    assert report.status == "ok", report.detail
    assert sogou.requests[0].path == "/web"
    assert sogou.requests[0].query["query"] == ["model context protocol 协议"]
    assert "https://github.com/modelcontextprotocol" in [row.url for row in response.results]

    async def to_antispider(request: web.Request, _standin) -> web.StreamResponse:
        if request.path.startswith("/antispider"):
            return web.Response(text=ANTISPIDER, content_type="text/html")
        raise web.HTTPFound("/antispider/?from=%2Fweb%3Fquery%3Dx&suuid=1")

    walled = await standins(to_antispider)
    searcher = Searcher(Settings(endpoints={"sogou": walled.url}, engines=["sogou"]))
    try:
        response = await searcher.search("模型上下文协议")
    finally:
        await searcher.close()
    report = next(e for e in response.engines if e.name == "sogou")
    assert report.status == "blocked" and "anti-spider" in report.detail
    assert [seen.path for seen in walled.requests] == ["/web", "/antispider/"]


def test_pages_beyond_the_first_are_honoured():
    from engines.sogou import ENGINE as SOGOU
    from engines.so360 import ENGINE as SO360

    for engine in (SOGOU, SO360):
        assert engine.ignored_options(SearchOptions(page=2)) == [], engine.name
