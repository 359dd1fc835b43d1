"""Bing web search (www.bing.com/search). `bing_cn` reuses this parser for cn.bing.com."""

from __future__ import annotations

from datetime import date, datetime

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
from engines.markup import ancestor, attr, first, page_text, parse_html, text_of
from engines.redirects import unwrap

# Bing's own time filter: ex1:"ez1" day, "ez2" week, "ez3" month; a year has no
# preset, so it is given as a custom range in days since the epoch.
_TIME = {"day": 'ex1:"ez1"', "week": 'ex1:"ez2"', "month": 'ex1:"ez3"'}
_SAFE = {"off": "off", "moderate": "moderate", "strict": "strict"}

_CAPTCHA_MARKERS = (
    'class="captcha',
    "One last step",
    "Please solve the challenge below",
    "最后一步",
    "请解决以下难题",
    "/challenge/verify",
)
_NO_RESULTS_MARKERS = (
    "There are no results for",
    "No results found for",
    "没有与此相关的结果",
    "未找到与",
    "Không có kết quả nào",
)
_SNIPPET_SELECTORS = (
    ".b_caption > p",
    ".b_caption .b_snippet > p",
    ".b_caption p.b_lineclamp1", ".b_caption p.b_lineclamp2",
    ".b_caption p.b_lineclamp3", ".b_caption p.b_lineclamp4",
    "p.b_algoSlug",
    ".b_caption p",
    ".b_snippet",
)


def time_filter(time_range: str | None, now_days: int) -> str | None:
    if not time_range:
        return None
    if time_range == "year":
        return f'ex1:"ez5_{now_days - 365}_{now_days}"'
    return _TIME[time_range]


def build_request(base: str, query: str, options: SearchOptions, market: str) -> Request:
    text = query_with_site(query, options.site)
    params: list[tuple[str, str]] = [("q", text), ("count", str(min(max(options.count, 10), 50)))]
    params.append(("setmkt", market))
    params.append(("setlang", market.split("-")[0]))
    now = options.now or datetime.now()
    flt = time_filter(options.time_range, (now.date() - date(1970, 1, 1)).days)
    if flt:
        params.append(("filters", flt))
    params.append(("adlt", _SAFE[options.safesearch]))
    headers = browser_headers(market)
    # Bing reads the market from this cookie too; it keeps the page in one language.
    headers["Cookie"] = f"_EDGE_CD=m={market.lower()}&u={market.lower()}; _EDGE_S=mkt={market.lower()}"
    return Request("GET", base + "/search", params=tuple(params), headers=headers)


def parse_page(response: Response, options: SearchOptions) -> Parsed:
    text = response.text
    failure = http_failure(response)
    if failure:
        return failure
    tree = parse_html(text)
    blocks = tree.css("li.b_algo")
    if not blocks and any(marker in text for marker in _CAPTCHA_MARKERS):
        return Parsed("blocked", detail="Bing challenge page (CAPTCHA)")
    base = response.url or "https://www.bing.com/"
    items = []
    for block in blocks:
        heading = block.css_first("h2")
        link = heading.css_first("a") if heading is not None else None
        if link is None and heading is not None:
            # Newer markup: <div class="b_algoheader"><a href><h2>title</h2></a></div>
            link = ancestor(heading, "a", stop=block)
        if link is None:
            link = first(block, ".b_algoheader a", "a.tilk", "a[href]")
        if link is None:
            continue
        title = text_of(heading) if heading is not None else text_of(link)
        snippet = text_of(first(block, *_SNIPPET_SELECTORS))
        stamp = text_of(first(block, "span.news_dt"))
        when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
        items.append((title, unwrap(attr(link, "href"), base), snippet, when))
    rows = rows_from(items)
    if rows:
        return Parsed("ok", rows)
    if tree.css_first("li.b_no") is not None:
        return Parsed("empty", detail="no results")
    visible = page_text(tree, 6000)
    if any(marker in visible for marker in _NO_RESULTS_MARKERS):
        return Parsed("empty", detail="no results")
    if any(marker in text for marker in _CAPTCHA_MARKERS):
        return Parsed("blocked", detail="Bing challenge page (CAPTCHA)")
    return not_understood("no li.b_algo blocks and no no-results message")


def market_for(region: str | None, default: str) -> str:
    if region and "-" in region:
        lang, country = region.split("-", 1)
        return f"{lang.lower()}-{country.upper()}"
    return default


class Bing(Engine):
    facts = EngineFacts(
        name="bing",
        tier="primary",
        weight=1.0,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        description="Bing web search, global market",
    )
    base = "https://www.bing.com"
    default_market = "en-US"

    def build(self, query: str, options: SearchOptions) -> Request:
        return build_request(self.base, query, options, market_for(options.region, self.default_market))

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        return parse_page(response, options)


ENGINE = Bing()
