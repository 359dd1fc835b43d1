"""Baidu web search, HTML results page (www.baidu.com/s), Baidu's own index.

The time range is Baidu's `gpc=stf=<from>,<to>|stftype=1` filter (Unix
seconds, counted back from options.now with SearXNG's spans: a day, 7 days,
30 days, 365 days) plus `tfflag=1`; `rn` asks for 10..50 rows. Baidu has no
safe-search or region switch on this endpoint.

Links: Baidu wraps every result in `https://www.baidu.com/link?url=<opaque>`,
which only Baidu can resolve. The real target is used when the page states it
(the container's `mu` attribute, or a title link that already points off
Baidu); otherwise the /link?url= address is kept as it is, absolute. No target
is ever guessed.

Which containers are rows:
- `div.result.c-container` (organic results) are rows unless they are ads;
- `div.result-op.c-container` (Baidu's "aladdin" cards) are rows only when
  they are one titled link to one page (Baike, Tieba, a news item): cards for
  verticals and widgets (images, videos, music, dictionary, related searches,
  news carousels...) are not.
The parser also reads Baidu's news vertical (`tn=news`): its items are
`result-op` cards of template `news-normal`, one article each.

2026 markup: organic results are `div.result.c-container[tpl=www_index]` with
the target in `mu`, the date in a `prefix-time_*` span before the
`summary-text_*` abstract. Cards around them (the AI answer `new_baikan_index`,
the right rail's `right_citation_aggregated`, `recommend_list` "大家还在搜",
the 百度百科 card `sg_kg_entity_san`) are not rows. The 百度百科 card's tags do
not balance, so every later result ends up nested inside it: a container with
its own `tpl` is therefore a result wherever it sits.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from urllib.parse import urlsplit

from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, query_with_site
from engines.browser import CHROME
from engines.dates import leading_date, parse_date
from engines.markup import attr, same_node, text_of
from engines.redirects import unwrap
from engines.scraped import ScrapedEngine, absolute_http

URL = "https://www.baidu.com/s"

# SearXNG's baidu spans for its gpc time filter, in seconds.
_SPAN = {"day": 86400, "week": 604800, "month": 2592000, "year": 31536000}

# Templates of result-op cards that are verticals, carousels or widgets, not a
# result pointing at one page. Matched as substrings of the tpl attribute.
_CARD_TPL_EXCLUDED = (
    "img", "image", "video", "music", "dict", "fanyi", "recommend", "realtime",
    "rel-", "related", "app/rs", "weather", "calendar", "calculator", "map", "exactqa",
    "right_", "toplist", "kg_entity", "sp_purc", "ecom", "tuiguang",
    # 2026: the AI answer (new_baikan_index) and the right rail's cited sources (right_citation_aggregated).
    "baikan", "citation",
)
# Card templates that are a single page even though their tpl says "news".
_CARD_TPL_KEPT = ("news-normal",)

# Baidu vertical/search pages: a card pointing at one of these is a carousel.
_VERTICAL_HOSTS = ("image.baidu.com", "video.baidu.com", "music.baidu.com", "map.baidu.com",
                   "haokan.baidu.com", "fanyi.baidu.com")

_BLOCK_MARKERS = ("百度安全验证", "wappass.baidu.com", "安全验证", "请输入验证码",
                  "网络不给力，请稍后重试")
_NO_RESULTS_TEXT = ("没有找到与", "没有找到该URL", "抱歉，未找到相关结果", "未找到相关结果")

_SNIPPET_SELECTORS = (
    ".c-abstract",
    "[class*='content-right']",
    "[aria-label^='摘要']",
    "span.c-color-text",
    "[class*='abstract']",
    "[class*='summary-text']",
    ".c-span-last p",
    ".c-span-last",
    "p.c-color-text",
)
_DATE_SELECTORS = (
    "[class*='newTimeFactor']",
    "[class*='prefix-time']",  # 2026: <span class="... prefix-time_650Xx">2025年3月27日</span>
    "[aria-label^='发布于']",
    ".c-abstract span.c-color-gray2",
    "[class*='content-right'] span.c-color-gray2",
    ".c-span-last span.c-color-gray2",
    "span.c-color-gray2",
)


def _epoch(now: datetime | None) -> int:
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:  # a naive reference time is taken as UTC
        now = now.replace(tzinfo=timezone.utc)
    return int(now.timestamp())


def time_filter(time_range: str, now: datetime | None) -> str:
    end = _epoch(now)
    return f"stf={end - _SPAN[time_range]},{end}|stftype=1"


def _is_container(node) -> bool:
    return "c-container" in attr(node, "class").split()


def _is_result(node) -> bool:
    """A container Baidu rendered as a result of its own: it carries its template name (`tpl`)."""
    return _is_container(node) and "tpl" in node.attributes


def _nested(node) -> bool:
    """True for a c-container that is part of another one (Tieba cards nest an untemplated one).

    A container with its own `tpl` is a result even inside another: in 2026 markup the 百度百科
    card's unbalanced tags make the browser (and our parser) nest every organic result after it.
    """
    parent = node.parent
    while parent is not None:
        if _is_container(parent):
            return not _is_result(node)
        parent = parent.parent
    return False


def _own_first(block, *selectors: str):
    """Like `first`, skipping matches inside another result nested in `block` (see `_nested`)."""
    for selector in selectors:
        for node in block.css(selector):
            parent = node.parent
            while parent is not None and not same_node(parent, block) and not _is_result(parent):
                parent = parent.parent
            if same_node(parent, block):
                return node
    return None


def _is_ad(block) -> bool:
    if "data-tuiguang" in block.attributes or "cmatchid" in block.attributes:
        return True
    classes = attr(block, "class").lower().split()
    if any("tuiguang" in c or c.startswith(("ec_", "ec-")) for c in classes):
        return True
    block_id = attr(block, "id")
    if block_id.isdigit() and int(block_id) >= 3000:  # Baidu numbers its ads 3001, 3002...
        return True
    if block.css_first("[class*='tuiguang'], [data-tuiguang], [class*='ec-ad']") is not None:
        return True
    for label in block.css("span, a, div"):
        if text_of(label) == "广告" and len(label.css("*")) <= 2:
            return True
    return False


def _split(url: str):
    try:
        parts = urlsplit(url)
        return parts, (parts.hostname or "").lower()
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return None, ""



def _target(block, link, base: str) -> str:
    """The result's real URL when the page states it, else Baidu's /link?url= address."""
    mu = attr(block, "mu")
    href = unwrap(attr(link, "href"), base)
    if mu and absolute_http(mu):
        host = _split(mu)[1]
        # Synthetic placeholders such as http://28608.recommend_list.baidu.com
        if not re.match(r"^\d+\.[a-z_]+\.baidu\.com$", host):
            return mu
    return href


def _card_is_result(block, url: str) -> bool:
    tpl = attr(block, "tpl").lower()
    if any(tpl.startswith(kept) for kept in _CARD_TPL_KEPT):
        return True
    if any(word in tpl for word in _CARD_TPL_EXCLUDED):
        return False
    parts, host = _split(url)
    if parts is None or host in _VERTICAL_HOSTS:
        return False
    if host.endswith("baidu.com") and (parts.path in ("/s", "/sf/vsearch") or parts.path.startswith("/sf/")):
        return False
    return True


def _count(options: SearchOptions) -> int:
    """Baidu's rn: 10..50 rows a page."""
    return min(max(options.count, 10), 50)


_SOURCE_LABEL = "新闻来源："


def _source(block) -> str | None:
    """The publisher a news item names: <span aria-label="新闻来源：人民网四川频道">人民网四川频道</span>."""
    node = _own_first(block, f"[aria-label^='{_SOURCE_LABEL}']")
    if node is None:
        return None
    name = attr(node, "aria-label")[len(_SOURCE_LABEL):].strip() or text_of(node)
    return name or None


def _without_prefix(text: str, prefix: str) -> str:
    text = text.strip()
    if prefix and text.startswith(prefix):
        return text[len(prefix):].lstrip(" -·\u00a0")
    return text


def _snippet_and_date(block, title: str, options: SearchOptions):
    node = _own_first(block, *_SNIPPET_SELECTORS)
    snippet = text_of(node)
    stamp_node = _own_first(block, *_DATE_SELECTORS)
    stamp = text_of(stamp_node)
    when = parse_date(stamp, options.now) if stamp else None
    if when is not None:
        snippet = _without_prefix(snippet, stamp)
    else:
        when = leading_date(snippet, options.now)
    if snippet == title:
        snippet = ""
    return snippet, when


class Baidu(ScrapedEngine):
    facts = EngineFacts(
        name="baidu",
        profile=CHROME.name,
        tier="primary",
        weight=0.8,
        region="cjk",
        index="baidu",
        native_site=True,
        native_time=True,
        news=True,
        paging=True,
        regions={"zh-CN": "zh-CN"},  # no region switch: Baidu serves mainland China
        default_region="zh-CN",
        description="Baidu web search (HTML), Baidu's own Chinese index",
    )
    url = URL
    dropped = "style, script"  # Baidu inlines CSS inside result blocks
    results = ".c-container"
    blocked_urls = ("wappass.baidu.com",)
    blocked_text = _BLOCK_MARKERS  # in the <title> or the visible text
    blocked_markup = ("wappass.baidu.com",)  # a script bouncing the browser to the captcha
    blocked_detail = "Baidu security check (百度安全验证 / wappass captcha)"
    no_results_css = ".content_none, .nors"
    # #super_se_tip (older: .hit_top_new): 已显示“<strong>corrected</strong>”的搜索结果。仍然搜索：<a><strong>asked
    # </strong></a>, or 您要找的是不是: <a><strong>corrected</strong></a>; the first strong that is not the query.
    correction = ("#super_se_tip strong", ".hit_top_new strong")
    no_results_text = _NO_RESULTS_TEXT

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_site(query, options.site)
        count = _count(options)
        if options.category == "news":
            # Baidu's news vertical (百度资讯), as its own "资讯" tab links it:
            # /s?rtt=1&bsst=1&cl=2&tn=news&ie=utf-8&word=... (rtt=1: by relevance).
            params: list[tuple[str, str]] = [("rtt", "1"), ("bsst", "1"), ("cl", "2"), ("tn", "news"),
                                             ("ie", "utf-8"), ("word", text), ("rn", str(count))]
        else:
            params = [("wd", text), ("rn", str(count)), ("ie", "utf-8")]
        if options.page > 1:
            params.append(("pn", str(self.rows_before(options))))  # 0-based first row, Baidu's own pager
        if options.time_range:
            params.append(("gpc", time_filter(options.time_range, options.now)))
            params.append(("tfflag", "1"))
        region = options.region or ""
        headers = CHROME.navigate(URL, region if region.lower().startswith("zh") else "zh-CN", referer="https://www.baidu.com/")
        return Request("GET", URL, params=tuple(params), headers=headers)

    def rows_before(self, options: SearchOptions) -> int:
        return (max(options.page, 1) - 1) * _count(options)

    def classify_status(self, response: Response) -> Parsed | None:
        location = response.headers.get("location", "") or ""
        if 300 <= response.status < 400 and ("wappass" in location or "captcha" in location):
            return Parsed("blocked", detail="redirected to Baidu's security check (wappass)")
        return super().classify_status(response)

    def blocks(self, tree) -> list:
        return [block for block in tree.css(self.results) if not _nested(block)]

    def is_ad(self, block) -> bool:
        return _is_ad(block)

    def extract(self, block, base: str, options: SearchOptions):
        link = _own_first(block, "h3 a")
        if link is None:
            return None
        title = text_of(link)
        url = _target(block, link, base)
        if not absolute_http(url):
            return None
        if "result-op" in attr(block, "class").split() and not _card_is_result(block, url):
            return None
        snippet, when = _snippet_and_date(block, title, options)
        return title, url, snippet, when, _source(block)


ENGINE = Baidu()
