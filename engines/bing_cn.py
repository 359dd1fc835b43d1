"""Bing China (cn.bing.com): Bing's index with the zh-CN market, the CJK lead engine."""

from __future__ import annotations

from engines.browser import CHROME
from engines.base import EngineFacts, Request, SearchOptions
from engines.bing import MARKETS, BingPage, build_request

# cn.bing.com serves the Chinese markets only.
_MARKETS = {tag: market for tag, market in MARKETS.items() if tag.startswith("zh-")}


class BingCn(BingPage):
    facts = EngineFacts(
        name="bing-cn",
        profile=CHROME.name,
        tier="primary",
        weight=1.0,
        region="cjk",
        index="bing",
        native_site=True,
        native_time=True,
        safesearch_levels=("off", "moderate", "strict"),
        regions=_MARKETS,
        native_domains=True,
        paging=True,
        default_region="zh-CN",
        description="Bing China (cn.bing.com), zh-CN market",
    )
    base = "https://cn.bing.com"
    url = base + "/search"

    def build(self, query: str, options: SearchOptions) -> Request:
        return build_request(self.base, query, options, self.facts.region_code(options.region) or "zh-CN")


ENGINE = BingCn()
