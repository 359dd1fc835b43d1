"""DuckDuckGo's Lite endpoint (lite.duckduckgo.com/lite/): a plain table of results, Bing's index.

The page is one table where each result takes four rows: the numbered title
link (`a.result-link`), the snippet (`td.result-snippet`), the displayed URL
(`span.link-text`, sometimes followed by a `.timestamp`), and a spacer row.
Sponsored results carry `tr.result-sponsored` (and link through
duckduckgo.com/y.js); they are not rows.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from engines import duckduckgo as ddg
from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, not_understood, query_with_domains
from engines.browser import CHROME
from engines.dates import leading_date, parse_date
from engines.markup import attr, text_of
from engines.redirects import unwrap
from engines.hosts import host_of
from engines.scraped import Item, ScrapedEngine

URL = "https://lite.duckduckgo.com/lite/"


def _is_ad_link(url: str) -> bool:
    """DuckDuckGo's ad redirect, duckduckgo.com/y.js?..."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return False
    return host_of(url).endswith("duckduckgo.com") and path.startswith("/y.js")


class DuckDuckGoLite(ScrapedEngine):
    facts = EngineFacts(
        name="duckduckgo-lite",
        profile=CHROME.name,
        tier="fallback",
        weight=0.8,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=ddg.REGIONS,
        default_region="no region (wt-wt)",
        native_domains=True,
        paging=True,
        description="DuckDuckGo Lite endpoint (POST, table layout), serves Bing's index",
    )
    url = URL
    results = "a.result-link"
    no_results_text = ("No results.", "No more results.")
    blocked_text = ddg.BLOCKED_TEXT
    blocked_markup = ddg.BLOCKED_MARKUP
    blocked_detail = ddg.BLOCKED_DETAIL

    def build(self, query: str, options: SearchOptions) -> Request:
        form = [("q", query_with_domains(query, options)), *ddg.page_fields(options.page),
                ("kl", ddg.region_code(options.region))]
        if options.time_range:
            form.append(("df", ddg.TIME[options.time_range]))
        form.append(("kp", ddg.SAFE.get(options.safesearch, "-1")))
        # A form on lite.duckduckgo.com posted to itself, with Chrome's headers for it (see duckduckgo_html).
        return Request("POST", URL, form=tuple(form),
                       headers=CHROME.form_post(URL, "https://lite.duckduckgo.com/", options.region))

    def classify_status(self, response: Response) -> Parsed | None:
        return ddg.refusal_status(response)  # the same 202 answer as the html endpoint

    def rows_before(self, options: SearchOptions) -> int:
        return ddg.rows_before(options.page)

    def decode(self, response: Response) -> str:
        """The decoded page; re-decode a UTF-16 body the transport read as a byte-per-char charset."""
        text = response.text or ""
        body = response.body or b""
        if body[:2] in (b"\xff\xfe", b"\xfe\xff") and "\x00" in text[:200]:
            try:
                return body.decode("utf-16")
            except UnicodeDecodeError:
                return body.decode("utf-16", errors="replace")
        return text

    def items(self, tree, base: str, options: SearchOptions) -> list[Item]:
        # One table; each result takes four rows: the numbered title link (a.result-link), the snippet
        # (td.result-snippet), the displayed URL (span.link-text, sometimes a .timestamp) and a spacer.
        # Sponsored results carry tr.result-sponsored on any of their rows (and link through y.js).
        groups: list[dict] = []
        current: dict | None = None
        for tr in tree.css("tr"):
            sponsored = "result-sponsored" in attr(tr, "class")
            link = tr.css_first("a.result-link")
            if link is not None:
                current = {"link": link, "snippet": "", "stamp": "", "sponsored": sponsored}
                groups.append(current)
                continue
            if current is None:
                continue
            if sponsored:
                current["sponsored"] = True
            cell = tr.css_first("td.result-snippet")
            if cell is not None and not current["snippet"]:
                current["snippet"] = text_of(cell)
            stamp = tr.css_first(".timestamp")
            if stamp is not None and not current["stamp"]:
                current["stamp"] = text_of(stamp)
        items = []
        for group in groups:
            link = group["link"]
            url = unwrap(attr(link, "href"), base)
            if group["sponsored"] or _is_ad_link(url) or not url.startswith(("http://", "https://")):
                continue
            snippet, stamp = group["snippet"], group["stamp"]
            when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
            items.append((text_of(link), url, snippet, when))
        return items

    def unrecognised(self, response: Response, text: str, tree, query: str, options: SearchOptions) -> Parsed:
        if tree.css_first("a.result-link") is not None:
            return not_understood("only sponsored rows and no no-results message")
        return not_understood("no a.result-link rows and no no-results message")


ENGINE = DuckDuckGoLite()
