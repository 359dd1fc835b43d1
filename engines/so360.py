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
from urllib.parse import urlsplit

from engines.base import (
    Engine,
    EngineFacts,
    Parsed,
    Request,
    Response,
    SearchOptions,
    http_failure,
    not_understood,
    query_with_site,
    rows_from,
)
from engines.browser import browser_headers
from engines.dates import leading_date, parse_date
from engines.markup import attr, first, inside, page_text, parse_html, text_of
from engines.redirects import unwrap

URL = "https://www.so.com/s"

_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}

_TARGET_ATTRIBUTES = ("data-mdurl", "data-url", "data-landurl")
_SNIPPET_SELECTORS = ("p.res-desc", "span.res-list-summary", ".res-comm-con", "[class*='res-desc']")
_STAMP_SELECTORS = ".g-c-gray, .gray"
# 360's oneboxes ("mohe" cards) and ad slots (e_idea_pp and the like).
_NOT_RESULTS = re.compile(r"g-mohe|mohe-|e_idea|sponsor|(?:^|[\s_-])ads?(?:[\s_-]|$)", re.I)
_AD_LABELS = ("广告", "推广")
# 360's own pages that appear among results: AI answers, translation, search pages.
_OWN_PAGES = ("ai.so.com", "fanyi.so.com", "www.so.com", "so.com", "m.so.com")

_BLOCK_TEXT = ("360搜索_安全验证", "访问异常", "请输入验证码", "qcaptcha.so.com")
_NO_RESULTS_TEXT = ("抱歉，未找到和", "未找到和", "没有找到和", "抱歉，没有找到")


def _host_path(url: str) -> tuple[str, str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "", ""
    return (parts.hostname or "").lower(), parts.path or "/"


def _absolute_http(url: str) -> bool:
    return url.startswith(("http://", "https://")) and bool(_host_path(url)[0])


def _is_wrapper(url: str) -> bool:
    host, path = _host_path(url)
    return host.endswith("so.com") and path.startswith("/link")


def _target(link, base: str) -> str:
    for name in _TARGET_ATTRIBUTES:
        value = attr(link, name)
        if _absolute_http(value) and not _is_wrapper(value):
            return value
    return unwrap(attr(link, "href"), base)


def _is_own_page(url: str) -> bool:
    return _host_path(url)[0] in _OWN_PAGES and not _is_wrapper(url)


def _is_ad_or_card(item, link) -> bool:
    if _NOT_RESULTS.search(attr(item, "class")) or _NOT_RESULTS.search(attr(item, "id")):
        return True
    if inside(link, _NOT_RESULTS):  # the item's own wrappers and the list around it
        return True
    return any(text_of(label) in _AD_LABELS for label in item.css("span, i, a") if len(label.css("*")) <= 1)


def _without_prefix(text: str, prefix: str) -> str:
    if prefix and text.startswith(prefix):
        return text[len(prefix):].lstrip(" -–—·\u00a0")
    return text


def _snippet_and_date(item, title: str, options: SearchOptions):
    snippet = text_of(first(item, *_SNIPPET_SELECTORS))
    when = None
    for stamp in item.css(_STAMP_SELECTORS):
        if inside(stamp, re.compile(r"res-title|g-linkinfo")):
            continue
        text = text_of(stamp)
        when = parse_date(text, options.now) if text else None
        if when:
            snippet = _without_prefix(snippet, text.rstrip(" -–—\u00a0"))
            break
    if when is None:
        when = leading_date(snippet, options.now)
    return ("" if snippet == title else snippet), when


class So360(Engine):
    facts = EngineFacts(
        name="so360",
        # One real page is all there is to judge it by: a fallback with a modest weight until the
        # ranking bench has measured it against the other CJK engines.
        tier="fallback",
        weight=0.8,
        region="cjk",
        # 360 crawls its own index (360Spider). On the one page captured next to Bing China for the
        # same query, none of its results is among Bing China's 10.
        index="so360",
        description="360 Search (HTML, www.so.com), Qihoo 360's own Chinese index",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        params: list[tuple[str, str]] = [("q", query_with_site(query, options.site))]
        if options.time_range:
            params.append(("adv_t", _TIME[options.time_range]))
        if options.page > 1:
            params.append(("pn", str(options.page)))
        region = options.region or ""
        headers = browser_headers(region if region.lower().startswith("zh") else "zh-CN")
        headers["Referer"] = "https://www.so.com/"
        return Request("GET", URL, params=tuple(params), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        location = response.headers.get("location", "") or ""
        if "qcaptcha" in location or _host_path(response.url or "")[0].startswith("qcaptcha."):
            return Parsed("blocked", detail="360 verification page (redirected to qcaptcha.so.com)")
        failure = http_failure(response)
        if failure:
            return failure
        text = response.text or ""
        if not text.strip():
            return Parsed("error", detail="empty page (360 sends one to some addresses, e.g. outside China)")
        tree = parse_html(text)
        for node in tree.css("script, style, noscript"):
            node.decompose()
        # Relative links are 360's own, also when the page came through a mirror or proxy endpoint.
        base = response.url if _host_path(response.url or "")[0].endswith("so.com") else URL
        items = []
        for item in tree.css("li.res-list"):
            link = first(item, "h3.res-title a[href]")
            if link is None or _is_ad_or_card(item, link):
                continue
            title = text_of(link)
            url = _target(link, base)
            if not _absolute_http(url) or _is_own_page(url):
                continue
            snippet, when = _snippet_and_date(item, title, options)
            items.append((title, url, snippet, when))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)

        title = text_of(tree.css_first("title"))
        visible = page_text(tree, 6000)
        if any(marker in title or marker in visible for marker in _BLOCK_TEXT) or "qcaptcha.so.com" in text:
            return Parsed("blocked", detail="360 verification page (安全验证 / captcha)")
        if tree.css_first("#no-result, .no-result") is not None or any(m in visible for m in _NO_RESULTS_TEXT):
            return Parsed("empty", detail="no results")
        return not_understood("no li.res-list results and no no-results message")


ENGINE = So360()
