"""DuckDuckGo's no-JavaScript HTML endpoint (html.duckduckgo.com/html/), Bing's index."""

from __future__ import annotations

import re

from engines import duckduckgo as ddg
from engines.base import EngineFacts, Parsed, Request, Response, SearchOptions, query_with_domains
from engines.browser import CHROME
from engines.markup import attr, text_of
from engines.scraped import AD_CLASS, ScrapedEngine

URL = "https://html.duckduckgo.com/html/"
HOME = "https://html.duckduckgo.com/"  # the page whose form posts to URL


class DuckDuckGoHtml(ScrapedEngine):
    facts = EngineFacts(
        name="duckduckgo-html",
        profile=CHROME.name,
        tier="primary",
        weight=1.0,
        region="global",
        index="bing",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=ddg.REGIONS,
        default_region="no region (wt-wt)",
        native_domains=True,
        paging=True,
        description="DuckDuckGo HTML endpoint (POST), serves Bing's index",
    )
    url = URL
    results = "div.result"
    title = ("a.result__a", "h2 a")  # the title is its link
    snippet = (".result__snippet",)
    # <div class="msg msg--spelling"><div id="did_you_mean">Including results for <a href="/html/?q=..."><b>
    # corrected</b></a>. ...: SearXNG's duckduckgo engine reads //div[@id="did_you_mean"]//a.
    correction = ("#did_you_mean a",)
    ad_class = re.compile(AD_CLASS.pattern + r"|result--ad", re.I)
    no_results_css = ".result--no-result, .no-results"
    no_results_text = ("No results.", "No more results")
    blocked_text = ddg.BLOCKED_TEXT
    blocked_markup = ddg.BLOCKED_MARKUP
    blocked_detail = ddg.BLOCKED_DETAIL

    def build(self, query: str, options: SearchOptions) -> Request:
        form = [("q", query_with_domains(query, options))]
        form += ddg.page_fields(options.page) or [("b", "")]
        form.append(("kl", ddg.region_code(options.region)))
        if options.time_range:
            form.append(("df", ddg.TIME[options.time_range]))
        form.append(("kp", ddg.SAFE[options.safesearch]))
        # DuckDuckGo's HTML page is a form on html.duckduckgo.com posted to itself: Chrome sends it with
        # cache-control, content-type before the User-Agent, origin after it and the referer after the
        # fetch metadata (recorded from Chromium; tests/engines/test_duckduckgo_html.py holds the order).
        return Request("POST", URL, form=tuple(form), headers=CHROME.form_post(URL, HOME, options.region))

    def classify_status(self, response: Response) -> Parsed | None:
        return ddg.refusal_status(response)

    def rows_before(self, options: SearchOptions) -> int:
        return ddg.rows_before(options.page)

    def base_url(self, response: Response) -> str:
        return URL  # its links are protocol-relative redirects (//duckduckgo.com/l/?uddg=...)

    def stamp_of(self, block) -> str:
        # The date sits in a bare <span> after the displayed URL (not the icon span).
        return " ".join(text_of(span) for span in block.css(".result__extras__url > span, .result__timestamp")
                        if "result__icon" not in attr(span, "class"))


ENGINE = DuckDuckGoHtml()
