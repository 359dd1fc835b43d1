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
from engines.markup import attr, first, page_text, parse_html, text_of
from engines.redirects import unwrap

URL = "https://search.brave.com/search"

_TIME = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_SAFE = {"off": "off", "moderate": "moderate", "strict": "strict"}
# Brave's UI languages (SearXNG's traits "ui_lang"); anything else gets en-us.
_UI_LANGS = {
    "ca": "ca", "de-de": "de-de", "en-ca": "en-ca", "en-gb": "en-gb", "en-us": "en-us",
    "es": "es", "fr-ca": "fr-ca", "fr-fr": "fr-fr", "ja-jp": "ja-jp", "pt-br": "pt-br",
    "sq-al": "sq-al",
}

# Visible text of Brave's challenge pages (PoW captcha and its fallback).
_CAPTCHA_TEXT = (
    "Verifying you're not a bot",
    "Verifying you’re not a bot",
    "Switch to traditional CAPTCHA",
    "confirm you are not a robot",
    "I'm not a robot",
    "prove you're human",
)
_RATELIMIT_TEXT = ("Too many requests", "too many requests", "rate limit", "Rate limit")
_NO_RESULTS_TEXT = (
    "Not many great matches came back for your search",
    "No results found",
)
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


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return ""


def _is_ad(block) -> bool:
    if (attr(block, "data-type") or "web") != "web":
        return True
    classes = attr(block, "class").lower().split()
    if any(c in ("ad", "ads", "sponsored") or c.startswith("ad-") for c in classes):
        return True
    return block.css_first('[class*="sponsored"], [class*="ad-badge"], [data-type="ad"]') is not None


def _result_link(block, title_node):
    # The link that wraps the title; else Brave's result-header link class.
    node = title_node
    while node is not None and node is not block:
        if node.tag == "a" and attr(node, "href"):
            return node
        node = node.parent
    return first(block, "a.l1", "a.result-header", "a.h", "a[href]")


def _leading_stamp(content):
    """The `<span class="t-secondary">3 days ago -</span>` opening a description, if any."""
    for child in content.iter(include_text=False):
        if child.tag.startswith("-"):
            continue  # comments
        if child.tag == "span" and "t-secondary" in attr(child, "class").split():
            return child
        return None
    return None


def _snippet_and_date(block, options: SearchOptions):
    content = first(block, ".generic-snippet .content", ".snippet-description", ".content")
    if content is None:
        return "", None
    # Video-style snippets: a description div plus "Published <date>" attributes.
    attributes = content.css_first(".snippet-attributes")
    if attributes is not None:
        description = content.css_first("div")
        snippet = text_of(description) if description is not attributes else ""
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


class Brave(Engine):
    facts = EngineFacts(
        name="brave",
        tier="primary",
        weight=1.0,
        region="global",
        index="brave",
        native_site=True,
        native_time=True,
        description="Brave Search HTML results (search.brave.com), Brave's independent index",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        text = query_with_site(query, options.site)
        params: list[tuple[str, str]] = [("q", text), ("source", "web")]
        if options.time_range:
            params.append(("tf", _TIME[options.time_range]))
        headers = browser_headers(options.region)
        headers["Cookie"] = cookies_for(options)
        headers["Referer"] = "https://search.brave.com/"
        return Request("GET", URL, params=tuple(params), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        failure = http_failure(response)
        if failure:
            return failure
        text = response.text or ""
        tree = parse_html(text)
        base = response.url or URL
        items = []
        for block in tree.css('[data-type="web"]'):
            if _is_ad(block):
                continue
            title_node = first(block, ".search-snippet-title", ".snippet-title", ".title")
            link = _result_link(block, title_node)
            if link is None:
                continue
            url = unwrap(attr(link, "href"), base)
            host = _host(url) if url.startswith(("http://", "https://")) else ""
            if not host or host == "search.brave.com":
                continue  # relative or Brave-internal links (ad redirects) are not results
            title = text_of(title_node) if title_node is not None else text_of(link)
            snippet, when = _snippet_and_date(block, options)
            items.append((title, url, snippet, when))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)

        visible = page_text(tree, 8000)
        title = text_of(tree.css_first("title")).lower()
        where = (response.url or "").lower()
        if (
            "captcha" in title
            or "/captcha" in where
            or any(marker in visible for marker in _CAPTCHA_TEXT)
            or tree.css_first('[id*="captcha" i], [class*="captcha" i]') is not None
        ):
            return Parsed("blocked", detail="Brave captcha / bot check page")
        if any(marker in visible for marker in _RATELIMIT_TEXT):
            return Parsed("ratelimited", detail="Brave rate-limit page")
        if any(marker in visible for marker in _NO_RESULTS_TEXT):
            return Parsed("empty", detail="no results")
        return not_understood("no [data-type=web] snippets and no no-results message")


ENGINE = Brave()
