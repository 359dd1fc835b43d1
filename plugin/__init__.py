"""metasearch: many web search engines at once, the few best rows back, an honest account of each engine.

    from plugin import search, Settings
    response = await search("python 3.13 release notes", limit=8)

Names are imported lazily so that `metasearch --version` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["search", "search_sync", "Searcher", "Settings", "SearchResponse", "SearchError", "__version__"]

_LAZY = {
    "search": ("plugin.search", "search"),
    "search_sync": ("plugin.search", "search_sync"),
    "Searcher": ("plugin.search", "Searcher"),
    "Settings": ("plugin.settings", "Settings"),
    "SearchResponse": ("plugin.models", "SearchResponse"),
    "SearchError": ("plugin.errors", "SearchError"),
}

if TYPE_CHECKING:  # pragma: no cover
    from plugin.errors import SearchError
    from plugin.models import SearchResponse
    from plugin.search import Searcher, search, search_sync
    from plugin.settings import Settings


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'plugin' has no attribute {name!r}")
