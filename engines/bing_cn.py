"""Bing China (cn.bing.com): Bing's index with the zh-CN market, the CJK lead engine."""

from __future__ import annotations

from engines.base import Engine, EngineFacts, Parsed, Request, Response, SearchOptions
from engines.bing import build_request, parse_page


class BingCn(Engine):
    facts = EngineFacts(
        name="bing-cn",
        tier="primary",
        weight=1.0,
        region="cjk",
        index="bing",
        native_site=True,
        native_time=True,
        description="Bing China (cn.bing.com), zh-CN market",
    )
    base = "https://cn.bing.com"

    def build(self, query: str, options: SearchOptions) -> Request:
        region = options.region or ""
        market = region if region.lower().startswith("zh-") else "zh-CN"
        return build_request(self.base, query, options, market)

    def parse(self, response: Response, query: str, options: SearchOptions) -> Parsed:
        return parse_page(response, options)


ENGINE = BingCn()
