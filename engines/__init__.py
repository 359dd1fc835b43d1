"""One module per engine; this registry maps canonical engine names to engines.

Engines are pure (request building and parsing); the `plugin` package does
all I/O and never lets engines import it back. The order here is the order of
listings and, within a tier and region, of interleaving ties.
"""

from __future__ import annotations

from engines import (
    baidu,
    bing,
    bing_cn,
    brave,
    brave_api,
    duckduckgo_html,
    duckduckgo_lite,
    exa,
    firecrawl,
    mojeek,
    searxng,
    serper,
    so360,
    sogou,
    startpage,
    tavily,
    wikipedia,
    yahoo,
)
from engines.base import Engine

ENGINES: dict[str, Engine] = {
    module.ENGINE.name: module.ENGINE
    for module in (
        # keyless, scraped
        duckduckgo_html, bing, bing_cn, brave, baidu, wikipedia,
        duckduckgo_lite, yahoo, startpage, mojeek, sogou, so360,
        # keyed APIs and self-hosted
        exa, tavily, brave_api, serper, searxng, firecrawl,
    )
}
