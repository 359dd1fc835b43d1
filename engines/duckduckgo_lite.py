"""DuckDuckGo's Lite endpoint (lite.duckduckgo.com/lite/): a plain table of results, Bing's index.

The page is one table where each result takes four rows: the numbered title
link (`a.result-link`), the snippet (`td.result-snippet`), the displayed URL
(`span.link-text`, sometimes followed by a `.timestamp`), and a spacer row.
Sponsored results carry `tr.result-sponsored` (and link through
duckduckgo.com/y.js); they are not rows.
"""

from __future__ import annotations

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
from engines.duckduckgo_html import refusal_of, region_code
from engines.markup import attr, page_text, parse_html, text_of
from engines.redirects import unwrap

URL = "https://lite.duckduckgo.com/lite/"

_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}
_SAFE = {"off": "-2", "moderate": "-1", "strict": "1"}

_NO_RESULTS = ("No results.", "No more results.")


def _page_text(response: Response) -> str:
    """The decoded page; re-decode a UTF-16 body the transport read as a byte-per-char charset."""
    text = response.text or ""
    body = response.body or b""
    if body[:2] in (b"\xff\xfe", b"\xfe\xff") and "\x00" in text[:200]:
        try:
            return body.decode("utf-16")
        except UnicodeDecodeError:
            return body.decode("utf-16", errors="replace")
    return text


def _is_ad_link(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    return host.endswith("duckduckgo.com") and parts.path.startswith("/y.js")


class DuckDuckGoLite(Engine):
    facts = EngineFacts(
        name="duckduckgo-lite",
        tier="fallback",
        weight=0.8,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        description="DuckDuckGo Lite endpoint (POST, table layout), serves Bing's index",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        form = [("q", query_with_site(query, options.site)), ("kl", region_code(options.region))]
        if options.time_range:
            form.append(("df", _TIME[options.time_range]))
        form.append(("kp", _SAFE.get(options.safesearch, "-1")))
        headers = browser_headers(options.region)
        headers.update({
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "https://lite.duckduckgo.com",
            "Referer": "https://lite.duckduckgo.com/",
        })
        return Request("POST", URL, form=tuple(form), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        text = _page_text(response)
        refusal = refusal_of(response, text)  # the same 202 answer and anomaly page as the html endpoint
        if refusal:
            return refusal
        failure = http_failure(response)
        if failure:
            return failure
        tree = parse_html(text)
        base = response.url if (response.url or "").startswith("http") else URL
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
            snippet = group["snippet"]
            stamp = group["stamp"]
            when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
            items.append((text_of(link), url, snippet, when))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        visible = page_text(tree, 4000)
        if any(marker in visible for marker in _NO_RESULTS):
            return Parsed("empty", detail="no results")
        if groups:
            return not_understood("only sponsored rows and no no-results message")
        return not_understood("no a.result-link rows and no no-results message")


ENGINE = DuckDuckGoLite()
