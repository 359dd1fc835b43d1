"""Mojeek web search (www.mojeek.com/search), Mojeek's own independent index.

Request settings follow SearXNG's mojeek engine: `safe` is 0 or 1, the time
range is `since=YYYYMMDD` (Mojeek's documented date filter), and the region
travels in the `lb` (language bias) and `arc` (region code) cookies. No `s`
offset is sent: `s=0` on the first page is known to trigger Mojeek's limiter.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

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
from engines.markup import attr, first, page_text, parse_html, text_of
from engines.redirects import unwrap

URL = "https://www.mojeek.com/search"

_SAFE = {"off": "0", "moderate": "1", "strict": "1"}
# Mojeek writes the United Kingdom as "uk" (its own region links use reg=uk).
_COUNTRY_ALIASES = {"gb": "uk"}

_CAPTCHA_MARKERS = ("captcha-wrap", "altcha", "/js/page_specific/challenge.js")
_BLOCK_TEXT = (
    "automated queries",
    "JavaScript is required to complete this challenge",
    "Sorry, your network appears to be sending automated queries",
)
_NO_RESULTS_TEXT = ("No pages found", "No results found")


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


def _is_ad(block) -> bool:
    classes = attr(block, "class").lower().split()
    if any(c in ("ad", "ads", "sponsored") or c.startswith("ad-") for c in classes):
        return True
    return block.css_first("[class*='sponsored'], [class*='ad-label'], .ad") is not None


class Mojeek(Engine):
    facts = EngineFacts(
        name="mojeek",
        tier="fallback",
        weight=0.6,
        region="global",
        index="mojeek",
        native_site=True,
        native_time=True,
        description="Mojeek web search, its own independent crawl (no Bing/Google)",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_site(query, options.site)
        params: list[tuple[str, str]] = [("q", text), ("safe", _SAFE.get(options.safesearch, "1"))]
        if options.time_range:
            params.append(("since", since_date(options.time_range, options.now)))
        headers = browser_headers(options.region)
        headers["Referer"] = "https://www.mojeek.com/"
        cookies = region_cookies(options.region)
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies)
        return Request("GET", URL, params=tuple(params), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        failure = http_failure(response)
        if failure:
            # A 403 is Mojeek's "automated queries" page: http_failure says blocked.
            return failure
        text = response.text or ""
        tree = parse_html(text)
        base = response.url or URL
        items = []
        for block in tree.css("ul.results-standard > li"):
            if _is_ad(block):
                continue
            link = first(block, "h2 a.title", "a.title", "h2 a")
            if link is None:
                continue
            href = attr(link, "href") or attr(block.css_first("a.ob"), "href")
            if not href.startswith(("http://", "https://", "//")):
                continue  # relative links are Mojeek's own pages ("See more results from ...")
            url = unwrap(href, base)
            snippet = text_of(first(block, "p.s"))
            stamp = text_of(first(block, ".date", ".mdate", "time"))
            when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
            items.append((text_of(link), url, snippet, when))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)

        title = text_of(tree.css_first("title"))
        visible = page_text(tree, 6000)
        if (
            title.strip().lower() == "captcha"
            or any(marker in text for marker in _CAPTCHA_MARKERS)
            or any(marker in visible for marker in _BLOCK_TEXT)
        ):
            return Parsed("blocked", detail="Mojeek captcha / automated-queries page")
        if any(marker in visible for marker in _NO_RESULTS_TEXT):
            return Parsed("empty", detail="no results")
        return not_understood("no ul.results-standard rows and no no-results message")


ENGINE = Mojeek()
