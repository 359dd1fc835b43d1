"""The shared pieces of the scraped-engine extractor (engines/scraped.py) that engines declare as data:
a redirect to a block page (`blocked_locations`) and elements removed before extraction (`dropped`)."""

from __future__ import annotations

import pytest

from conftest import FIXED_NOW
from engines.base import Headers, Response, SearchOptions
from engines.baidu import ENGINE as BAIDU
from engines.markup import parse_html
from engines.hosts import host_of
from engines.scraped import absolute_http, host_and_path
from engines.so360 import ENGINE as SO360
from engines.sogou import ENGINE as SOGOU


def _redirect(url: str, location: str, status: int = 302) -> Response:
    return Response(status=status, url=url, headers=Headers({"Location": location}), body=b"", text="")


@pytest.mark.parametrize("engine, url, location, detail", [
    (SO360, "https://www.so.com/s?q=x", "https://qcaptcha.so.com/?ret=https%3A%2F%2Fwww.so.com%2Fs%3Fq%3Dx&tk=1",
     "360 verification page (qcaptcha.so.com)"),
    (SOGOU, "https://www.sogou.com/web?query=x", "https://www.sogou.com/antispider/?from=%2Fweb%3Fquery%3Dx",
     "Sogou anti-spider check (/antispider verification page)"),
])
def test_a_redirect_to_the_block_page_is_blocked(engine, url, location, detail):
    parsed = engine.parse(_redirect(url, location), "x", SearchOptions(now=FIXED_NOW))
    assert (parsed.status, parsed.detail) == ("blocked", detail)


@pytest.mark.parametrize("engine, url", [(SO360, "https://www.so.com/s?q=x"),
                                         (SOGOU, "https://www.sogou.com/web?query=x")])
def test_another_redirect_is_not_a_block(engine, url):
    parsed = engine.parse(_redirect(url, "https://example.org/elsewhere"), "x", SearchOptions(now=FIXED_NOW))
    assert parsed.status == "error" and "redirect not followed" in parsed.detail


@pytest.mark.parametrize("engine, selector", [(SO360, "script, style, noscript"), (SOGOU, "script, style, noscript"),
                                              (BAIDU, "style, script")])
def test_inline_scripts_and_styles_are_removed_before_extraction(engine, selector):
    tree = parse_html("<html><body><p>kept</p><script>var a = 1;</script><style>p {}</style>"
                 "<noscript>no js</noscript></body></html>")
    engine.prepare(tree)
    for tag in ("script", "style", "noscript"):
        assert (tree.css_first(tag) is None) == (tag in selector), tag
    assert tree.css_first("p") is not None


def test_url_helpers():
    assert host_and_path("https://WWW.Example.org") == ("www.example.org", "/")
    assert host_and_path("https://example.org/a/b?c") == ("example.org", "/a/b")
    assert host_and_path("http://[::1") == ("", "")  # unbalanced IPv6 bracket
    assert host_of("https://Example.org/x") == "example.org"
    assert absolute_http("https://example.org/x") and absolute_http("http://example.org")
    assert not absolute_http("/relative") and not absolute_http("https://") and not absolute_http("ftp://example.org")


_SO360_PAGE = ('<html><body><ul class="result">{}'
               '<li class="res-list"><h3 class="res-title"><a href="https://kept.example.org/">Kept</a></h3>'
               '<p class="res-desc">an organic result</p></li></ul></body></html>')
_SOGOU_PAGE = ('<html><body><div class="results">{}'
               '<div class="vrwrap"><h3 class="vr-title"><a href="https://kept.example.org/">Kept</a></h3>'
               '<div class="space-txt">an organic result</div></div></div></body></html>')


@pytest.mark.parametrize("engine, page, ad", [
    # An ad slot told only by its id (e_idea_pp, biz_…), with no ad class on the block or around it.
    (SO360, _SO360_PAGE, '<li class="res-list" id="e_idea_pp"><h3 class="res-title">'
                         '<a href="https://ad.example.com/">Ad</a></h3><p class="res-desc">buy</p></li>'),
    (SOGOU, _SOGOU_PAGE, '<div class="vrwrap" id="biz_top"><h3 class="vr-title">'
                         '<a href="https://ad.example.com/">Ad</a></h3><div class="space-txt">buy</div></div>'),
    # An ad told only by its label ("广告" / "推广").
    (SO360, _SO360_PAGE, '<li class="res-list"><h3 class="res-title"><a href="https://ad.example.com/">Ad</a></h3>'
                         '<p class="res-desc">buy</p><span>广告</span></li>'),
    (SOGOU, _SOGOU_PAGE, '<div class="vrwrap"><h3 class="vr-title"><a href="https://ad.example.com/">Ad</a></h3>'
                         '<div class="space-txt">buy</div><i>推广</i></div>'),
])
def test_ads_told_by_id_or_label_are_not_rows(engine, page, ad):
    url = "https://www.so.com/s?q=x" if engine is SO360 else "https://www.sogou.com/web?query=x"
    response = Response(status=200, url=url, headers=Headers({"Content-Type": "text/html"}), body=b"",
                        text=page.format(ad))
    parsed = engine.parse(response, "x", SearchOptions(now=FIXED_NOW))
    assert parsed.status == "ok" and [row.url for row in parsed.rows] == ["https://kept.example.org/"]
