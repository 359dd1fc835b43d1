"""360 Search (www.so.com/s), Qihoo 360's own Chinese index.

Request: `q`, and `pn` (1-based, as 360's own page links write it) beyond the
first page; the time range is 360's `adv_t` (d, w, m, y), as SearXNG's
360search engine and a public browser extension's time menu send it. No count
or safe-search parameter is documented. 360 is known to answer some addresses
(outside China) with an empty page, which is reported as an error, not as "no
results" (SearXNG #6058).

Results are `li.res-list` items of `ul.result` with an `h3.res-title` link;
the snippet is `p.res-desc` or, in rich and news layouts, `span.res-list-summary`,
preceded by a grey date stamp ("2025年9月29日 - "). Not rows: 360's "mohe"
oneboxes (`div.g-mohe`: AI answer, translation, 360文库 …, titled `h3.g-title`
when titled at all), links into 360's own AI answers (`ai.so.com`, dressed as
results) and search pages, ads.

Links: 360 wraps results in `www.so.com/link?m=<opaque>`; the real target is in
the title link's `data-mdurl` and is used when present, else the wrapper is kept
as it is.

Blocked: 360's verification page, reached by a redirect to
`qcaptcha.so.com/?ret=<the search URL>&tk=…`.
"""

from __future__ import annotations

import re

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, query_with_site
from engines.browser import CHROME
from engines.dates import leading_date, parse_date
from engines.markup import attr, first, inside, text_of
from engines.scraped import ScrapedEngine, absolute_http, host_and_path

URL = "https://www.so.com/s"

_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}

_TARGET_ATTRIBUTES = ("data-mdurl", "data-url", "data-landurl")
_STAMPS = ".g-c-gray, .gray"
_NOT_STAMPS = re.compile(r"res-title|g-linkinfo")
# 360's oneboxes ("mohe" cards) and ad slots (e_idea_pp and the like).
_NOT_RESULTS = re.compile(r"g-mohe|mohe-|e_idea|sponsor|(?:^|[\s_-])ads?(?:[\s_-]|$)", re.I)
# 360's own pages that appear among results: AI answers, translation, search pages.
_OWN_PAGES = ("ai.so.com", "fanyi.so.com", "www.so.com", "so.com", "m.so.com")


def _is_wrapper(url: str) -> bool:
    host, path = host_and_path(url)
    return host.endswith("so.com") and path.startswith("/link")


def _without_prefix(text: str, prefix: str) -> str:
    if prefix and text.startswith(prefix):
        return text[len(prefix):].lstrip(" -–—·\u00a0")
    return text


class So360(ScrapedEngine):
    facts = EngineFacts(
        name="so360",
        profile=CHROME.name,
        # One real page is all there is to judge it by: a fallback with a modest weight until the
        # ranking bench has measured it against the other CJK engines.
        tier="fallback",
        weight=0.8,
        region="cjk",
        # 360 crawls its own index (360Spider). On the one page captured next to Bing China for the
        # same query, none of its results is among Bing China's 10.
        index="so360",
        regions={"zh-CN": "zh-CN"},  # no region switch: 360 serves mainland China
        default_region="zh-CN",
        paging=True,
        description="360 Search (HTML, www.so.com), Qihoo 360's own Chinese index",
    )
    url = URL
    dropped = "script, style, noscript"
    results = "li.res-list"
    title = ("h3.res-title a[href]",)  # the title is its link
    snippet = ("p.res-desc", "span.res-list-summary", ".res-comm-con", "[class*='res-desc']")
    ad_class = _NOT_RESULTS
    ad_id = _NOT_RESULTS
    ad_around = _NOT_RESULTS
    ad_labels = ("广告", "推广")
    ad_inside = ".g-mohe h3, [data-mohe-type] h3"  # a onebox titled like a result
    blocked_urls = ("//qcaptcha.",)
    blocked_locations = ("qcaptcha",)  # a redirect to the verification page, not followed
    blocked_text = ("360搜索_安全验证", "访问异常", "请输入验证码")
    blocked_markup = ("qcaptcha.so.com",)  # a script bouncing the browser to the verification page
    blocked_detail = "360 verification page (qcaptcha.so.com)"
    no_results_css = "#no-result, .no-result"
    no_results_text = ("抱歉，未找到和", "未找到和", "没有找到和", "抱歉，没有找到")

    def build(self, query: str, options: SearchOptions) -> Request:
        params: list[tuple[str, str]] = [("q", query_with_site(query, options.site))]
        if options.time_range:
            params.append(("adv_t", _TIME[options.time_range]))
        if options.page > 1:
            params.append(("pn", str(options.page)))
        region = options.region or ""
        headers = CHROME.navigate(URL, region if region.lower().startswith("zh") else "zh-CN", referer="https://www.so.com/")
        return Request("GET", URL, params=tuple(params), headers=headers)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        if not (response.text or "").strip():
            return Parsed("error", detail="empty page (360 sends one to some addresses, e.g. outside China)")
        return super().parse_body(response, query, options)

    def href_of(self, block, link) -> str:
        """The real target 360 states on the title link (data-mdurl), else its /link?m= wrapper."""
        for name in _TARGET_ATTRIBUTES:
            value = attr(link, name)
            if absolute_http(value) and not _is_wrapper(value):
                return value
        return attr(link, "href")

    def is_result_url(self, url: str) -> bool:
        return absolute_http(url) and (_is_wrapper(url) or host_and_path(url)[0] not in _OWN_PAGES)

    def snippet_and_date(self, block, options: SearchOptions):
        """The snippet without the grey date stamp 360 puts before it ("2025年9月29日 - "), and that date."""
        snippet = text_of(first(block, *self.snippet))
        for stamp in block.css(_STAMPS):
            if inside(stamp, _NOT_STAMPS):
                continue
            text = text_of(stamp)
            when = parse_date(text, options.now) if text else None
            if when:
                return _without_prefix(snippet, text.rstrip(" -–—\u00a0")), when
        return snippet, leading_date(snippet, options.now)


ENGINE = So360()
