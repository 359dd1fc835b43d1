"""Mojeek web search (www.mojeek.com/search), Mojeek's own independent index.

Request settings follow SearXNG's mojeek engine: `safe` is 0 or 1, the time
range is `since=YYYYMMDD` (Mojeek's documented date filter), and the region
travels in the `lb` (language bias) and `arc` (region code) cookies. The first
page sends no `s` offset (`s=0` is known to trigger Mojeek's limiter); later
pages send the 1-based index of their first row, as ddgs does.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from engines.base import EngineFacts, Request, SearchOptions, query_with_site
from engines.browser import CHROME
from engines.markup import attr
from engines.scraped import ScrapedEngine

URL = "https://www.mojeek.com/search"

_SAFE = {"off": "0", "moderate": "1", "strict": "1"}
# Mojeek writes the United Kingdom as "uk" (its own region links use reg=uk).
_COUNTRY_ALIASES = {"gb": "uk"}


def _months_back(day: date, months: int) -> date:
    """The same day `months` earlier, clamped to the end of a shorter month."""
    year, month0 = divmod(day.year * 12 + day.month - 1 - months, 12)
    dom = day.day
    while True:
        try:
            return date(year, month0 + 1, dom)
        except ValueError:
            dom -= 1


def since_date(time_range: str, now: datetime | None) -> str:
    """Mojeek's `since` value (YYYYMMDD) for a time range, counted back from `now`."""
    today = (now or datetime.now()).date()
    if time_range == "day":
        start = today - timedelta(days=1)
    elif time_range == "week":
        start = today - timedelta(days=7)
    elif time_range == "month":
        start = _months_back(today, 1)
    else:
        start = _months_back(today, 12)
    return start.strftime("%Y%m%d")


def region_cookies(region: str | None) -> list[tuple[str, str]]:
    if not region:
        return []
    lang, _, country = region.partition("-")
    pairs = []
    lang = lang.strip().lower()
    if lang.isalpha() and 2 <= len(lang) <= 3:
        pairs.append(("lb", lang))
    country = country.strip().lower()
    if country.isalpha() and len(country) == 2:
        pairs.append(("arc", _COUNTRY_ALIASES.get(country, country)))
    return pairs


class Mojeek(ScrapedEngine):
    facts = EngineFacts(
        name="mojeek",
        profile=CHROME.name,
        tier="fallback",
        weight=0.6,
        region="global",
        index="mojeek",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate"),  # safe=0/1: nothing stricter than on
        regions=None,  # language bias (lb) and region code (arc) from any language-COUNTRY tag
        paging=True,
        description="Mojeek web search, its own independent crawl (no Bing/Google)",
    )
    url = URL
    results = "ul.results-standard > li"
    title = ("h2 a.title", "a.title", "h2 a")  # the title is its link
    snippet = ("p.s",)
    date = (".date", ".mdate", "time")
    ad_inside = "[class*='sponsored'], [class*='ad-label'], .ad"
    internal_hosts = ("mojeek.com",)  # relative links are Mojeek's own pages ("See more results from ...")
    blocked_title = ("captcha",)
    blocked_text = ("automated queries", "JavaScript is required to complete this challenge",
                    "Sorry, your network appears to be sending automated queries")
    blocked_markup = ("captcha-wrap", "altcha", "/js/page_specific/challenge.js")
    blocked_detail = "Mojeek captcha / automated-queries page"
    no_results_text = ("No pages found", "No results found")
    # (A 403 is Mojeek's "automated queries" page: the base's HTTP classification says blocked.)

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_site(query, options.site)
        params: list[tuple[str, str]] = [("q", text), ("safe", _SAFE.get(options.safesearch, "1"))]
        if options.page > 1:
            params.append(("s", str((options.page - 1) * 10 + 1)))  # 1-based first row, as ddgs sends it
        if options.time_range:
            params.append(("since", since_date(options.time_range, options.now)))
        headers = CHROME.navigate(URL, options.region, referer="https://www.mojeek.com/")
        cookies = region_cookies(options.region)
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies)
        return Request("GET", URL, params=tuple(params), headers=headers)

    def href_of(self, block, link) -> str:
        return attr(link, "href") or attr(block.css_first("a.ob"), "href")


ENGINE = Mojeek()
