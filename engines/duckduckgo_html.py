"""DuckDuckGo's no-JavaScript HTML endpoint (html.duckduckgo.com/html/), Bing's index."""

from __future__ import annotations

from engines.base import (
    Engine,
    EngineFacts,
    Parsed,
    Request,
    Response,
    SearchOptions,
    http_failure,
    not_understood,
    parse_retry_after,
    query_with_site,
    rows_from,
)
from engines.browser import browser_headers
from engines.dates import leading_date, parse_date
from engines.markup import attr, first, page_text, parse_html, text_of
from engines.redirects import unwrap

URL = "https://html.duckduckgo.com/html/"

# kl: DuckDuckGo's region codes are country-language.
_REGIONS = {
    "en-us": "us-en", "en-gb": "uk-en", "en-au": "au-en", "en-ca": "ca-en", "en-in": "in-en",
    "zh-cn": "cn-zh", "zh-tw": "tw-tzh", "zh-hk": "hk-tzh", "ja-jp": "jp-jp", "ko-kr": "kr-kr",
    "de-de": "de-de", "fr-fr": "fr-fr", "es-es": "es-es", "it-it": "it-it", "ru-ru": "ru-ru",
    "pt-br": "br-pt", "vi-vn": "vn-vi",
}
_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}
_SAFE = {"off": "-2", "moderate": "-1", "strict": "1"}

# DDG's rate-limit / bot pages: the anomaly challenge, and the 202 answer.
_BLOCK_MARKERS = ("anomaly-modal", "anomaly.js", "bots use DuckDuckGo too", 'id="challenge-form"')


def refusal_of(response: Response, text: str) -> Parsed | None:
    """DuckDuckGo's ways of refusing a client (both endpoints): the 202 answer and the anomaly challenge."""
    if response.status == 202:
        # DDG answers a too-eager client with 202 and an empty or anomaly page.
        return Parsed("ratelimited", detail="HTTP 202 rate-limit page",
                      retry_after=parse_retry_after(response.headers.get("retry-after")))
    if any(marker in text for marker in _BLOCK_MARKERS):
        return Parsed("blocked", detail="DuckDuckGo anomaly challenge (CAPTCHA)")
    return None


def region_code(region: str | None) -> str:
    if not region:
        return "wt-wt"
    return _REGIONS.get(region.lower(), "wt-wt")


class DuckDuckGoHtml(Engine):
    facts = EngineFacts(
        name="duckduckgo-html",
        tier="primary",
        weight=1.0,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        description="DuckDuckGo HTML endpoint (POST), serves Bing's index",
    )

    def build(self, query: str, options: SearchOptions) -> Request:
        form = [("q", query_with_site(query, options.site)), ("b", ""), ("kl", region_code(options.region))]
        if options.time_range:
            form.append(("df", _TIME[options.time_range]))
        form.append(("kp", _SAFE[options.safesearch]))
        headers = browser_headers(options.region)
        headers.update({
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "https://html.duckduckgo.com",
            "Referer": "https://html.duckduckgo.com/",
        })
        return Request("POST", URL, form=tuple(form), headers=headers)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        text = response.text
        refusal = refusal_of(response, text)
        if refusal:
            return refusal
        failure = http_failure(response)
        if failure:
            return failure
        tree = parse_html(text)
        items = []
        no_results = False
        for block in tree.css("div.result"):
            classes = attr(block, "class")
            if "result--ad" in classes:
                continue
            if "result--no-result" in classes or block.css_first(".no-results") is not None:
                no_results = True
                continue
            link = first(block, "a.result__a", "h2 a")
            if link is None:
                continue
            snippet = text_of(first(block, ".result__snippet"))
            # The date sits in a bare <span> after the displayed URL (not the icon span).
            stamp = " ".join(text_of(span) for span in block.css(".result__extras__url > span, .result__timestamp")
                             if "result__icon" not in attr(span, "class"))
            when = parse_date(stamp, options.now) if stamp else leading_date(snippet, options.now)
            items.append((text_of(link), unwrap(attr(link, "href"), URL), snippet, when))
        rows = rows_from(items)
        if rows:
            return Parsed("ok", rows)
        if no_results or tree.css_first(".no-results") is not None:
            return Parsed("empty", detail="no results")
        body = page_text(tree, 2000)
        if "No results." in body or "No more results" in body:
            return Parsed("empty", detail="no results")
        return not_understood("no result blocks and no no-results message")


ENGINE = DuckDuckGoHtml()
