"""One module per engine; this registry maps canonical engine names to engines.

Engines are pure (request building and parsing); the `plugin` package does
all I/O and never lets engines import it back.
"""

from __future__ import annotations

from engines import bing, bing_cn, duckduckgo_html, duckduckgo_lite, startpage, yahoo
from engines.base import Engine

ENGINES: dict[str, Engine] = {
    module.ENGINE.name: module.ENGINE
    for module in (duckduckgo_html, bing, bing_cn, duckduckgo_lite, yahoo, startpage)
}


def get(name: str) -> Engine:
    return ENGINES[name]
