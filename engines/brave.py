"""Brave Search's HTML results page (search.brave.com/search), Brave's own index.

Request settings mirror SearXNG's brave engine: the time range is the `tf`
parameter, everything else travels in cookies (`safesearch`, `country`,
`useLocation=0` so Brave does not guess the region from the IP, `ui_lang`,
`summarizer=0`).

Rows are the `[data-type=web]` snippets. The video/news clusters Brave puts
between them are `div.snippet.standalone` blocks without `data-type=web` and
are not rows; neither is anything marked as an ad.
"""

from __future__ import annotations

import re

from engines.base import EngineFacts, Request, SearchOptions, query_with_domains
from engines.browser import CHROME
from engines.dates import leading_date, parse_date
from engines.markup import attr, first, same_node, text_of
from engines.regions import by_country
from engines.scraped import ScrapedEngine

URL = "https://search.brave.com/search"

_TIME = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_SAFE = {"off": "off", "moderate": "moderate", "strict": "strict"}
# Brave's UI languages (SearXNG's traits "ui_lang"); anything else gets en-us.
_UI_LANGS = {
    "ca": "ca", "de-de": "de-de", "en-ca": "en-ca", "en-gb": "en-gb", "en-us": "en-us",
    "es": "es", "fr-ca": "fr-ca", "fr-fr": "fr-fr", "ja-jp": "ja-jp", "pt-br": "pt-br",
    "sq-al": "sq-al",
}
# The countries Brave Search serves (its API's documented `country` values; the site's `country` cookie
# takes the same codes). Any other country gets Brave's "all".
COUNTRIES = ("AR", "AU", "AT", "BE", "BR", "CA", "CL", "DK", "FI", "FR", "DE", "HK", "IN", "ID", "IT", "JP", "KR",
             "MY", "MX", "NL", "NZ", "NO", "CN", "PL", "PT", "PH", "RU", "SA", "ZA", "ES", "SE", "CH", "TW", "TR",
             "GB", "US")
_DATE_TAIL = re.compile(r"\s*[-–—·]\s*$")


def country_cookie(region: str | None) -> str:
    """Brave's `country` cookie: the two-letter country of the region, or `all`."""
    if region and "-" in region:
        country = region.split("-", 1)[1].strip().lower()
        if re.fullmatch(r"[a-z]{2}", country):
            return country
    return "all"


def ui_lang(region: str | None) -> str:
    if not region:
        return "en-us"
    key = region.lower()
    return _UI_LANGS.get(key) or _UI_LANGS.get(key.split("-")[0]) or "en-us"


def cookies_for(options: SearchOptions) -> str:
    pairs = [
        ("safesearch", _SAFE.get(options.safesearch, "moderate")),
        ("country", country_cookie(options.region)),
        ("useLocation", "0"),
        ("summarizer", "0"),
        ("ui_lang", ui_lang(options.region)),
    ]
    return "; ".join(f"{k}={v}" for k, v in pairs)


def _leading_stamp(content):
    """The `<span class="t-secondary">3 days ago -</span>` opening a description, if any."""
    for child in content.iter(include_text=False):
        if child.tag.startswith("-"):
            continue  # comments
        if child.tag == "span" and "t-secondary" in attr(child, "class").split():
            return child
        return None
    return None


class Brave(ScrapedEngine):
    facts = EngineFacts(
        name="brave",
        profile=CHROME.name,
        tier="primary",
        weight=1.0,
        region="global",
        index="brave",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=by_country(COUNTRIES),
        default_region="all countries",
        native_domains=True,
        paging=True,
        description="Brave Search HTML results (search.brave.com), Brave's independent index",
    )
    url = URL
    per_page = 20  # both corpus pages show 20 [data-type=web] snippets
    # Rows are the [data-type=web] snippets: the video/news clusters between them
    # (div.snippet.standalone) carry no data-type=web.
    results = '[data-type="web"]'
    title = (".search-snippet-title", ".snippet-title", ".title")
    link = ("a.l1", "a.result-header", "a.h", "a[href]")
    ad_inside = '[class*="sponsored"], [class*="ad-badge"], [data-type="ad"]'
    internal_hosts = ("search.brave.com",)  # ad redirects and Brave's own pages
    # "Showing results for <a>corrected</a>. Search instead for ...": .altered-query > .h6 > a in the markup
    # public Brave scrapers select (the page's UI strings carry the same wording).
    correction = (".altered-query a", "#altered-query a")
    # Visible text and widgets of Brave's challenge pages (PoW captcha and its fallback).
    blocked_urls = ("/captcha",)
    blocked_title = ("captcha",)
    blocked_text = ("Verifying you're not a bot", "Verifying you’re not a bot", "Switch to traditional CAPTCHA",
                    "confirm you are not a robot", "I'm not a robot", "prove you're human")
    blocked_css = '[id*="captcha" i], [class*="captcha" i]'
    blocked_detail = "Brave captcha / bot check page"
    ratelimited_text = ("Too many requests", "rate limit")
    ratelimited_detail = "Brave rate-limit page"
    no_results_text = ("Not many great matches came back for your search", "No results found")

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_domains(query, options)  # Brave documents site:, -site: and OR
        params: list[tuple[str, str]] = [("q", text), ("source", "web")]
        if options.page > 1:
            params.append(("offset", str(options.page - 1)))  # a page index, as ddgs and SearXNG send it
        if options.time_range:
            params.append(("tf", _TIME[options.time_range]))
        headers = CHROME.navigate(URL, options.region, referer="https://search.brave.com/")
        headers["Cookie"] = cookies_for(options)
        return Request("GET", URL, params=tuple(params), headers=headers)

    def link_of(self, block, title_node):
        # The link that wraps the title (or is it); else Brave's result-header link classes.
        node = title_node
        while node is not None and not same_node(node, block):
            if node.tag == "a" and attr(node, "href"):
                return node
            node = node.parent
        return first(block, *self.link)

    def snippet_and_date(self, block, options: SearchOptions):
        content = first(block, ".generic-snippet .content", ".snippet-description", ".content")
        if content is None:
            return "", None
        # Video-style snippets: a description div plus "Published <date>" attributes.
        attributes = content.css_first(".snippet-attributes")
        if attributes is not None:
            description = content.css_first("div")
            snippet = "" if same_node(description, attributes) else text_of(description)
            return snippet, parse_date(text_of(attributes), options.now)
        snippet = text_of(content)
        stamp_node = _leading_stamp(content)
        if stamp_node is not None:
            stamp = text_of(stamp_node)
            when = parse_date(_DATE_TAIL.sub("", stamp), options.now)
            if when is not None:
                if snippet.startswith(stamp):
                    snippet = snippet[len(stamp):].strip()
                return snippet, when
        return snippet, leading_date(snippet, options.now)


ENGINE = Brave()
