"""Bing web search (www.bing.com/search). `bing_cn` reuses this parser for cn.bing.com."""

from __future__ import annotations

from datetime import date, datetime

from engines.base import EngineFacts, Request, SearchOptions, query_with_domains
from engines.browser import CHROME
from engines.regions import table
from engines.scraped import ScrapedEngine

# Bing's own time filter: ex1:"ez1" day, "ez2" week, "ez3" month; a year has no
# preset, so it is given as a custom range in days since the epoch.
_TIME = {"day": 'ex1:"ez1"', "week": 'ex1:"ez2"', "month": 'ex1:"ez3"'}
_SAFE = {"off": "off", "moderate": "moderate", "strict": "strict"}

# Bing's documented markets (learn.microsoft.com/bing/search-apis/bing-web-search/reference/market-codes),
# plus vi-VN, which www.bing.com serves (bing/kaiz__*.html in the corpus) though the API list omits it.
MARKETS = table({m: m for m in (
    "es-AR en-AU de-AT nl-BE fr-BE pt-BR en-CA fr-CA es-CL da-DK fi-FI fr-FR de-DE zh-HK en-IN en-ID it-IT ja-JP "
    "ko-KR en-MY es-MX nl-NL en-NZ no-NO zh-CN pl-PL pt-PT en-PH ru-RU ar-SA en-ZA es-ES sv-SE fr-CH de-CH zh-TW "
    "tr-TR en-GB en-US es-US vi-VN").split()})


def time_filter(time_range: str | None, now_days: int) -> str | None:
    if not time_range:
        return None
    if time_range == "year":
        return f'ex1:"ez5_{now_days - 365}_{now_days}"'
    return _TIME[time_range]


def build_request(base: str, query: str, options: SearchOptions, market: str) -> Request:
    text = query_with_domains(query, options)
    params: list[tuple[str, str]] = [("q", text), ("count", str(min(max(options.count, 10), 50)))]
    if options.page > 1:
        # Bing serves 10 rows a page whatever `count` says (the corpus' count=5 and count=20 pages both
        # show 10); `first` is the 1-based index of the page's first row, as Bing's own next-page links.
        params.append(("first", str((options.page - 1) * 10 + 1)))
    params.append(("setmkt", market))
    params.append(("setlang", market.split("-")[0]))
    now = options.now or datetime.now()
    flt = time_filter(options.time_range, (now.date() - date(1970, 1, 1)).days)
    if flt:
        params.append(("filters", flt))
    params.append(("adlt", _SAFE[options.safesearch]))
    headers = CHROME.navigate(base + "/search", market)
    # Bing reads the market from this cookie too; it keeps the page in one language.
    headers["Cookie"] = f"_EDGE_CD=m={market.lower()}&u={market.lower()}; _EDGE_S=mkt={market.lower()}"
    return Request("GET", base + "/search", params=tuple(params), headers=headers)


class BingPage(ScrapedEngine):
    """Bing's results page, as www.bing.com and cn.bing.com serve it."""

    results = "li.b_algo"
    # Older markup: <h2><a href>title</a></h2>; newer: <div class="b_algoheader"><a href><h2>title</h2></a></div>.
    title = ("h2",)
    link = (".b_algoheader a", "a.tilk", "a[href]")
    snippet = (".b_caption > p", ".b_caption .b_snippet > p", ".b_caption p.b_lineclamp1", ".b_caption p.b_lineclamp2",
               ".b_caption p.b_lineclamp3", ".b_caption p.b_lineclamp4", "p.b_algoSlug", ".b_caption p", ".b_snippet")
    date = ("span.news_dt",)
    # "Including results for <a><strong>corrected</strong></a>. Do you want results only for <a>asked</a>?"
    # (li.b_ans > #sp_requery; the second sentence is #sp_recourse), as public Bing scrapers select it.
    correction = ("#sp_requery a",)
    no_results_css = "li.b_no"
    no_results_text = ("There are no results for", "No results found for", "没有与此相关的结果", "未找到与",
                       "Không có kết quả nào")
    # The challenge page keeps the SERP chrome: "One last step - Please solve the challenge below".
    blocked_text = ("One last step", "Please solve the challenge below", "最后一步", "请解决以下难题")
    blocked_markup = ('class="captcha', "/challenge/verify")
    blocked_detail = "Bing challenge page (CAPTCHA)"


class Bing(BingPage):
    facts = EngineFacts(
        name="bing",
        profile=CHROME.name,
        tier="primary",
        weight=1.0,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=MARKETS,
        native_domains=True,
        paging=True,
        default_region="en-US",
        description="Bing web search, global market",
    )
    base = "https://www.bing.com"
    url = base + "/search"

    def build(self, query: str, options: SearchOptions) -> Request:
        return build_request(self.base, query, options, self.facts.region_code(options.region) or "en-US")


ENGINE = Bing()
