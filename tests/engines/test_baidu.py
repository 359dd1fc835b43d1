"""baidu: request building, real-page conformance (web 2021, news vertical 2025), classification."""

from __future__ import annotations

from datetime import date

import pytest

from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes
from engines.base import SearchOptions
from engines.baidu import ENGINE

DIR = "baidu"
PAGE_URL = "https://www.baidu.com/s?wd=q"
NOW_EPOCH = 1795953600  # FIXED_NOW (2026-11-29 12:00, naive = UTC) in Unix seconds

# file -> (status, rows a person sees, first title, first URL)
# bisohns__hello.html has 12 .c-container blocks: 4 organic results, 7 top-level
# "result-op" cards and 1 block nested inside the Tieba card. Rows: the 4
# organic results plus the Baike and Tieba cards (one titled link to one page
# each). Not rows: the Baidu Translate widget (dict3), the music card, the image
# and video verticals and "其他人还在搜" (related searches).
# The two news-vertical pages (tn=news) list 10 news-normal items each.
# freesearchmcp__model-context-protocol.html (2026 markup) shows 17 organic results (ids 4-20,
# tpl=www_index) and four cards that are not rows: the AI answer (new_baikan_index), the right rail's
# cited sources (right_citation_aggregated), 大家还在搜 (recommend_list) and the 百度百科 card
# (sg_kg_entity_san), whose unbalanced markup makes the parser nest all 17 results inside it.
EXPECTED = {
    "freesearchmcp__model-context-protocol.html": (
        "ok", 17, "MCP协议详解:一文读懂跨时代的模型上下文协议-腾讯云开发者社区...",
        "https://cloud.tencent.com/developer/article/2508227"),
    "bisohns__hello.html": (
        "ok", 6, "hello(词语释义) - 百度百科", "https://baike.baidu.com/item/hello/38467"),
    "govch__baidu-news__chengdu.html": (
        "ok", 10, "打造成都新名片 簽下新年第一單", "http://sc.people.com.cn/BIG5/n2/2024/0130/c345167-40731551.html"),
    "govinfocheck__baidu-news__riben.html": (
        "ok", 10, "米价疯涨!日本又出招!“大米券”要设使用期限",
        "https://baijiahao.baidu.com/s?id=1850657917701099917&wfr=spider&for=pc"),
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
    request = ENGINE.build("你好", SearchOptions())
    assert request.method == "GET"
    assert request.url == "https://www.baidu.com/s"
    assert request.params == (("wd", "你好"), ("rn", "10"), ("ie", "utf-8"))
    assert request.form is None and request.json is None
    assert request.secrets == ()
    assert request.headers["Accept-Language"].startswith("zh-CN")
    assert request.headers["Referer"] == "https://www.baidu.com/"
    assert "Chrome" in request.headers["User-Agent"]


@pytest.mark.parametrize("count, rn", [(1, "10"), (10, "10"), (20, "20"), (50, "50"), (100, "50")])
def test_build_count_is_clamped(count, rn):
    request = ENGINE.build("x", SearchOptions(count=count))
    assert ("rn", rn) in request.params


@pytest.mark.parametrize("time_range, span", [
    ("day", 86400), ("week", 604800), ("month", 2592000), ("year", 31536000),
])
def test_build_time_range(time_range, span):
    request = ENGINE.build("x", SearchOptions(time_range=time_range, now=FIXED_NOW))
    assert request.params == (
        ("wd", "x"), ("rn", "10"), ("ie", "utf-8"),
        ("gpc", f"stf={NOW_EPOCH - span},{NOW_EPOCH}|stftype=1"), ("tfflag", "1"),
    )


def test_build_site_goes_into_query():
    request = ENGINE.build("成都 规划", SearchOptions(site="gov.cn"))
    assert request.params[0] == ("wd", "成都 规划 site:gov.cn")


@pytest.mark.parametrize("region, accept", [("zh-TW", "zh-TW"), ("en-US", "zh-CN"), (None, "zh-CN")])
def test_build_region_only_sets_chinese_accept_language(region, accept):
    request = ENGINE.build("x", SearchOptions(region=region))
    assert request.headers["Accept-Language"].startswith(accept)
    assert [name for name, _ in request.params] == ["wd", "rn", "ie"]


def test_build_safesearch_has_no_parameter():
    assert ENGINE.build("x", SearchOptions(safesearch="strict")).params == \
        ENGINE.build("x", SearchOptions(safesearch="off")).params


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
        assert row.title and row.title.strip() == row.title
        assert "{" not in row.snippet  # no inline CSS leaking into snippets


def test_web_page_rows(options):
    rows = _corpus("bisohns__hello.html", options).rows
    assert [row.title for row in rows] == [
        "hello(词语释义) - 百度百科",
        "hello吧 - 百度贴吧",
        "hello是什么意思_hello的翻译_音标_读音_用法_例句_爱词霸...",
        "hello network",
        "hello: 三元游戏新濠棋牌app开发",
        "hello是什么意思_hello在线翻译_英语_读音_用法_例句_海词...",
    ]
    # Cards state the real target (mu); organic results only carry Baidu's
    # opaque redirect, which is kept as it is.
    assert rows[1].url == "http://tieba.baidu.com/f?kw=hello&fr=ala0&loc=rec"
    assert rows[3].url == "http://www.baidu.com/link?url=gEuAslrSkKEnugLTJNutjNmHsec20bQbBdV978XPPPG"
    assert all(row.url.startswith("http://www.baidu.com/link?url=") for row in rows[2:])
    assert rows[0].snippet == "Hello出自英语。本义为“你好、喂”。Hello是我们日常生活中使用频率较高的一个词。"
    assert rows[1].snippet == "欢迎加入hello吧 分享你遇到的人和事"
    assert rows[3].snippet == ("Connect with people who share your interests. Discover communities you love. "
                               "Join fun conversations.")
    assert rows[4].snippet.startswith("由于该网站的robots.txt文件存在限制指令")
    urls = " ".join(row.url for row in rows)
    for not_a_row in ("fanyi.baidu.com", "music", "image.baidu.com", "vsearch", "recommend_list"):
        assert not_a_row not in urls


def test_news_vertical_rows(options):
    rows = _corpus("govch__baidu-news__chengdu.html", options).rows
    assert rows[0].date == date(2024, 1, 30)
    assert rows[0].snippet.startswith("記者了解到,天府怡心湖佔地面積約8.4平方公裡")
    assert rows[7].url == "https://news.cctv.com/kuaikan/m/a/index.shtml?id=ARTISpCVMhRtfrTexctjfVJM160822"
    assert rows[7].date is None  # this item shows no date
    assert rows[9].date == date(2023, 12, 12)

    rows = _corpus("govinfocheck__baidu-news__riben.html", options).rows
    assert rows[0].date == date(2026, 11, 29)  # "3小时前", relative to FIXED_NOW
    assert rows[2].date == date(2026, 11, 29)  # "今天"
    assert rows[3].date == date(2026, 11, 14)  # "11月14日"
    assert rows[3].snippet.startswith("据报道，日本首相高市早苗近日")
    assert rows[9].url == "https://fo.ifeng.com/c/8oq4M6IdLOl"


MCP_PAGE = "freesearchmcp__model-context-protocol.html"


def test_2026_rows_carry_the_real_target_urls(options):
    """Every organic row has the target Baidu states in `mu`, not its /link?url= redirect, in page order."""
    rows = _corpus(MCP_PAGE, options).rows
    assert [row.url for row in rows] == [
        "https://cloud.tencent.com/developer/article/2508227", "https://mcpcn.com/",
        "https://baijiahao.baidu.com/s?id=1862678078838724951&wfr=spider&for=pc",
        "https://jingzh.blog.csdn.net/article/details/147060557",
        "https://nic.zjtu.edu.cn/content/mxzs/202506/2395.html",
        "https://mp.weixin.qq.com/s?__biz=MzU1NjEwMTY0Mw==&mid=2247605345&idx=1&sn=4ec5070357f2e6acac8acad3f077fde7"
        "&chksm=fad3c57d81914971b88c3d9a5a6f104ab99108eb4d58034a1e683ad8140e5ebb793832c21f3f&scene=27",
        "https://developer.baidu.com/article/detail.html?id=5666646",
        "https://openeuler.csdn.net/6a270582662f9a54cb7b69ac.html",
        "https://blog.csdn.net/qq_41879538/article/details/155110863", "https://mcp.wiki/",
        "https://cloud.tencent.com/developer/article/2516186", "https://zhuanlan.zhihu.com/p/1894470159802032741",
        "https://preparedata.blog.csdn.net/article/details/152255474", "https://model-context-protocol.mintlify.app/",
        "https://blog.csdn.net/zp357252539/article/details/147185382",
        "https://baijiahao.baidu.com/s?id=1831523485306818855&wfr=spider&for=pc",
        "https://zhuanlan.zhihu.com/p/31863196823",
    ]
    assert not any("baidu.com/link" in row.url for row in rows)


def test_2026_cards_are_not_rows(options):
    rows = _corpus(MCP_PAGE, options).rows
    texts = " ".join(f"{row.title} {row.snippet}" for row in rows)
    # The 百度百科 card's title, the AI answer's opening, the citation rail's heading, 大家还在搜.
    for card_text in ("百度百科", "模型上下文协议(Anthropic推", "用于实现大语言模型与外部数据源和工具的标准化集成",
                      "权威来源", "大家还在搜", "大模型maas平台"):
        assert card_text not in texts
    assert not any("baike.baidu.com" in row.url or "recommend_list" in row.url for row in rows)


def test_2026_dates_and_snippets(options):
    rows = _corpus(MCP_PAGE, options).rows
    # <span class="... prefix-time_650Xx">2025年3月27日</span> before the summary text, which keeps no date.
    assert rows[0].date == date(2025, 3, 27)
    assert rows[0].snippet.startswith("MCP(Model Context Protocol,模型上下文协议)是由 Anthropic 推出的开源协议")
    assert rows[1].date is None  # mcpcn.com shows no date
    assert rows[2].date == date(2026, 4, 18)
    assert sum(row.date is not None for row in rows) == 16


# --- hand-written pages ------------------------------------------------------

def test_result_nested_in_a_card_is_its_own_row_and_keeps_its_text(options):
    """A templated result swallowed by a card's unbalanced markup is a row, and the card does not
    borrow its snippet or date; an untemplated container inside a card stays part of the card."""
    page = ('<html><body><div id="content_left">'
            '<div class="result-op c-container" id="1" tpl="bk_polysemy" mu="https://baike.baidu.com/item/x">'
            '<h3><a href="http://www.baidu.com/link?url=CARD">x - 百度百科</a></h3><div>'
            '<div class="result c-container" tpl="www_index" id="2" mu="https://example.org/a">'
            '<h3><a href="http://www.baidu.com/link?url=A">Organic A</a></h3>'
            '<span class="prefix-time_1">2025年3月27日</span><span class="summary-text_1">Text of A</span></div>'
            '<div class="result c-container" id="3"><h3><a href="http://www.baidu.com/link?url=B">Part of card</a>'
            '</h3></div>'
            '</div></body></html>')
    rows = _parse(page, options).rows
    assert [(r.title, r.url, r.snippet, r.date) for r in rows] == [
        ("x - 百度百科", "https://baike.baidu.com/item/x", "", None),
        ("Organic A", "https://example.org/a", "Text of A", date(2025, 3, 27)),
    ]


def _organic(n: int, href: str, title: str, abstract: str, mu: str = "", extra: str = "") -> str:
    mu_attr = f' mu="{mu}"' if mu else ""
    return (f'<div class="result c-container" id="{n}"{mu_attr}{extra}><h3 class="t"><a href="{href}">{title}</a></h3>'
            f'<div class="c-abstract">{abstract}</div></div>')


def test_ads_cards_and_links(options):
    page = ('<html><head><title>x_百度搜索</title></head><body><div id="content_left">'
            + _organic(3001, "http://www.baidu.com/baidu.php?url=ad", "Ad by id", "ad")
            + _organic(1, "http://www.baidu.com/link?url=AD", "Ad by attribute", "ad", extra=' data-tuiguang="x"')
            + '<div class="result c-container" id="2"><h3><a href="https://ad.example.com/">Ad by label</a></h3>'
              '<span class="ec-label">广告</span></div>'
            + _organic(4, "/link?url=OPAQUE", "Relative wrapper", "<span class=\"newTimeFactor_before_abs c-color-gray2\">"
                       "2021年5月3日&nbsp;</span>摘要文字")
            + _organic(5, "http://www.baidu.com/link?url=XYZ", "With mu", "text", mu="https://example.cn/page")
            + '<div class="result-op c-container" id="6" tpl="img_normal" mu="http://image.baidu.com/search?x">'
              '<h3><a href="http://www.baidu.com/link?url=IMG">x - 百度图片</a></h3></div>'
            + '<div class="result-op c-container" id="7" tpl="www_index" mu="https://www.example.gov.cn/">'
              '<h3><a href="http://www.baidu.com/link?url=OFFICIAL">官网</a></h3>'
              '<div class="c-span-last"><p>官方网站</p></div></div>'
            + '<div class="result-op c-container" id="8" tpl="recommend_list" mu="http://28608.recommend_list.baidu.com">'
              '<h3><a href="/s?wd=y">其他人还在搜</a></h3></div>'
            + "</div></body></html>")
    parsed = _parse(page, options)
    assert parsed.status == "ok"
    assert [(r.title, r.url) for r in parsed.rows] == [
        ("Relative wrapper", "https://www.baidu.com/link?url=OPAQUE"),
        ("With mu", "https://example.cn/page"),
        ("官网", "https://www.example.gov.cn/"),
    ]
    assert parsed.rows[0].date == date(2021, 5, 3)
    assert parsed.rows[0].snippet == "摘要文字"
    assert parsed.rows[2].snippet == "官方网站"


def test_security_check_page_is_blocked(options):
    page = ("<html><head><title>百度安全验证</title></head><body><div class='timeout-title'>网络不给力，请稍后重试</div>"
            "<script>location.href='https://wappass.baidu.com/static/captcha/tuxing.html?ak=x'</script></body></html>")
    assert _parse(page, options).status == "blocked"


def test_script_bounce_to_wappass_is_blocked(options):
    page = ("<html><head><title></title></head><body><script>window.location.replace("
            "'https://wappass.baidu.com/static/captcha/tuxing.html?ak=1&backurl=x')</script></body></html>")
    assert _parse(page, options).status == "blocked"


def test_redirect_to_wappass_is_blocked(options):
    parsed = _parse(b"", options, status=302,
                    headers={"Location": "https://wappass.baidu.com/static/captcha/tuxing.html?&ak=1"})
    assert parsed.status == "blocked"


def test_landing_on_wappass_is_blocked(options):
    parsed = _parse("<html><body><div id='app'></div></body></html>", options,
                    url="https://wappass.baidu.com/static/captcha/tuxing.html?ak=1")
    assert parsed.status == "blocked"


def test_no_results_page_is_empty(options):
    page = ('<html><head><title>zzqxjw_百度搜索</title></head><body><div id="content_left">'
            '<div class="content_none"><div class="nors"><p>很抱歉，没有找到与<span style="font-family:宋体">“</span>'
            '<em>zzqxjw</em><span>”</span>相关的网页。</p></div></div></div></body></html>')
    parsed = _parse(page, options)
    assert parsed.status == "empty"
    assert parsed.rows == ()


@pytest.mark.parametrize("status, headers, expected, retry_after", [
    (429, {"Retry-After": "60"}, "ratelimited", 60.0),
    (403, {}, "blocked", None),
    (500, {}, "error", None),
    (302, {"Location": "https://www.baidu.com/"}, "error", None),
])
def test_http_status(status, headers, expected, retry_after, options):
    parsed = _parse(b"<html><body>x</body></html>", options, status=status, headers=headers)
    assert parsed.status == expected
    assert parsed.retry_after == retry_after


def test_relative_links_stay_baidus_behind_an_endpoint(options):
    """Behind a mirror, proxy or test endpoint the page's relative /link?url= wrappers are still Baidu's:
    they must not become links to the endpoint's host."""
    page = ('<html><head><title>x_百度搜索</title></head><body><div id="content_left">'
            + _organic(4, "/link?url=OPAQUE", "Relative wrapper", "摘要文字")
            + "</div></body></html>")
    parsed = ENGINE.parse(response_from_bytes(page.encode(), url="http://127.0.0.1:8123/s?wd=q"), "q", options)
    assert [r.url for r in parsed.rows] == ["https://www.baidu.com/link?url=OPAQUE"]
