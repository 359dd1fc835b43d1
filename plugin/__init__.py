"""metasearch: many web search engines at once, the few best rows back, an honest account of each engine.

    from plugin import search, Settings
    response = await search("python 3.13 release notes", limit=8)

The package is grouped by role; data flows one way, and `plugin` imports `engines`, never the reverse:
- `plugin.pipeline`: one search, from the query to the cut list (plan, engine runs, gate, fusion).
- `plugin.infra`: what the pipeline stands on (transport, shared state, cooldowns, logs, metrics).
- `plugin.surfaces`: how a harness calls it (CLI, MCP server, HTTP service, tool schemas, rendering).
- `plugin.bench`: measuring quality offline (recordings, replay, metrics, baselines).
`plugin.settings` (every knob), `plugin.models` (what a search returns) and `plugin.errors` (error
codes) are shared by all of them.

Public names are imported lazily so that `metasearch --version` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["search", "search_sync", "Searcher", "Settings", "SearchResponse", "SearchError",
           "render_for_model", "fetch", "fetch_sync", "FetchResponse", "FetchError", "verify", "verify_sync",
           "VerifyResponse", "__version__"]

_LAZY = {
    "search": ("plugin.pipeline.searcher", "search"),
    "search_sync": ("plugin.pipeline.searcher", "search_sync"),
    "Searcher": ("plugin.pipeline.searcher", "Searcher"),
    "Settings": ("plugin.settings", "Settings"),
    "SearchResponse": ("plugin.models", "SearchResponse"),
    "SearchError": ("plugin.errors", "SearchError"),
    "render_for_model": ("plugin.surfaces.render", "render_for_model"),
    "__version__": ("plugin.version", "VERSION"),
    # Reading a page (plugin/reading/): a package, not a `fetch` module, so nothing shadows the function.
    "fetch": ("plugin.reading.reader", "fetch"),
    "fetch_sync": ("plugin.reading.reader", "fetch_sync"),
    "FetchResponse": ("plugin.models", "FetchResponse"),
    "FetchError": ("plugin.errors", "FetchError"),
    # Checking a quote against a page (plugin/reading/verify.py).
    "verify": ("plugin.reading.verify", "verify"),
    "verify_sync": ("plugin.reading.verify", "verify_sync"),
    "VerifyResponse": ("plugin.models", "VerifyResponse"),
}

# Page reads whose calls are checked against a signature (the one named: fetch_sync and verify_sync take
# **kwargs and pass them on), raising FetchError(invalid_parameter) with the closest name, never TypeError.
# `search` and `search_sync` are checked where they are defined.
_CHECKED = {"fetch": "fetch", "fetch_sync": "fetch", "verify": "verify", "verify_sync": "verify"}

if TYPE_CHECKING:  # pragma: no cover
    from plugin.errors import FetchError, SearchError
    from plugin.models import FetchResponse, SearchResponse
    from plugin.reading.reader import fetch, fetch_sync
    from plugin.pipeline.searcher import Searcher, search, search_sync
    from plugin.settings import Settings
    from plugin.surfaces.render import render_for_model


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        module = importlib.import_module(module_name)
        value = getattr(module, attribute)
        if name in _CHECKED:  # arguments that do not fit: SearchError(invalid_parameter), never TypeError
            from plugin.errors import FetchError, checked_arguments

            value = checked_arguments(value, like=getattr(module, _CHECKED[name]), error=FetchError)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'plugin' has no attribute {name!r}")
