"""Engines that read an HTML results page: selectors and markers as data, one shared extractor.

As in ddgs (an engine is a few declarative attributes read by one extractor), a scraped engine is its
request builder, a block of selectors (result container, title, link, snippet, date), a block of
markers (no results, CAPTCHA/block, rate limit) and hooks only for its real quirks. The extractor
and the classification of a page without rows live here, once:

    rows?            ok (with the engine's spelling correction, if the page shows one)
    no rows, then:   blocked   (a block marker in the visible text, the <title>, or a CSS match)
                     ratelimited (a rate-limit marker in the visible text)
                     empty     (a no-results element or text)
                     blocked   (a block marker in the raw markup: weaker, scripts carry such strings)
                     the engine's `unrecognised` hook, by default "page not understood"

Visible-text markers are matched case-insensitively against the page text without scripts and styles.
"""

from __future__ import annotations

import re
from datetime import date
from typing import ClassVar
from urllib.parse import urlsplit

from engines.base import (
    Engine,
    Parsed,
    Response,
    SearchOptions,
    not_understood,
    parse_retry_after,
    rows_from,
)
from engines.dates import leading_date, parse_date
from engines.hosts import host_of
from engines.markup import ancestor, attr, first, inside, page_text, parse_html, text_of
from engines.redirects import unwrap

Item = tuple[str, str, str, "date | None"]

_QUOTES = " \"'“”‘’「」"

# Class tokens engines give ad containers: "ad", "ads", "sponsored", "ad-…".
AD_CLASS = re.compile(r"(?:^|\s)(?:ads?|sponsored|ad-[\w-]*)(?:\s|$)", re.I)


def host_and_path(url: str) -> tuple[str, str]:
    """The host (engines.hosts.host_of) and the path ("/" when empty) of a URL; ("", "") when it cannot
    be split."""
    try:
        parts = urlsplit(url or "")
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return "", ""
    return host_of(url), parts.path or "/"


def absolute_http(url: str) -> bool:
    """An absolute http(s) link with a host."""
    return url.startswith(("http://", "https://")) and bool(host_of(url))


def on_host(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


class ScrapedEngine(Engine):
    """A scraped engine: subclasses set facts, `url`, selectors and markers, and build their request."""

    # The results page; the base for relative links when the response does not say where it came from.
    url: ClassVar[str] = ""

    per_page: ClassVar[int] = 10  # rows one results page shows: page N's positions start after (N-1) pages

    dropped: ClassVar[str] = ""  # CSS of elements removed before extraction (inline scripts and styles)

    # --- selectors (CSS; a tuple is tried in order, the first selector that matches wins) ---
    results: ClassVar[str] = ""                    # one result container
    title: ClassVar[tuple[str, ...]] = ()          # the title inside a container
    link: ClassVar[tuple[str, ...]] = ()           # the link, when the title has none inside or around it
    snippet: ClassVar[tuple[str, ...]] = ()
    date: ClassVar[tuple[str, ...]] = ()           # a date stamp; else a date opening the snippet
    ad_class: ClassVar[re.Pattern[str]] = AD_CLASS  # a container whose class matches is an ad
    ad_id: ClassVar[re.Pattern[str] | None] = None  # a container whose id matches is an ad
    ad_inside: ClassVar[str] = ""                  # CSS of an ad label inside a container
    ad_around: ClassVar[re.Pattern[str] | None] = None  # an ancestor whose id/class matches makes an ad
    # A label inside a container whose whole text is one of these ("广告", "推广") makes an ad.
    ad_labels: ClassVar[tuple[str, ...]] = ()
    internal_hosts: ClassVar[tuple[str, ...]] = ()  # links to these hosts are the engine's own pages
    correction: ClassVar[tuple[str, ...]] = ()     # the corrected query the page shows, if any

    # --- markers: what a page without rows is ---
    no_results_css: ClassVar[str] = ""
    no_results_text: ClassVar[tuple[str, ...]] = ()
    blocked_urls: ClassVar[tuple[str, ...]] = ()   # in the final URL: a block page, whatever its status or rows
    blocked_locations: ClassVar[tuple[str, ...]] = ()  # in a Location header: a redirect to a block page
    blocked_text: ClassVar[tuple[str, ...]] = ()   # visible text or <title>
    blocked_title: ClassVar[tuple[str, ...]] = ()  # <title> only
    blocked_css: ClassVar[str] = ""
    blocked_markup: ClassVar[tuple[str, ...]] = ()  # raw page, case-sensitive
    blocked_detail: ClassVar[str] = "challenge page (CAPTCHA)"
    ratelimited_text: ClassVar[tuple[str, ...]] = ()
    ratelimited_detail: ClassVar[str] = "rate-limit page"

    # ----- the shared extractor -----
    def classify_status(self, response: Response) -> Parsed | None:
        """A block page's URL, or a redirect to one (not followed), says blocked whatever the status;
        otherwise the base's HTTP classification."""
        location = response.headers.get("location", "") or ""
        if self.blocked_url(response) or any(marker in location for marker in self.blocked_locations):
            return Parsed("blocked", detail=self.blocked_detail)
        return super().classify_status(response)

    def blocked_url(self, response: Response) -> bool:
        """Whether the final URL is a block page's (`blocked_urls`, case-insensitive)."""
        where = (response.url or "").lower()
        return any(marker in where for marker in self.blocked_urls)

    def parse_body(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        text = self.decode(response)
        tree = parse_html(text)
        self.prepare(tree)
        rows = rows_from(self.items(tree, self.base_url(response), options), offset=self.rows_before(options))
        if rows:
            return Parsed("ok", rows, correction=self.corrected_query(tree, query))
        return self.no_rows(response, text, tree, query, options)

    # ----- hooks, with the behaviour most engines share -----
    def rows_before(self, options: SearchOptions) -> int:
        """How many rows the pages before `options.page` held, so positions continue across pages."""
        return (max(options.page, 1) - 1) * self.per_page

    def decode(self, response: Response) -> str:
        """The page text the parser reads (an engine may repair a transport's mis-decoding)."""
        return response.text or ""

    def prepare(self, tree) -> None:
        """Adjust the parsed tree before extraction: by default, remove the `dropped` elements."""
        if self.dropped:
            for node in tree.css(self.dropped):
                node.decompose()

    def base_url(self, response: Response) -> str:
        """What relative links are resolved against: where the page came from when that is the engine's own
        site; otherwise (a mirror, proxy or test endpoint in front of it) the engine's own address, since a
        results page's relative links are always the engine's own redirectors and pages."""
        if _same_site(response.url or "", self.url):
            return response.url
        return self.url

    def items(self, tree, base: str, options: SearchOptions) -> list[Item]:
        """(title, url, snippet, date) of every result container that is not an ad, in page order."""
        items = []
        for block in self.blocks(tree):
            if self.is_ad(block):
                continue
            item = self.extract(block, base, options)
            if item is not None:
                items.append(item)
        return items

    def blocks(self, tree) -> list:
        return tree.css(self.results)

    def is_ad(self, block) -> bool:
        if self.ad_class.search(attr(block, "class")):
            return True
        if self.ad_id is not None and self.ad_id.search(attr(block, "id")):
            return True
        if self.ad_inside and block.css_first(self.ad_inside) is not None:
            return True
        if self.ad_around is not None and inside(block, self.ad_around):
            return True
        return bool(self.ad_labels) and any(
            text_of(label) in self.ad_labels for label in block.css("span, i, a") if len(label.css("*")) <= 1)

    def extract(self, block, base: str, options: SearchOptions) -> Item | None:
        title_node = first(block, *self.title) if self.title else None
        link = self.link_of(block, title_node)
        if link is None:
            return None
        url = unwrap(self.href_of(block, link), base)
        if not self.is_result_url(url):
            return None
        snippet, when = self.snippet_and_date(block, options)
        return self.title_of(title_node, link), url, snippet, when

    def link_of(self, block, title_node):
        """The title's own link (the title itself, inside it, or around it), else the `link` selectors."""
        if title_node is not None:
            if title_node.tag == "a" and attr(title_node, "href"):
                return title_node
            inner = title_node.css_first("a[href]")
            if inner is not None:
                return inner
            around = ancestor(title_node, "a", stop=block)
            if around is not None and attr(around, "href"):
                return around
        return first(block, *self.link) if self.link else None

    def href_of(self, block, link) -> str:
        return attr(link, "href")

    def is_result_url(self, url: str) -> bool:
        """An absolute http(s) link with a host, not to the engine's own pages."""
        if not url.startswith(("http://", "https://")):
            return False
        host = host_of(url)
        return bool(host) and not on_host(host, self.internal_hosts)

    def title_of(self, title_node, link) -> str:
        return text_of(title_node) if title_node is not None else text_of(link)

    def snippet_and_date(self, block, options: SearchOptions) -> tuple[str, date | None]:
        snippet = text_of(first(block, *self.snippet)) if self.snippet else ""
        stamp = self.stamp_of(block)
        when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
        return snippet, when

    def stamp_of(self, block) -> str:
        return text_of(first(block, *self.date)) if self.date else ""

    def corrected_query(self, tree, query: str) -> str | None:
        """The query the engine says it searched instead, when the page shows one: the first text the
        `correction` selectors find that is not the query itself (the same notice links back to the
        original: "Including results for X. Do you want results only for Y?")."""
        asked = " ".join(query.split()).casefold()
        for selector in self.correction:
            for node in tree.css(selector):
                text = " ".join(text_of(node).strip(_QUOTES).split())
                if text and text.casefold() != asked:
                    return text
        return None

    # ----- a page without rows -----
    def no_rows(self, response: Response, text: str, tree, query: str, options: SearchOptions) -> Parsed:
        visible = page_text(tree, 8000).lower()
        title = text_of(tree.css_first("title")).lower()
        if (any(m.lower() in visible or m.lower() in title for m in self.blocked_text)
                or any(m.lower() in title for m in self.blocked_title)
                or (self.blocked_css and tree.css_first(self.blocked_css) is not None)):
            return Parsed("blocked", detail=self.blocked_detail)
        if any(m.lower() in visible for m in self.ratelimited_text):
            return Parsed("ratelimited", detail=self.ratelimited_detail,
                          retry_after=parse_retry_after(response.headers.get("retry-after")))
        if ((self.no_results_css and tree.css_first(self.no_results_css) is not None)
                or any(m.lower() in visible for m in self.no_results_text)):
            return Parsed("empty", detail="no results")
        if any(marker in text for marker in self.blocked_markup):
            return Parsed("blocked", detail=self.blocked_detail)
        return self.unrecognised(response, text, tree, query, options)

    def unrecognised(self, response: Response, text: str, tree, query: str, options: SearchOptions) -> Parsed:
        return not_understood(f"no {self.results} results and no no-results message")


def _same_site(url: str, own: str) -> bool:
    """Whether `url` is on the site of the engine address `own` (same host, or a sibling under its last two
    labels: html.duckduckgo.com for duckduckgo.com)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    site = ".".join((urlsplit(own).hostname or "").split(".")[-2:])
    return bool(site) and (parts.hostname == site or parts.hostname.endswith("." + site))
